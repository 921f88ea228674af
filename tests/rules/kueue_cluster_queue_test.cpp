#include "rules/kueue_cluster_queue.h"

#include "tests/rules/config_rule_util.h"

namespace gpuadmit::testing {
namespace kueue_cluster_queue_test {
namespace {

// Three classes, each asking for GPUs under another name after gpuadmit's renaming
// (mutators/resource_names.cc): whole GPUs, MIG mixed profiles (k8s-device-plugin
// nvidia.com/mig-<profile>), time-slicing with renameByDefault (nvidia.com/gpu.shared).
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
    mig:
      nodeSelector: {nvidia.com/mig.config: [all-1g.10gb]}
      mig: {strategy: mixed, profiles: [1g.10gb, 2g.20gb]}
    t4:
      nodeSelector: {nvidia.com/gpu.product: [Tesla-T4]}
      timeSlicing: {replicas: 4, renameByDefault: true}
  tenants:
    - name: ml
      namespaces: [ml]
      quota: {gpus: 16}
    - name: research
      namespaces: [research]
)YAML";

// The run's ResourceFlavors and LocalQueues. Kueue matches a pod against only the labels a
// flavor names (site/content/en/docs/concepts/resource_flavor.md; flavorassigner.go
// checkFlavorForPodSets), so default-flavor, without labels, fits every pod.
KueueRunObjects run_objects() {
  KueueRunObjects run;
  run.flavor_labels["a100"] = Json{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};
  run.flavor_labels["mig"] = Json{{"nvidia.com/mig.config", "all-1g.10gb"}};
  run.flavor_labels["t4"] = Json{{"nvidia.com/gpu.product", "Tesla-T4"}};
  run.flavor_labels["default-flavor"] = Json::object();
  run.local_queues["ml/train"] = {"ml", "train", "gpu-queue"};
  run.local_queues["research/lab"] = {"research", "lab", "gpu-queue"};
  return run;
}

// A ClusterQueue as Kueue's samples write it (site/static/examples/admin/
// single-clusterqueue-setup.yaml): resourceGroups of coveredResources and flavors.
Json queue(const std::string& name, const std::string& groups, const std::string& extra = "",
           const std::string& api = "v1beta2") {
  return yaml_object(
      "apiVersion: kueue.x-k8s.io/" + api + "\nkind: ClusterQueue\nmetadata: {name: " + name +
      "}\nspec:\n  namespaceSelector: {}\n" + extra + "  resourceGroups: " + groups + "\n");
}

// Every violation as "<severity> <path> | <message>".
std::vector<std::string> judge(const DocumentRule& rule, const PolicyPtr& policy,
                               const KueueRunObjects* run, const Json& object) {
  std::vector<Violation> out, warnings;
  rule.check(object, DocumentContext{policy.get(), "", run, &warnings}, out);
  std::vector<std::string> lines;
  for (const Violation& v : out) lines.push_back("deny " + v.path + " | " + v.message);
  for (const Violation& v : warnings) lines.push_back("warn " + v.path + " | " + v.message);
  return lines;
}

const std::string kA100Gpu =
    "[{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: a100, resources: [{name: cpu, "
    "nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 8}]}]}]";

std::string never(const std::string& name) {
  return ", which they request: Kueue never admits them (\"resource " + name +
         " unavailable in ClusterQueue\", or no flavor matching their node affinity); add ";
}

TEST_CASE("rule GPU034: a Kueue ClusterQueue covers its classes' GPU resources",
          "[rules][GPU034]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_kueue_cluster_queue_rule();
  const KueueRunObjects run = run_objects();
  REQUIRE(rule->id() == "GPU034");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("kueue.x-k8s.io/v1beta1", "ClusterQueue"));
  CHECK(rule->handles("kueue.x-k8s.io/v1beta2", "ClusterQueue"));
  CHECK_FALSE(rule->handles("kueue.x-k8s.io/v1beta2", "ResourceFlavor"));

