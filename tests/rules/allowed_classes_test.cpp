#include "rules/allowed_classes.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace allowed_classes_test {
namespace {

TEST_CASE("rule GPU003: the tenant must allow the pod's class", "[rules][GPU003]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_allowed_classes_rule();
  REQUIRE(rule->id() == "GPU003");
  const std::string gpu = container("trainer", "", R"({"nvidia.com/gpu":"1"})");
  const std::string kAnnotation = "metadata.annotations[\"gpuadmit.io/class\"]";
  run_cases(
      *rule, policy,
      {
          {"an allowed class passes",
           "ml-a",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"l4"})"),
           {}},
          {"the tenant's default class passes", "ml-a", make_pod(gpu), {}},
          {"a class outside allowedClasses",
           "ml-a",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"mig-single"})"),
           {kAnnotation +
            " | class mig-single is not allowed for tenant ml-team; set gpuadmit.io/class to one "
            "of: a100, mig, l4, t4"}},
          {"a class given as a label is reported at the label",
           "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
               "labels":{"gpuadmit.io/class":"v100"}},"spec":{"containers":[)" +
               gpu + "]}}",
           {"metadata.labels[\"gpuadmit.io/class\"] | class v100 is not allowed for tenant "
            "ml-team; set gpuadmit.io/class to one of: a100, mig, l4, t4"}},
          {"a tenant with an empty allowedClasses may not use GPUs",
           "web",
           make_pod(gpu),
           {"spec | tenant web may not use GPUs (its allowedClasses is empty); remove the GPU "
            "requests, or ask the platform team to allow a class"}},
          {"a non-GPU pod of such a tenant passes",
           "web",
           make_pod(container("web", R"({"cpu":"1","nvidia.com/gpu":"0"})")),
           {}},
          {"no class resolved for a restricted tenant",
           "research",
           make_pod(gpu),
           {kAnnotation +
            " | no GPU class resolved for this pod; set gpuadmit.io/class to one of the classes "
            "tenant research may use: l4, a100"}},
          {"a class resolved from the pod's nodeSelector",
           "research",
           make_pod(gpu, R"("nodeSelector":{"nvidia.com/gpu.product":"Tesla-T4"})"),
           {kAnnotation +
            " | class t4 is not allowed for tenant research; set gpuadmit.io/class to one of: "
            "l4, a100"}},
          {"an unset allowedClasses allows every class",
           "open",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"v100"})"),
           {}},
          {"a namespace of no tenant may not use GPUs",
           "default",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"v100"})"),
           {"spec | namespace default belongs to no tenant of the policy; it may not use GPUs: "
            "ask the platform team for a tenant whose namespaces match it, or a catch-all tenant "
            "(namespaces: [\".*\"]) last in spec.tenants"}},
          {"a Deployment of no tenant: at its template",
           "team-x",
           make_deployment(gpu),
           {"spec.template.spec | namespace team-x belongs to no tenant of the policy; it may "
            "not use GPUs: ask the platform team for a tenant whose namespaces match it, or a "
            "catch-all tenant (namespaces: [\".*\"]) last in spec.tenants"}},
          {"a non-GPU pod of no tenant passes",
           "default",
           make_pod(container("web", R"({"cpu":"1"})")),
           {}},
          {"an unknown class is left to GPU004",
           "ml-a",
           make_pod(gpu, "", R"({"gpuadmit.io/class":"h200"})"),
           {}},
          {"template annotations are reported with the template path",
           "ml-a",
           make_deployment(gpu, "", R"({"gpuadmit.io/class":"v100"})"),
           {"spec.template.metadata.annotations[\"gpuadmit.io/class\"] | class v100 is not "
            "allowed for tenant ml-team; set gpuadmit.io/class to one of: a100, mig, l4, t4"}},
      });
}

}  // namespace
}  // namespace allowed_classes_test
}  // namespace gpuadmit::testing
