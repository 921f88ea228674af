// The policy fields of GPU visibility (enforcement.gpuVisibility, nvidiaRuntimeClasses) and
// Kueue queues (tenants[].queue): loading, errors with file:line:column, and the actions.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/compiled_policy.h"
#include "policies/loader.h"

namespace gpuadmit {
namespace visibility_and_queue_test {
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  nvidiaRuntimeClasses: [nvidia-ctk]
  tenants:
    - name: a
      namespaces: [a]
      queue: {name: team-a, require: true}
    - name: b
      namespaces: [b]
      queue: {require: true}
    - name: c
      namespaces: [c]
  enforcement:
    gpuVisibility: warn
)YAML";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::vector<std::string> errors_of(const std::string& yaml) {
  PolicyLoadResult r = load_policy(yaml, "policy.yaml");
  std::vector<std::string> out;
  for (const PolicyError& e : r.errors) out.push_back(e.to_string());
  return out;
}

TEST_CASE("policy: gpuVisibility, nvidiaRuntimeClasses and tenant queues load",
          "[policy][loader][queue]") {
  PolicyLoadResult r = load_policy(kPolicy, "policy.yaml");
  REQUIRE(r.ok());
  const Policy& p = *r.policy;
  CHECK(p.enforcement.gpu_visibility == Action::kWarn);
  CHECK(p.nvidia_runtime_classes == std::vector<std::string>{"nvidia-ctk"});
  REQUIRE(p.tenants.size() == 3);
  REQUIRE(p.tenants[0].queue.has_value());
  CHECK(p.tenants[0].queue->name == "team-a");
  CHECK(p.tenants[0].queue->require);
  REQUIRE(p.tenants[1].queue.has_value());
  CHECK(p.tenants[1].queue->name.empty());
  CHECK(p.tenants[1].queue->require);
  CHECK_FALSE(p.tenants[2].queue.has_value());

  auto compiled = CompiledPolicy::compile(*r.policy);
  CHECK(compiled->action_for("GPU024", Action::kDeny) == Action::kWarn);
  for (const char* name : {"nvidia", "nvidia-cdi", "nvidia-legacy", "nvidia-ctk"}) {
    CHECK(compiled->is_nvidia_runtime_class(name));
  }
  CHECK_FALSE(compiled->is_nvidia_runtime_class("runc"));
}

TEST_CASE("policy: gpuVisibility defaults to fix, which denies GPU024", "[policy][loader]") {
  PolicyLoadResult r = load_policy(
      replace(kPolicy, "    gpuVisibility: warn\n", "    fragmentation: warn\n"), "p.yaml");
  REQUIRE(r.ok());
  CHECK(r.policy->enforcement.gpu_visibility == Action::kFix);
  auto compiled = CompiledPolicy::compile(*r.policy);
  CHECK(compiled->action_for("GPU024", Action::kDeny) == Action::kDeny);
  r = load_policy(
      replace(kPolicy, "gpuVisibility: warn", "gpuVisibility: fix\n    rules: {GPU024: off}"),
      "p.yaml");
  REQUIRE(r.ok());
  CHECK(CompiledPolicy::compile(*r.policy)->action_for("GPU024", Action::kDeny) == Action::kOff);
}

TEST_CASE("policy: visibility and queue errors are located", "[policy][loader][queue]") {
  struct Case {
    const char* name;
    const char* from;
    const char* to;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"gpuVisibility enum", "gpuVisibility: warn", "gpuVisibility: strip",
       "spec.enforcement.gpuVisibility: invalid value \"strip\": must be one of fix, deny, warn, "
       "off (policy.yaml:16:20)"},
      {"runtime class name", "[nvidia-ctk]", "[Nvidia_CTK]",
       "spec.nvidiaRuntimeClasses[0]: invalid RuntimeClass name \"Nvidia_CTK\": must be a "
       "lowercase DNS subdomain such as nvidia-cdi (policy.yaml:5:26)"},
      {"runtime classes not a list", "[nvidia-ctk]", "nvidia-ctk",
       "spec.nvidiaRuntimeClasses: must be a list, got \"nvidia-ctk\" (policy.yaml:5:25)"},
      {"queue name not a label value", "{name: team-a, require: true}",
       "{name: Team_A, require: true}",
       "spec.tenants[0].queue.name: invalid LocalQueue name \"Team_A\": must be a lowercase DNS "
       "subdomain of at most 63 characters (it is written as the kueue.x-k8s.io/queue-name "
       "label) (policy.yaml:9:21)"},
      {"queue name empty", "{name: team-a, require: true}", "{name: \"\"}",
       "spec.tenants[0].queue.name: must not be empty (policy.yaml:9:21)"},
      {"queue require not a boolean", "{require: true}", "{require: yes}",
       "spec.tenants[1].queue.require: must be true or false, got \"yes\" (policy.yaml:12:24)"},
      {"queue with neither field", "{require: true}", "{}",
       "spec.tenants[1].queue: set name (the tenant's LocalQueue), require: true, or both "
       "(policy.yaml:12:14)"},
      {"queue unknown field", "{require: true}", "{requireQueue: true}",
       "spec.tenants[1].queue.requireQueue: unknown field \"requireQueue\" (policy.yaml:12:15)"},
      {"queue not a map", "{require: true}", "team-b",
       "spec.tenants[1].queue: must be a map, got \"team-b\" (policy.yaml:12:14)"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      CHECK(errors_of(replace(kPolicy, c.from, c.to)) == std::vector<std::string>{c.error});
    }
  }
}

}  // namespace
}  // namespace visibility_and_queue_test
}  // namespace gpuadmit
