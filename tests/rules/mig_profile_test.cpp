#include "rules/mig_profile.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace mig_profile_test {
namespace {

std::string res(std::string_view name, std::string_view resource, std::string_view n = "1") {
  const std::string q = "{\"" + std::string(resource) + "\":\"" + std::string(n) + "\"}";
  return container(name, q, q);
}

std::string on(std::string_view cls, std::string_view profile = "") {
  std::string a = "{\"gpuadmit.io/class\":\"" + std::string(cls) + "\"";
  if (!profile.empty()) a += ",\"gpuadmit.io/mig-profile\":\"" + std::string(profile) + "\"";
  return a + "}";
}

TEST_CASE("rule GPU007: MIG profiles must be offered by the class", "[rules][GPU007]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_mig_profile_rule();
  REQUIRE(rule->id() == "GPU007");
  const std::string kProfilePath = "metadata.annotations[\"gpuadmit.io/mig-profile\"]";
  const std::string kReq0 = "spec.containers[0].resources.requests";
  run_cases(
      *rule, policy,
      {
          {"a class profile (after the mixed-strategy rename) passes",
           "open",
           make_pod(res("a", "nvidia.com/mig-1g.10gb"), "", on("mig", "1g.10gb")),
           {}},
          {"an explicit MIG resource of a class profile passes",
           "open",
           make_pod(res("a", "nvidia.com/mig-2g.20gb"), "", on("mig")),
           {}},
          {"a +me profile is written .me in the resource name",
           "open",
           make_pod(res("a", "nvidia.com/mig-1g.10gb.me"), "", on("mig")),
           {}},
          {"a profile the class does not offer is reported once, at the setting",
           "open",
           make_pod(res("a", "nvidia.com/mig-4g.40gb"), "", on("mig", "4g.40gb")),
           {kProfilePath +
            " | gpuadmit.io/mig-profile 4g.40gb is not a MIG profile of class mig; use one of: "
            "1g.10gb, 2g.20gb, 3g.40gb, 1g.10gb+me"}},
          {"an explicit MIG resource the class does not offer",
           "open",
           make_pod(res("a", "nvidia.com/mig-7g.80gb"), "", on("mig")),
           {kReq0 +
            "[\"nvidia.com/mig-7g.80gb\"] | container a: nvidia.com/mig-7g.80gb 1 is not a MIG "
            "profile of class mig; use one of: nvidia.com/mig-1g.10gb, nvidia.com/mig-2g.20gb, "
            "nvidia.com/mig-3g.40gb, nvidia.com/mig-1g.10gb.me"}},
          {"a MIG profile on a class that is not MIG-partitioned",
           "open",
           make_pod(res("a", "nvidia.com/gpu"), "", on("a100", "1g.10gb")),
           {kProfilePath +
            " | class a100 is not MIG-partitioned: remove gpuadmit.io/mig-profile 1g.10gb, or "
            "choose a MIG class (mig, mig-single)"}},
          {"a MIG resource on a class that is not MIG-partitioned",
           "open",
           make_pod(res("a", "nvidia.com/gpu") + "," + res("b", "nvidia.com/mig-1g.10gb", "2"), "",
                    on("a100")),
           {"spec.containers[1].resources.requests[\"nvidia.com/mig-1g.10gb\"] | container b: "
            "nvidia.com/mig-1g.10gb 2 asks for a MIG slice, but class a100 is not "
            "MIG-partitioned; ask for nvidia.com/gpu instead, or choose a MIG class (mig, "
            "mig-single)"}},
          {"the single strategy offers MIG devices as nvidia.com/gpu",
           "open",
           make_pod(res("a", "nvidia.com/gpu"), "", on("mig-single", "3g.40gb")),
           {}},
          {"an explicit MIG resource on a single-strategy class",
           "open",
           make_pod(res("a", "nvidia.com/mig-1g.10gb"), "", on("mig-single")),
           {kReq0 + "[\"nvidia.com/mig-1g.10gb\"] | container a: nvidia.com/mig-1g.10gb 1: class "
                    "mig-single uses the MIG single strategy, whose nodes offer MIG devices as "
                    "nvidia.com/gpu; ask for nvidia.com/gpu with gpuadmit.io/mig-profile 1g.10gb"}},
          {"a profile outside a single-strategy class",
           "open",
           make_pod(res("a", "nvidia.com/gpu"), "", on("mig-single", "2g.20gb")),
           {kProfilePath +
            " | gpuadmit.io/mig-profile 2g.20gb is not a MIG profile of class mig-single; use "
            "one of: 1g.10gb, 3g.40gb"}},
          {"a zero MIG quantity is not a MIG request",
           "open",
           make_pod(container("a", R"({"nvidia.com/gpu":"1","nvidia.com/mig-1g.10gb":"0"})"), "",
                    on("a100")),
           {}},
          {"a non-GPU pod is not checked",
           "open",
           make_pod(container("web", R"({"cpu":"1"})"), "", on("a100", "1g.10gb")),
           {}},
      });
}

}  // namespace
}  // namespace mig_profile_test
}  // namespace gpuadmit::testing