  struct Case {
    std::string name;
    Json object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"whole GPUs covered under the class's flavor", queue("q", kA100Gpu), {}},
      {"the class's flavor quotes no GPU",
       queue("q",
             "[{coveredResources: [cpu, memory], flavors: [{name: a100, resources: [{name: cpu, "
             "nominalQuota: 64}, {name: memory, nominalQuota: 512Gi}]}]}]"),
       {"deny spec.resourceGroups[0].flavors[0].resources | ClusterQueue q: flavor a100 holds "
        "class a100's workloads (its ResourceFlavor selects the class's nodes), but no flavor of "
        "the queue that the class's pods fit covers nvidia.com/gpu" +
        never("nvidia.com/gpu") +
        "nvidia.com/gpu to the coveredResources and to flavor a100's resources"}},
      {"one MIG profile of two; whole GPUs may be asked of a mixed class",
       queue("q",
             "[{coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.10gb], flavors: [{name: mig, "
             "resources: [{name: nvidia.com/gpu, nominalQuota: 1}, {name: nvidia.com/mig-1g.10gb, "
             "nominalQuota: 14}]}]}]"),
       {"deny spec.resourceGroups[0].flavors[0].resources | ClusterQueue q: flavor mig holds "
        "class mig's workloads (its ResourceFlavor selects the class's nodes), but no flavor of "
        "the queue that the class's pods fit covers nvidia.com/mig-2g.20gb" +
        never("nvidia.com/mig-2g.20gb") +
        "nvidia.com/mig-2g.20gb to the coveredResources and to flavor mig's resources"}},
      {"a renamed time-sliced class quoted under its old name",
       queue("q",
             "[{coveredResources: [nvidia.com/gpu], flavors: [{name: t4, resources: [{name: "
             "nvidia.com/gpu, nominalQuota: 16}]}]}]"),
       {"deny spec.resourceGroups[0].flavors[0].resources | ClusterQueue q: flavor t4 holds "
        "class t4's workloads (its ResourceFlavor selects the class's nodes), but no flavor of "
        "the queue that the class's pods fit covers nvidia.com/gpu.shared" +
            never("nvidia.com/gpu.shared") +
            "nvidia.com/gpu.shared to the coveredResources and to flavor t4's resources",
        "warn spec.resourceGroups[0].flavors[0].resources[0].name | ClusterQueue q: flavor t4 "
        "holds class t4's workloads, whose pods never request nvidia.com/gpu (gpuadmit has them "
        "request nvidia.com/gpu.shared): this quota is never used; quote nvidia.com/gpu.shared "
        "instead"}},
      {"GPUs covered in another group by a flavor without labels",
       queue("q",
             "[{coveredResources: [cpu], flavors: [{name: a100, resources: [{name: cpu, "
             "nominalQuota: 64}]}]}, {coveredResources: [nvidia.com/gpu], flavors: [{name: "
             "default-flavor, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]"),
       {}},
      {"GPUs covered by a flavor the run does not show",
       queue("q",
             "[{coveredResources: [cpu], flavors: [{name: a100, resources: [{name: cpu, "
             "nominalQuota: 64}]}]}, {coveredResources: [nvidia.com/gpu], flavors: [{name: "
             "spot, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]"),
       {}},
      {"GPUs covered only by another class's flavor",
       queue("q",
             "[{coveredResources: [cpu], flavors: [{name: a100, resources: [{name: cpu, "
             "nominalQuota: 64}]}]}, {coveredResources: [nvidia.com/gpu], flavors: [{name: mig, "
             "resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]"),
       {"deny spec.resourceGroups[0].flavors[0].resources | ClusterQueue q: flavor a100 holds "
        "class a100's workloads (its ResourceFlavor selects the class's nodes), but no flavor of "
        "the queue that the class's pods fit covers nvidia.com/gpu" +
            never("nvidia.com/gpu") +
            "nvidia.com/gpu to the coveredResources and to flavor a100's resources",
        "deny spec.resourceGroups[1].flavors[0].resources | ClusterQueue q: flavor mig holds "
        "class mig's workloads (its ResourceFlavor selects the class's nodes), but no flavor of "
        "the queue that the class's pods fit covers nvidia.com/mig-1g.10gb, "
        "nvidia.com/mig-2g.20gb" +
            never("nvidia.com/mig-1g.10gb") +
            "nvidia.com/mig-1g.10gb, nvidia.com/mig-2g.20gb to the coveredResources and to "
            "flavor mig's resources"}},
      {"malformed", queue("q", "x"), {}},
      {"no spec", yaml_object("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"), {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(judge(*rule, policy, &run, c.object) == c.expected); }
  }
  // Without the run's objects no flavor maps to a class: nothing to judge.
  CHECK(judge(*rule, policy, nullptr, cases[1].object).empty());
  // Without a place for warnings, they are the rule's own findings.
  std::vector<Violation> out;
  rule->check(cases[3].object, DocumentContext{policy.get(), "", &run, nullptr}, out);
  CHECK(out.size() == 2);
}

// ResourceQuota caps what a namespace's pods request (docs/install.md "What render makes");
// Kueue admits up to nominalQuota, plus, in a cohort, borrowingLimit more or, without it, any
// unused quota of the cohort (apis/kueue/v1beta2/clusterqueue_types.go ResourceQuota:
// "If null, it means that there is no borrowing limit").
TEST_CASE("rule GPU034: a ClusterQueue admits no more GPUs than its tenants' quota",
          "[rules][GPU034]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_kueue_cluster_queue_rule();
  const KueueRunObjects run = run_objects();
  const std::string tail =
      ", more than tenant ml's quota.gpus of 16, and LocalQueue ml/train sends namespace ml's "
      "workloads to it: Kueue admits jobs there whose pods the namespace's ResourceQuota "
      "(gpuadmit render: requests.<GPU resource>: 16) then refuses at creation (the jobs "
      "admitted, their pods Forbidden); lower the GPU quota to 16";
  auto gpus = [](const std::string& quota) {
    return "[{coveredResources: [nvidia.com/gpu], flavors: [{name: a100, resources: [{name: "
           "nvidia.com/gpu, " +
           quota + "}]}]}]";
  };
  struct Case {
    std::string name;
    Json object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"within the quota", queue("gpu-queue", gpus("nominalQuota: 16")), {}},
      {"a queue no LocalQueue uses", queue("other", gpus("nominalQuota: 32")), {}},
      {"over the quota",
       queue("gpu-queue",
             "[{coveredResources: [nvidia.com/gpu, nvidia.com/gpu.shared], flavors: "
             "[{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 24}, "
             "{name: nvidia.com/gpu.shared, nominalQuota: 0}]}, {name: t4, "
             "resources: [{name: nvidia.com/gpu, nominalQuota: 0}, {name: "
             "nvidia.com/gpu.shared, nominalQuota: \"8\"}]}]}]"),
       {"warn spec.resourceGroups[0].flavors[0].resources[1].name | ClusterQueue gpu-queue: "
        "flavor a100 holds class a100's workloads, whose pods never request nvidia.com/gpu.shared "
        "(gpuadmit has them request nvidia.com/gpu): this quota is never used; quote "
        "nvidia.com/gpu instead",
        "warn spec.resourceGroups[0].flavors[1].resources[0].name | ClusterQueue gpu-queue: "
        "flavor t4 holds class t4's workloads, whose pods never request nvidia.com/gpu (gpuadmit "
        "has them request nvidia.com/gpu.shared): this quota is never used; quote "
        "nvidia.com/gpu.shared instead",
        "warn spec.resourceGroups | ClusterQueue gpu-queue has a GPU nominalQuota of 32 "
        "(nvidia.com/gpu 24 in flavor a100; nvidia.com/gpu.shared 0 in flavor a100; "
        "nvidia.com/gpu 0 in flavor t4; nvidia.com/gpu.shared 8 in flavor t4)" +
            tail + ", or raise the tenant's quota.gpus"}},
      {"borrowing over the quota",
       queue("gpu-queue", gpus("nominalQuota: 8, borrowingLimit: 16"), "  cohortName: pool\n"),
       {"warn spec.resourceGroups | ClusterQueue gpu-queue has a GPU nominalQuota of 8 "
        "(nvidia.com/gpu 8 in flavor a100) and may borrow 16 more from cohort pool "
        "(borrowingLimit), 24 in all" +
        tail + " with borrowingLimit, or raise the tenant's quota.gpus"}},
      {"borrowing without limit (v1beta1's cohort)",
       queue("gpu-queue", gpus("nominalQuota: 8"), "  cohort: pool\n", "v1beta1"),
       {"warn spec.resourceGroups | ClusterQueue gpu-queue has a GPU nominalQuota of 8 "
        "(nvidia.com/gpu 8 in flavor a100) and may borrow GPUs from cohort pool without limit (a "
        "GPU resource without borrowingLimit)" +
        tail + " with borrowingLimit, or raise the tenant's quota.gpus"}},
      {"borrowing up to the quota",
       queue("gpu-queue", gpus("nominalQuota: 8, borrowingLimit: 8"), "  cohortName: pool\n"),
       {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(judge(*rule, policy, &run, c.object) == c.expected); }
  }
}

}  // namespace
}  // namespace kueue_cluster_queue_test
}  // namespace gpuadmit::testing
