// The policy loader: every error kind with its exact message and location, several errors
// together, hostile input, and the shipped policies.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "policies/loader.h"

namespace gpuadmit {
namespace loader_test {
namespace {

// A valid policy; each test case below breaks one thing in it (line numbers matter: the
// expected locations are in this text).
constexpr const char* kValid = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: fleet
spec:
  gpuResources: [amd.com/gpu]
  classes:
    a100:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpusPerNode: 8
      nodes: 2
      mig:
        strategy: mixed
        profiles: [1g.10gb, 3g.40gb]
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      timeSlicing: {replicas: 4, renameByDefault: true}
  priorityClasses:
    gpu-batch: {value: 1000, preemptionPolicy: Never}
    gpu-training: {value: 10000}
  tenants:
    - name: ml
      namespaces: ["ml-.*", research]
      defaultClass: a100
      allowedClasses:
        - a100
        - l4
      defaults:
        request: {cpu: "4", memory: 16Gi}
        perGPU: {cpu: "8"}
      limits: {maxGPUsPerContainer: 8}
      quota: {gpus: 16}
      priority:
        default: gpu-batch
        byWorkload: {training: gpu-training}
        allowed: [gpu-batch, gpu-training]
  enforcement:
    requestsEqualLimits: fix
    rules: {GPU006: warn}
    exempt: {namespaces: [kube-system]}
  workloads:
    - {apiVersion: example.com/v1, kind: Run, podSpecs: ["spec.workers[*].template.spec"]}
)YAML";

std::string repeat(std::string_view piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::vector<std::string> errors_of(const std::string& yaml) {
  PolicyLoadResult r = load_policy(yaml, "policy.yaml");
  std::vector<std::string> out;
  for (const PolicyError& e : r.errors) out.push_back(e.to_string());
  CHECK(r.policy.has_value() == r.errors.empty());
  return out;
}

TEST_CASE("policy: the reference policy loads into the model", "[policy][loader]") {
  PolicyLoadResult r = load_policy(kValid, "policy.yaml");
  for (const PolicyError& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  const Policy& p = *r.policy;
  CHECK(p.name == "fleet");
  CHECK(p.gpu_resources == std::vector<std::string>{"amd.com/gpu"});
  REQUIRE(p.classes.size() == 2);
  CHECK(p.classes[0].name == "a100");
  REQUIRE(p.classes[0].node_selector.size() == 1);
  CHECK(p.classes[0].node_selector[0].first == "nvidia.com/gpu.product");
  CHECK(p.classes[0].node_selector[0].second == std::vector<std::string>{"NVIDIA-A100-SXM4-80GB"});
  REQUIRE(p.classes[0].taints.size() == 1);
  CHECK(p.classes[0].taints[0].key == "nvidia.com/gpu");
  CHECK(p.classes[0].taints[0].value.empty());
  CHECK(p.classes[0].taints[0].effect == "NoSchedule");
  CHECK(p.classes[0].gpus_per_node == 8);
  CHECK(p.classes[0].nodes == 2);
  REQUIRE(p.classes[0].mig);
  CHECK(p.classes[0].mig->strategy == MigConfig::Strategy::kMixed);
  CHECK(p.classes[0].mig->profiles == std::vector<std::string>{"1g.10gb", "3g.40gb"});
  REQUIRE(p.classes[1].time_slicing);
  CHECK(p.classes[1].time_slicing->replicas == 4);
  CHECK(p.classes[1].time_slicing->rename_by_default);
  CHECK_FALSE(p.classes[1].time_slicing->fail_requests_greater_than_one);
  REQUIRE(p.priority_classes.size() == 2);
  CHECK(p.priority_classes[0].name == "gpu-batch");
  CHECK(p.priority_classes[0].value == 1000);
  CHECK(p.priority_classes[0].preemption_policy == "Never");
  CHECK(p.priority_classes[1].preemption_policy == "PreemptLowerPriority");
  REQUIRE(p.tenants.size() == 1);
  const Tenant& t = p.tenants[0];
  CHECK(t.namespaces == std::vector<std::string>{"ml-.*", "research"});
  CHECK(t.default_class == "a100");
  CHECK(t.allowed_classes == std::vector<std::string>{"a100", "l4"});
  REQUIRE(t.defaults.request.size() == 2);
  CHECK(t.defaults.request[1].first == "memory");
  CHECK(t.defaults.request[1].second == *Quantity::parse("16Gi"));
  CHECK(t.defaults.per_gpu.size() == 1);
  CHECK(t.limits.max_gpus_per_container == 8);
  CHECK_FALSE(t.limits.max_gpus_per_pod);
  CHECK(t.quota_gpus == 16);
  CHECK(t.priority.default_class == "gpu-batch");
  CHECK(t.priority.by_workload ==
        std::vector<std::pair<std::string, std::string>>{{"training", "gpu-training"}});
  CHECK(t.priority.allowed == std::vector<std::string>{"gpu-batch", "gpu-training"});
  CHECK(p.enforcement.requests_equal_limits == Action::kFix);
  CHECK(p.enforcement.non_gpu_on_gpu_pool == Action::kDeny);
  CHECK(p.enforcement.rules ==
        std::vector<std::pair<std::string, Action>>{{"GPU006", Action::kWarn}});
  CHECK(p.enforcement.exempt_namespaces == std::vector<std::string>{"kube-system"});
  REQUIRE(p.workloads.size() == 1);
  CHECK(p.workloads[0].pod_specs == std::vector<std::string>{"spec.workers[*].template.spec"});
}

// metadata.annotations["gpuadmit.io/generation"]: the policy author's order of versions, which
// `gpuadmit register` stamps on what it writes (kube/webhook_registration.h); other annotations
// and labels stay unused; a generation that is not a whole number is an error at its value.
TEST_CASE("policy: the gpuadmit.io/generation annotation is a whole number", "[policy][loader]") {
  CHECK(load_policy(kValid, "policy.yaml").policy->generation == 0);
  const std::string annotated =
      replace(kValid, "  name: fleet\n",
              "  name: fleet\n  annotations: {team: gpu, gpuadmit.io/generation: \"42\"}\n");
  PolicyLoadResult r = load_policy(annotated, "policy.yaml");
  REQUIRE(r.ok());
  CHECK(r.policy->generation == 42);
  for (const char* bad : {"\"-1\"", "\"4.2\"", "\"\"", "\"forty\"", "\"99999999999999999999\""}) {
    INFO(bad);
    const std::string text = replace(
        kValid, "  name: fleet\n",
        "  name: fleet\n  annotations: {gpuadmit.io/generation: " + std::string(bad) + "}\n");
    CHECK(errors_of(text) ==
          std::vector<std::string>{
              "metadata.annotations[gpuadmit.io/generation]: must be a whole number (a string "
              "such as \"7\"), not " +
              std::string(bad) + " (policy.yaml:5:41)"});
  }
  // A plain YAML number is a string value here, as every annotation's.
  PolicyLoadResult plain =
      load_policy(replace(kValid, "  name: fleet\n",
                          "  name: fleet\n  annotations: {gpuadmit.io/generation: 7}\n"),
                  "policy.yaml");
  REQUIRE(plain.ok());
  CHECK(plain.policy->generation == 7);
}

// One error kind per row: replace `from` with `to` in kValid, expect exactly `error`.
struct ErrorCase {
  const char* name;
  const char* from;
  const char* to;
  const char* error;
};

TEST_CASE("policy: each error kind is reported with its path and line:column", "[policy][loader]") {
  const std::vector<ErrorCase> cases = {
      {"wrong apiVersion", "apiVersion: gpuadmit.io/v1alpha1", "apiVersion: gpuadmit.io/v1",
       "apiVersion: unsupported value \"gpuadmit.io/v1\": must be gpuadmit.io/v1alpha1 "
       "(policy.yaml:1:13)"},
      {"missing apiVersion", "apiVersion: gpuadmit.io/v1alpha1\n", "",
       "apiVersion: required field is missing (policy.yaml:1:1)"},
      {"wrong kind", "kind: GPUPolicy", "kind: Policy",
       "kind: unsupported value \"Policy\": must be GPUPolicy (policy.yaml:2:7)"},
      {"missing metadata.name", "  name: fleet", "  labels: {team: gpu}",
       "metadata.name: required field is missing (policy.yaml:4:3)"},
      {"unknown top-level field", "spec:\n", "status: {}\nspec:\n",
       "status: unknown field \"status\" (policy.yaml:5:1)"},
      {"unknown field with a suggestion", "      gpusPerNode: 8", "      gpuPerNode: 8",
       "spec.classes.a100.gpuPerNode: unknown field \"gpuPerNode\" (did you mean \"gpusPerNode\"?) "
       "(policy.yaml:13:7)"},
      {"unknown field in a tenant", "      quota: {gpus: 16}", "      quota: {gpus: 16, cpus: 3}",
       "spec.tenants[0].quota.cpus: unknown field \"cpus\" (did you mean \"gpus\"?) "
       "(policy.yaml:35:25)"},
      {"duplicate key", "      nodes: 2", "      nodes: 2\n      nodes: 3",
       "spec.classes.a100.nodes: duplicate key \"nodes\" (first set at line 14) "
       "(policy.yaml:15:7)"},
      {"wrong type: map for a list", "  gpuResources: [amd.com/gpu]", "  gpuResources: {a: b}",
       "spec.gpuResources: must be a list, got a map (policy.yaml:6:17)"},
      {"wrong type: quoted integer", "      gpusPerNode: 8", "      gpusPerNode: \"8\"",
       "spec.classes.a100.gpusPerNode: must be an integer, got string \"8\" (policy.yaml:13:20)"},
      {"wrong type: float count", "      nodes: 2", "      nodes: 2.5",
       "spec.classes.a100.nodes: must be an integer, got \"2.5\" (policy.yaml:14:14)"},
      {"wrong type: boolean", "renameByDefault: true", "renameByDefault: yes",
       "spec.classes.l4.timeSlicing.renameByDefault: must be true or false, got \"yes\" "
       "(policy.yaml:20:51)"},
      {"wrong type: list for a string", "      defaultClass: a100", "      defaultClass: [a100]",
       "spec.tenants[0].defaultClass: must be a string, got a list (policy.yaml:27:21)"},
      {"null where a list is required", "      namespaces: [\"ml-.*\", research]",
       "      namespaces:",
       "spec.tenants[0].namespaces: must be a list, got null (policy.yaml:26:7)"},
      {"missing tenant name", "    - name: ml\n      namespaces", "    - namespaces",
       "spec.tenants[0].name: required field is missing (policy.yaml:25:7)"},
      {"unknown class in allowedClasses", "        - l4", "        - h200",
       "spec.tenants[0].allowedClasses[1]: unknown class \"h200\" (policy.yaml:30:11)"},
      {"unknown defaultClass", "      defaultClass: a100", "      defaultClass: a10",
       "spec.tenants[0].defaultClass: unknown class \"a10\" (policy.yaml:27:21)"},
      {"defaultClass not allowed", "        - a100\n", "",
       "spec.tenants[0].defaultClass: class \"a100\" is not in spec.tenants[0].allowedClasses "
       "(policy.yaml:27:21)"},
      {"unknown priority.default", "        default: gpu-batch", "        default: gpu-low",
       "spec.tenants[0].priority.default: unknown priority class \"gpu-low\" (policy.yaml:37:18)"},
      {"unknown byWorkload priority class", "{training: gpu-training}", "{training: gpu-train}",
       "spec.tenants[0].priority.byWorkload.training: unknown priority class \"gpu-train\" "
       "(policy.yaml:38:32)"},
      {"unknown allowed priority class", "allowed: [gpu-batch, gpu-training]",
       "allowed: [gpu-batch, gpu-training, gpu-x]",
       "spec.tenants[0].priority.allowed[2]: unknown priority class \"gpu-x\" (policy.yaml:39:44)"},
      {"priority.default not allowed", "allowed: [gpu-batch, gpu-training]",
       "allowed: [gpu-training]",
       "spec.tenants[0].priority.default: priority class \"gpu-batch\" is not in "
       "spec.tenants[0].priority.allowed (policy.yaml:37:18)"},
      {"invalid tenant regex", "[\"ml-.*\", research]", "[\"ml-(\", research]",
       "spec.tenants[0].namespaces[0]: invalid regular expression \"ml-(\": missing ): ml-( "
       "(policy.yaml:26:20)"},
      {"invalid exempt regex", "{namespaces: [kube-system]}", "{namespaces: [\"kube-[\"]}",
       "spec.enforcement.exempt.namespaces[0]: invalid regular expression \"kube-[\": missing ]: "
       "[ (policy.yaml:43:27)"},
      {"MIG profile syntax", "[1g.10gb, 3g.40gb]", "[1g.10gb, 3g40gb]",
       "spec.classes.a100.mig.profiles[1]: invalid MIG profile \"3g40gb\": must be <n>g.<m>gb, "
       "optionally followed by +me (e.g. 1g.10gb, 3g.40gb, 1g.10gb+me) (policy.yaml:17:29)"},
      {"MIG profile the product cannot make", "[1g.10gb, 3g.40gb]", "[1g.10gb, 3g.20gb]",
       "spec.classes.a100.mig.profiles[1]: MIG profile \"3g.20gb\" cannot be made by "
       "NVIDIA-A100-SXM4-80GB (valid: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, "
       "7g.80gb) (policy.yaml:17:29)"},
      {"empty MIG profile list", "profiles: [1g.10gb, 3g.40gb]", "profiles: []",
       "spec.classes.a100.mig.profiles: must list at least one MIG profile (policy.yaml:17:19)"},
      {"negative count", "      gpusPerNode: 8", "      gpusPerNode: -8",
       "spec.classes.a100.gpusPerNode: must not be negative, got -8 (policy.yaml:13:20)"},
      {"zero gpusPerNode", "      gpusPerNode: 8", "      gpusPerNode: 0",
       "spec.classes.a100.gpusPerNode: must be at least 1, got 0 (policy.yaml:13:20)"},
      {"negative quota", "{gpus: 16}", "{gpus: -1}",
       "spec.tenants[0].quota.gpus: must not be negative, got -1 (policy.yaml:35:21)"},
      {"mig strategy enum", "strategy: mixed", "strategy: both",
       "spec.classes.a100.mig.strategy: invalid value \"both\": must be one of mixed, single "
       "(policy.yaml:16:19)"},
      {"taint effect enum", "effect: NoSchedule}", "effect: NoScheduled}",
       "spec.classes.a100.taints[0].effect: invalid value \"NoScheduled\": must be one of "
       "NoSchedule, PreferNoSchedule, NoExecute (policy.yaml:12:41)"},
      {"missing taint key", "{key: nvidia.com/gpu, effect: NoSchedule}", "{effect: NoSchedule}",
       "spec.classes.a100.taints[0].key: required field is missing (policy.yaml:12:11)"},
      {"preemptionPolicy enum", "preemptionPolicy: Never", "preemptionPolicy: never",
       "spec.priorityClasses.gpu-batch.preemptionPolicy: invalid value \"never\": must be one of "
       "PreemptLowerPriority, Never (policy.yaml:22:48)"},
      {"missing priority value", "gpu-training: {value: 10000}", "gpu-training: {}",
       "spec.priorityClasses.gpu-training.value: required field is missing (policy.yaml:23:19)"},
      {"priority value above the user range", "{value: 10000}", "{value: 2000000000}",
       "spec.priorityClasses.gpu-training.value: must be between -2147483648 and 1000000000 "
       "(larger values are reserved for system priority classes), got 2000000000 "
       "(policy.yaml:23:27)"},
      {"requestsEqualLimits enum", "requestsEqualLimits: fix", "requestsEqualLimits: strip",
       "spec.enforcement.requestsEqualLimits: invalid value \"strip\": must be one of fix, deny, "
       "warn (policy.yaml:41:26)"},
      {"nonGpuOnGpuPool enum", "requestsEqualLimits: fix", "nonGpuOnGpuPool: fix",
       "spec.enforcement.nonGpuOnGpuPool: invalid value \"fix\": must be one of deny, strip, "
       "warn, off (policy.yaml:41:22)"},
      {"rule action enum", "{GPU006: warn}", "{GPU006: fix}",
       "spec.enforcement.rules.GPU006: invalid value \"fix\": must be one of deny, warn, off "
       "(policy.yaml:42:21)"},
      {"unknown rule id", "{GPU006: warn}", "{GPU035: warn}",
       "spec.enforcement.rules.GPU035: unknown rule \"GPU035\": rule ids are GPU001 to GPU034 "
       "(policy.yaml:42:13)"},
      {"invalid quantity", "{cpu: \"4\", memory: 16Gi}", "{cpu: \"4\", memory: 16GB}",
       "spec.tenants[0].defaults.request.memory: invalid quantity \"16GB\": must be a Kubernetes "
       "quantity such as \"4\", \"500m\" or \"16Gi\" (policy.yaml:32:37)"},
      {"negative quantity", "perGPU: {cpu: \"8\"}", "perGPU: {cpu: \"-8\"}",
       "spec.tenants[0].defaults.perGPU.cpu: must not be negative, got \"-8\" (policy.yaml:33:23)"},
      {"default request above the default limit", "        perGPU: {cpu: \"8\"}",
       "        perGPU: {cpu: \"8\"}\n        limit: {memory: 8Gi}",
       "spec.tenants[0].defaults.request.memory: default request 16Gi is above the default "
       "limit 8Gi (policy.yaml:32:37)"},
      {"timeSlicing and mig on one class", "      nodes: 2\n",
       "      nodes: 2\n      timeSlicing: {replicas: 2}\n",
       "spec.classes.a100.timeSlicing: a class cannot have both mig and timeSlicing: describe a "
       "MIG-partitioned pool and a time-sliced pool as two classes (policy.yaml:15:7)"},
      {"duplicate tenant names", "  enforcement:\n",
       "    - {name: ml, namespaces: [other]}\n  enforcement:\n",
       "spec.tenants[1].name: duplicate tenant name \"ml\" (also spec.tenants[0]) "
       "(policy.yaml:40:14)"},
      {"nodeSelector with no values", "nvidia.com/gpu.product: [NVIDIA-L4]",
       "nvidia.com/gpu.product: []",
       "spec.classes.l4.nodeSelector[nvidia.com/gpu.product]: must list at least one value (node "
       "affinity `In` needs one) (policy.yaml:19:46)"},
      {"gpuResources without a domain", "[amd.com/gpu]", "[gpu]",
       "spec.gpuResources[0]: invalid resource name \"gpu\": must be <domain>/<name>, e.g. "
       "amd.com/gpu (policy.yaml:6:18)"},
      {"invalid pod spec path", "[\"spec.workers[*].template.spec\"]", "[\"spec..template\"]",
       "spec.workloads[0].podSpecs[0]: invalid pod spec path \"spec..template\": keys separated "
       "by '.', '*' for any key, '[*]' for every list element (e.g. "
       "spec.workers[*].template.spec) (policy.yaml:45:58)"},
      {"YAML syntax error", "    l4:\n", "    l4: [\n",
       "invalid YAML: end of sequence flow not found (policy.yaml:20:7)"},
  };
  for (const ErrorCase& c : cases) {
    SECTION(c.name) {
      const auto errors = errors_of(replace(kValid, c.from, c.to));
      REQUIRE(errors == std::vector<std::string>{c.error});
    }
  }
}

TEST_CASE("policy: every error is reported at once, in file order", "[policy][loader]") {
  const std::string yaml = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: x}
spec:
  classes:
    a100:
      gpusPerNode: -1
      mig: {strategy: mixed, profiles: [1g.10gb]}
      timeSlicing: {replicas: 2}
  tenants:
    - name: t
      namespaces: ["("]
      defaultClass: h100
      allowedClasses: [a100, h200]
  enforcement:
    fragmentation: strip
)YAML";
  const std::vector<std::string> expected = {
      "spec.classes.a100.gpusPerNode: must not be negative, got -1 (p.yaml:7:20)",
      "spec.classes.a100.timeSlicing: a class cannot have both mig and timeSlicing: describe a "
      "MIG-partitioned pool and a time-sliced pool as two classes (p.yaml:9:7)",
      "spec.tenants[0].namespaces[0]: invalid regular expression \"(\": missing ): ( "
      "(p.yaml:12:20)",
      "spec.tenants[0].defaultClass: unknown class \"h100\" (p.yaml:13:21)",
      "spec.tenants[0].allowedClasses[1]: unknown class \"h200\" (p.yaml:14:30)",
      "spec.enforcement.fragmentation: invalid value \"strip\": must be one of deny, warn, off "
      "(p.yaml:16:20)",
  };
  PolicyLoadResult r = load_policy(yaml, "p.yaml");
  std::vector<std::string> got;
  for (const PolicyError& e : r.errors) got.push_back(e.to_string());
  CHECK(got == expected);
  CHECK_FALSE(r.policy);
}

TEST_CASE("policy: document-level errors", "[policy][loader]") {
  struct Case {
    const char* name;
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"empty", "",
       "the policy is empty; expected a GPUPolicy document (apiVersion: "
       "gpuadmit.io/v1alpha1, kind: GPUPolicy) (p.yaml)"},
      {"comments only", "# nothing\n",
       "the policy is empty; expected a GPUPolicy document "
       "(apiVersion: gpuadmit.io/v1alpha1, kind: GPUPolicy) "
       "(p.yaml)"},
      {"two documents", "kind: GPUPolicy\n---\nkind: GPUPolicy\n",
       "a policy file holds exactly one YAML document, found 2 (p.yaml:3:1)"},
      {"a list", "- a\n",
       "a policy is a map with apiVersion, kind, metadata and spec; got a list (p.yaml:1:1)"},
      {"a scalar", "hello\n",
       "a policy is a map with apiVersion, kind, metadata and spec; got \"hello\" (p.yaml:1:1)"},
      {"bad indentation", "a: b\n  c: d\n", "invalid YAML: illegal map value (p.yaml:2:4)"},
      // yaml-cpp 0.7's LoadAll loops forever on these, appending empty documents (issue 11).
      {"a stray comma (yaml-cpp #1040)", ",a: 1",
       "invalid YAML: did not find expected node content (found \",\") (p.yaml:1:1)"},
      {"a stray comma after a list", "- a\n, b\n",
       "invalid YAML: did not find expected node content (found \",\") (p.yaml:2:1)"},
      {"a stray comma after a document end", "...\n,\n",
       "invalid YAML: did not find expected node content (found \",\") (p.yaml:2:1)"},
      {"a stray closing bracket", "a: 1\n]\n", "invalid YAML: illegal flow end (p.yaml:2:1)"},
      {"three documents", "a\n---\nb\n---\nc\n",
       "a policy file holds exactly one YAML document, found 3 (p.yaml:3:1)"},
      {"too many empty documents", repeat("---\n", 1001) + "kind: GPUPolicy\n",
       "a policy file holds exactly one YAML document; this one has more than 1000 (empty ones "
       "included) (p.yaml:1001:1)"},
      {"too many nodes", "[" + repeat("a,", 200001) + "]",
       "the policy has more than 200000 YAML nodes; it is too large to be a policy, check that "
       "this is the right file (p.yaml:1:400000)"},
      {"too large", std::string(5 * 1024 * 1024, '#'),
       "the policy is larger than 4 MiB; a GPUPolicy is a few hundred lines, check that this is "
       "the right file (p.yaml)"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      PolicyLoadResult r = load_policy(c.yaml, "p.yaml");
      REQUIRE(r.errors.size() == 1);
      CHECK(r.errors[0].to_string() == c.error);
      CHECK_FALSE(r.policy);
    }
  }
}

TEST_CASE("policy: a leading empty document and comments are not content", "[policy][loader]") {
  // helm template output starts with `---` and a `# Source:` comment.
  const std::string yaml =
      "---\n# Source: gpuadmit/templates/policy.yaml\n---\napiVersion: gpuadmit.io/v1alpha1\n"
      "kind: GPUPolicy\nmetadata: {name: x}\nspec: {}\n---\n# trailing\n";
  PolicyLoadResult r = load_policy(yaml, "p.yaml");
  for (const PolicyError& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  CHECK(r.policy->name == "x");
}

TEST_CASE("policy: yaml-cpp's NBSP and NEL escapes are read as UTF-8", "[policy][loader]") {
  // yaml-cpp 0.7 writes them as the bytes 0xA0 and 0x85: a taint value "\_" made every GPU
  // pod's patch throw nlohmann's invalid-UTF-8 error in the webhook.
  const std::string yaml =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\nspec:\n"
      "  classes:\n    t4:\n      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
      "      taints: [{key: pool, value: \"a\\_b\\N\", effect: NoSchedule}]\n";
  PolicyLoadResult r = load_policy(yaml, "p.yaml");
  for (const PolicyError& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  const std::string expected = std::string("a\xC2\xA0") + "b\xC2\x85";  // U+00A0, U+0085
  CHECK(r.policy->classes[0].taints[0].value == expected);
}

TEST_CASE("policy: PolicyError formats with and without a path and a line", "[policy][loader]") {
  CHECK(PolicyError{"spec.x", "bad", "f.yaml", 3, 9}.to_string() == "spec.x: bad (f.yaml:3:9)");
  CHECK(PolicyError{"", "bad", "f.yaml", 3, 9}.to_string() == "bad (f.yaml:3:9)");
  CHECK(PolicyError{"spec.x", "bad", "f.yaml", 0, 0}.to_string() == "spec.x: bad (f.yaml)");
}

TEST_CASE("policy: lenient forms that mean one thing", "[policy][loader]") {
  // A single nodeSelector value, a null-free `value: true` taint, anchors and aliases.
  const std::string yaml = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: x}
spec:
  classes:
    t4:
      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}
      taints: &taints [{key: pool, value: true, effect: NoSchedule}]
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      taints: *taints
  tenants:
    - name: t
      namespaces: [a]
      allowedClasses: []
)YAML";
  PolicyLoadResult r = load_policy(yaml, "p.yaml");
  for (const PolicyError& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  CHECK(r.policy->classes[0].node_selector[0].second == std::vector<std::string>{"Tesla-T4"});
  CHECK(r.policy->classes[0].taints[0].value == "true");
  CHECK(r.policy->classes[1].taints[0].key == "pool");
  // Set and empty: this tenant may not use GPUs (distinct from unset).
  REQUIRE(r.policy->tenants[0].allowed_classes);
  CHECK(r.policy->tenants[0].allowed_classes->empty());
}

TEST_CASE("policy: billion-laughs aliases return promptly", "[policy][loader][robustness]") {
  // Ten levels of ten aliases (10^10 strings if a walk expanded them), used where the schema
  // expects a list of strings.
  std::string yaml =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\n"
      "spec:\n  gpuResources: [&l0 [a/b, a/b, a/b, a/b, a/b, a/b, a/b, a/b]";
  for (int i = 1; i < 10; ++i) {
    yaml += ", &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += (j ? ", *l" : "*l") + std::to_string(i - 1);
    yaml += "]";
  }
  yaml += "]\n  tenants: [{name: t, namespaces: *l9}]\n";
  // Schema-shaped fan-out: 3000 aliased workloads × 3000 aliased paths each.
  std::string paths = "[";
  for (int j = 0; j < 3000; ++j) paths += j ? ", spec" : "spec";
  paths += "]";
  std::string fanout =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\n"
      "spec:\n  workloads:\n    - &w {apiVersion: a/v1, kind: K, podSpecs: " +
      paths + "}\n";
  for (int i = 0; i < 3000; ++i) fanout += "    - *w\n";

  // No stopwatch (timed tests flake under sanitizers and load): a walk that expanded the
  // aliases would not finish within CTest's timeout, so finishing at all is the check.
  for (const std::string& text : {yaml, fanout}) {
    PolicyLoadResult r = load_policy(text, "bomb.yaml");
    CHECK_FALSE(r.ok());
    CHECK(r.errors.size() <= 201);
  }
  PolicyLoadResult r = load_policy(fanout, "bomb.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message ==
        "the policy has more than 200000 YAML nodes once aliases are expanded; it is too large "
        "to be a policy (check for alias bombs)");
}

TEST_CASE("policy: deep nesting is a YAML error, not a crash", "[policy][loader][robustness]") {
  std::string yaml =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\n"
      "spec: {gpuResources: ";
  yaml += std::string(100000, '[');
  PolicyLoadResult r = load_policy(yaml, "deep.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors[0].message.rfind("invalid YAML: ", 0) == 0);
}

TEST_CASE("policy: the error list is capped", "[policy][loader][robustness]") {
  std::string yaml =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\n"
      "spec:\n  gpuResources: [";
  for (int i = 0; i < 1000; ++i) yaml += i ? ", x" : "x";
  yaml += "]\n";
  PolicyLoadResult r = load_policy(yaml, "many.yaml");
  REQUIRE(r.errors.size() == 201);
  CHECK(r.errors.back().to_string() == "too many errors; only the first 200 are shown (many.yaml)");
}

TEST_CASE("policy: a missing file is one error naming it", "[policy][loader]") {
  PolicyLoadResult r = load_policy_file("/nonexistent/gpuadmit-policy.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].to_string() ==
        "cannot read the policy file: No such file or directory "
        "(/nonexistent/gpuadmit-policy.yaml)");
}

TEST_CASE("policy: the shipped policies load cleanly", "[policy][loader][examples]") {
  const std::filesystem::path root = GPUADMIT_SOURCE_DIR;
  std::vector<std::filesystem::path> files = {root / "policies" / "default.yaml"};
  for (const auto& entry : std::filesystem::directory_iterator(root / "policies" / "examples")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  CHECK(files.size() >= 5);
  for (const auto& file : files) {
    CompiledLoadResult r = load_compiled_policy(file.string());
    std::string errors;
    for (const PolicyError& e : r.errors) errors += e.to_string() + "\n";
    INFO(file.string() << "\n" << errors);
    CHECK(r.errors.empty());
    CHECK(r.policy != nullptr);
  }
}

TEST_CASE("policy: the embedded default is policies/default.yaml", "[policy][loader]") {
  CompiledLoadResult r = load_compiled_policy("");
  for (const PolicyError& e : r.errors) INFO(e.to_string());
  REQUIRE(r.policy);
  CHECK(r.policy->policy().name == "default");
  CHECK(r.policy->tenant_for("anything") != nullptr);
  CHECK(r.policy->is_exempt("kube-system"));
  CHECK(r.policy->find_class("gpu") != nullptr);
}

TEST_CASE("policy: tenant enforcement (staged rollout)", "[policy][loader]") {
  const std::string head =
      "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: p}\nspec:\n"
      "  classes: {a: {nodeSelector: {gpu: [a]}}}\n  tenants:\n    - name: t\n"
      "      namespaces: [t]\n";
  PolicyLoadResult r = load_policy(
      head +
          "      enforcement: {mode: audit, mutate: false, rules: {GPU005: deny, GPU014: off}}\n",
      "p.yaml");
  REQUIRE(r.ok());
  const TenantEnforcement& e = r.policy->tenants[0].enforcement;
  CHECK(e.audit);
  CHECK_FALSE(e.mutate);
  CHECK(e.rules == std::vector<std::pair<std::string, Action>>{{"GPU005", Action::kDeny},
                                                               {"GPU014", Action::kOff}});
  r = load_policy(head, "p.yaml");
  REQUIRE(r.ok());
  CHECK_FALSE(r.policy->tenants[0].enforcement.audit);
  CHECK(r.policy->tenants[0].enforcement.mutate);
  CHECK(errors_of(head + "      enforcement: {mode: dry-run, mutate: maybe, rules: {GPU099: "
                         "deny, GPU003: fix}, extra: 1}\n") ==
        std::vector<std::string>{
            "spec.tenants[0].enforcement.mode: must be enforce or audit, got \"dry-run\" "
            "(policy.yaml:9:27)",
            "spec.tenants[0].enforcement.mutate: must be true or false, got \"maybe\" "
            "(policy.yaml:9:44)",
            "spec.tenants[0].enforcement.rules.GPU099: unknown rule \"GPU099\": rule ids are "
            "GPU001 to GPU034 (policy.yaml:9:59)",
            "spec.tenants[0].enforcement.rules.GPU003: invalid value \"fix\": must be one of deny, "
            "warn, off (policy.yaml:9:81)",
            "spec.tenants[0].enforcement.extra: unknown field \"extra\" (policy.yaml:9:87)"});
  // The tenant's rule action comes first; other rules keep the policy's.
  const PolicyPtr compiled = CompiledPolicy::compile(
      *load_policy(head + "      enforcement: {rules: {GPU014: deny}}\n", "p.yaml").policy);
  const Tenant* t = compiled->tenant_for("t");
  CHECK(compiled->action_for(t, "GPU014", Action::kWarn) == Action::kDeny);
  CHECK(compiled->action_for(nullptr, "GPU014", Action::kWarn) == Action::kWarn);
  CHECK(compiled->action_for(t, "GPU005", Action::kDeny) == Action::kDeny);
}

}  // namespace
}  // namespace loader_test
}  // namespace gpuadmit
