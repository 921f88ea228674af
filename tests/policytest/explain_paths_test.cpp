// The policy paths behind findings and mutations (docs/explain.md): policy_path helpers, the
// values lint/explain.cc reads from the policy document, and the records an evaluation carries.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "engine/pipeline.h"
#include "lint/explain.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "policies/policy_path.h"
#include "rules/all_rules.h"

namespace gpuadmit {
namespace explain_paths_test {
namespace {

const std::string kAks = std::string(GPUADMIT_SOURCE_DIR) + "/policies/examples/aks.yaml";

TEST_CASE("explain: policy_path names tenants by name and brackets dotted keys") {
  Tenant t;
  t.name = "ml-team";
  CHECK(policy_path::tenant(t) + ".limits.maxGPUsPerPod" ==
        "spec.tenants[ml-team].limits.maxGPUsPerPod");
  CHECK(policy_path::cls("h100") == "spec.classes.h100");
  CHECK(policy_path::cls("a100.80") == "spec.classes[a100.80]");
  CHECK(policy_path::key("spec.classes.a.nodeSelector", "nvidia.com/gpu.product") ==
        "spec.classes.a.nodeSelector[nvidia.com/gpu.product]");
  CHECK(policy_path::index("spec.classes.a.taints", 1) == "spec.classes.a.taints[1]");
}

TEST_CASE("explain: values are read from the policy document") {
  const std::optional<Json> doc = lint::policy_document(kAks);
  REQUIRE(doc);
  struct Row {
    std::string path, text;
  };
  const std::vector<Row> rows = {
      {"spec.tenants[data-science].limits.maxGPUsPerPod",
       "spec.tenants[data-science].limits.maxGPUsPerPod = 8"},
      {"spec.tenants[1].defaultClass", "spec.tenants[1].defaultClass = \"t4\""},
      {"spec.classes.t4.taints[0]",
       "spec.classes.t4.taints[0] = {\"key\":\"sku\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}"},
      {"spec.classes.t4.nodeSelector[kubernetes.azure.com/agentpool]",
       "spec.classes.t4.nodeSelector[kubernetes.azure.com/agentpool] = [\"gput4\"]"},
      {"spec.tenants[nobody].limits", "spec.tenants[nobody].limits"},
      {"spec.enforcement.rules.GPU006", "spec.enforcement.rules.GPU006"},
      {"", "no policy field (the rule's built-in default)"},
  };
  for (const Row& row : rows) CHECK(lint::explain_text(*doc, row.path) == row.text);
  CHECK_FALSE(lint::policy_document("/nonexistent/policy.yaml"));
  CHECK(lint::policy_document("")->at("kind") == "GPUPolicy");  // the embedded default
}

TEST_CASE("explain: an evaluation records the policy field of each mutation and finding") {
  const CompiledLoadResult loaded = load_compiled_policy(kAks);
  REQUIRE(loaded.policy);
  const Pipeline pipeline(default_mutators(), default_rules());
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"gpuadmit.io/workload":"training"}},"spec":{"containers":[{"name":"c",
      "resources":{"requests":{"memory":"1Gi"},"limits":{"nvidia.com/gpu":"1"}}}]}})");
  const Evaluation e = pipeline.evaluate(pod, {.ns = "ds-x"}, *loaded.policy);
  std::vector<std::pair<std::string, std::string>> records;
  for (const MutationRecord& r : e.mutation_records)
    records.emplace_back(r.mutation, r.policy_path);
  CHECK(records == std::vector<std::pair<std::string, std::string>>{
                       {"requests-equal-limits", "spec.enforcement.requestsEqualLimits"},
                       {"class", "spec.tenants[data-science].defaultClass"},
                       {"tolerations", "spec.classes.a100-single.taints[0]"},
                       {"node-affinity",
                        "spec.classes.a100-single.nodeSelector[kubernetes.azure.com/accelerator]"},
                       {"node-affinity",
                        "spec.classes.a100-single.nodeSelector[kubernetes.azure.com/agentpool]"},
                       {"defaults", "spec.tenants[data-science].defaults.perGPU.cpu"},
                       {"priority", "spec.tenants[data-science].priority.byWorkload.training"}});
  CHECK(e.tenant == "data-science");

  // Findings: the rule's field; else the enforcement field that set the action; else none.
  const Json big = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "annotations":{"gpuadmit.io/class":"a100"}},"spec":{"priorityClassName":"x","containers":[
      {"name":"c","resources":{"limits":{"nvidia.com/gpu":"9"}}}]}})");
  const Evaluation d = pipeline.evaluate(big, {.ns = "app-x"}, *loaded.policy);
  std::vector<std::pair<std::string, std::string>> findings;
  for (const Finding& f : d.findings) findings.emplace_back(f.rule, f.policy_path);
  CHECK(findings == std::vector<std::pair<std::string, std::string>>{
                        {"GPU003", "spec.tenants[apps].allowedClasses"},
                        {"GPU005", "spec.tenants[apps].limits.maxGPUsPerContainer"},
                        {"GPU005", "spec.tenants[apps].limits.maxGPUsPerPod"},
                        {"GPU006", "spec.classes.a100.gpusPerNode"}});
  const Evaluation p = pipeline.evaluate(big, {.ns = "ds-x"}, *loaded.policy);
  REQUIRE(p.findings.size() == 4);
  CHECK(p.findings[3].rule == "GPU010");
  CHECK(p.findings[3].policy_path == "spec.tenants[data-science].priority.allowed");
  CHECK(e.tenant == "data-science");
  // aks.yaml's last tenant is its catch-all (namespaces [".*"], no GPUs).
  CHECK(pipeline.evaluate(big, {.ns = "nowhere"}, *loaded.policy).tenant == "everyone-else");
}

}  // namespace
}  // namespace explain_paths_test
}  // namespace gpuadmit
