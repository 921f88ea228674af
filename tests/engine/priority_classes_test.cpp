// engine/priority_classes.h: which class counts as unset, and how a policy's priorityClasses
// are reported when the cluster's differ.

#include "engine/priority_classes.h"

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"
#include "tests/support/fleet_policy.h"
#include "tests/support/priority_classes.h"

namespace gpuadmit::testing {
namespace priority_classes_test {
namespace {

TEST_CASE("priority classes: the plugin's default is the lowest-valued globalDefault class") {
  CHECK_FALSE(lowest_global_default({{"a", 5, "Never", false}}).has_value());
  // Two defaults can exist after a race between creations (admission.go getDefaultPriorityClass).
  const auto d = lowest_global_default({{"high", 100, "PreemptLowerPriority", true},
                                        {"low", -5, "Never", true},
                                        {"x", -9, "", false}});
  REQUIRE(d.has_value());
  CHECK(d->name == "low");
  CHECK(d->value == -5);
}

TEST_CASE("priority classes: what counts as unset, with and without the cluster's classes") {
  const PolicyPtr policy = policy_from_yaml(fleet_policy());  // declares cluster-default
  const FakePriorityClasses cluster({{"standard", 0, "PreemptLowerPriority", true}});
  const FakePriorityClasses unsynced({{"standard", 0, "PreemptLowerPriority", true}}, false);
  CHECK(is_global_default_class("cluster-default", *policy, nullptr));
  CHECK_FALSE(is_global_default_class("standard", *policy, nullptr));
  CHECK(is_global_default_class("standard", *policy, &cluster));
  CHECK_FALSE(is_global_default_class("cluster-default", *policy, &cluster));
  CHECK(is_global_default_class("cluster-default", *policy, &unsynced));  // not read yet
  CHECK_FALSE(is_global_default_class("", *policy, &cluster));
}

TEST_CASE("priority classes: a policy that disagrees with the cluster, one line per difference") {
  const PolicyPtr policy = policy_from_yaml(fleet_policy());
  // Declared: gpu-inference 100000, gpu-training 10000, gpu-batch 1000 Never, cluster-default 0
  // globalDefault.
  const FakePriorityClasses same({{"gpu-inference", 100000, "PreemptLowerPriority", false},
                                  {"gpu-training", 10000, "PreemptLowerPriority", false},
                                  {"gpu-batch", 1000, "Never", false},
                                  {"cluster-default", 0, "PreemptLowerPriority", true}});
  CHECK(priority_class_disagreements(*policy, same).empty());

  const FakePriorityClasses other({{"gpu-training", 15000, "PreemptLowerPriority", false},
                                   {"gpu-batch", 1000, "PreemptLowerPriority", false},
                                   {"cluster-default", 0, "PreemptLowerPriority", false},
                                   {"standard", 0, "PreemptLowerPriority", true}});
  CHECK(priority_class_disagreements(*policy, other) ==
        std::vector<std::string>{
            "PriorityClass gpu-inference: not in the cluster; pods are not given it",
            "PriorityClass gpu-training: the policy declares value 10000, the cluster has "
            "15000; pods get the cluster's",
            "PriorityClass gpu-batch: the policy declares preemptionPolicy Never, the cluster "
            "has PreemptLowerPriority; pods get the cluster's",
            "globalDefault: the policy declares cluster-default, the cluster's is standard; the "
            "cluster's counts as unset"});
}

}  // namespace
}  // namespace priority_classes_test
}  // namespace gpuadmit::testing
