#include "render/native_table.h"

#include <algorithm>
#include <array>

#include "engine/dra.h"
#include "engine/workload_kinds.h"
#include "render/native_model.h"

namespace gpuadmit::render::native {
namespace {

using C = Coverage;
using K = Category;

const std::array<RuleRow, 34> kRules = {{
    {"GPU001", C::kYes, K::kCorrectness, "quantities compared with the CEL quantity library"},
    {"GPU002", C::kYes, K::kCorrectness,
     "isQuantity, sign and isInteger; whole numbers above 2^63 read as fractions"},
    {"GPU003", C::kYes, K::kSecurity,
     "class resolution (setting, nodeSelector, defaultClass, only class) written out in CEL; the "
     "tenant's allowedClasses read from the tenants' data; in a namespace of no tenant, any GPU "
     "pod; each mapped DeviceClass's implicit extended resource with its class, a literal map"},
    {"GPU004", C::kYes, K::kCorrectness, "the class names are literals"},
    {"GPU005", C::kYes, K::kSafety,
     "the effective pod request (sidecars, init containers) summed per resource in CEL"},
    {"GPU006", C::kYes, K::kCorrectness,
     "per-node capacities (time-slicing replicas, MIG slices) precomputed per class"},
    {"GPU007", C::kYes, K::kCorrectness, "the classes' MIG profiles are literals"},
    {"GPU008", C::kYes, K::kCorrectness, "per container, over the resource names"},
    {"GPU009", C::kYes, K::kSafety,
     "Toleration.ToleratesTaint and the pools' labels written out per taint and label; "
     "`spec.nodeName` not checked (a Node lookup: *Differences*)"},
    {"GPU010", C::kYes, K::kSecurity,
     "the tenant's allowed priority classes read from the tenants' data; the Kueue "
     "WorkloadPriorityClass label at the queue's site"},
    {"GPU011", C::kYes, K::kCorrectness,
     "the per-key satisfiability of In, NotIn, Exists, DoesNotExist, Gt and Lt, decided in CEL"},
    {"GPU012", C::kYes, K::kCorrectness, "per container, over the shared resource names"},
    {"GPU013", C::kYes, K::kSafety,
     "per pod; lint's sum over a namespace's workloads needs every object, no admission sees it"},
    {"GPU014", C::kYes, K::kAdvice, "a warning (Warn binding) like the webhook's"},
    {"GPU015", C::kYes, K::kCorrectness, "pod-level spec.resources, by name"},
    {"GPU016", C::kNo, K::kCorrectness,
     "lint reads LimitRange objects in manifests; no admission request carries it"},
    {"GPU017", C::kNo, K::kCorrectness,
     "lint reads ResourceQuota objects in manifests; no admission request carries it"},
    {"GPU018", C::kYes, K::kSecurity, "the DeviceClass → class map is a literal"},
    {"GPU019", C::kYes, K::kSafety,
     "per request and per claim (firstAvailable: the largest alternative)"},
    {"GPU020", C::kYes, K::kSafety, "allocationMode of every request and alternative"},
    {"GPU021", C::kYes, K::kSecurity, "adminAccess of every request and alternative"},
    {"GPU022", C::kNo, K::kCorrectness,
     "reads the MIG profile out of the selectors' own CEL text; left to the webhook"},
    {"GPU023", C::kNo, K::kCorrectness,
     "needs another object (the claim the pod names): a policy sees only the request"},
    {"GPU024", C::kYes, K::kSecurity,
     "env, envFrom, volume mounts (device-list paths cleaned as Go's filepath.Clean, exactly up "
     "to 64 elements; see Differences), runtime class and CDI annotations"},
    {"GPU025", C::kYes, K::kCorrectness,
     "the table's queue site (own labels, jobTemplate, each pod template), the known controller "
     "kinds and their controllers' users (request.userInfo.username) are literals; on UPDATE, "
     "oldObject's templates and queue label decide what was admitted before the requirement, "
     "and oldObject's controller an UPDATE of a controller's child by someone else "
     "(`variables.bhc`)"},
    {"GPU026", C::kYes, K::kSecurity,
     "securityContext.privileged, and whether the pod tolerates every NoSchedule and NoExecute "
     "taint of some pool"},
    {"GPU027", C::kNo, K::kCorrectness,
     "NVIDIA's driver table, the image-name conventions and the NVIDIA_REQUIRE_CUDA grammar are "
     "left to the webhook and lint"},
    {"GPU028", C::kNo, K::kCorrectness,
     "lint reads the device plugin's config in manifests; no admission request carries it"},
    {"GPU029", C::kNo, K::kCorrectness,
     "lint reads mig-parted configs and the ClusterPolicy in manifests; no admission carries them"},
    {"GPU030", C::kNo, K::kAdvice,
     "lint reads KubeSchedulerConfiguration in manifests; no admission request carries it"},
    {"GPU031", C::kNo, K::kCorrectness,
     "lint reads Kueue ResourceFlavors in manifests; no admission request carries them"},
    {"GPU032", C::kNo, K::kAdvice,
     "a warning about a container's own environment; left to the webhook and lint"},
    {"GPU033", C::kNo, K::kAdvice,
     "a warning on the pod's GPU count against its class's NVLink group; left to the webhook and "
     "lint"},
    {"GPU034", C::kNo, K::kCorrectness,
     "lint reads Kueue ClusterQueues, ResourceFlavors and LocalQueues in manifests; no admission "
     "request carries them"},
}};

std::vector<MutationRow> make_mutation_rows() {
  const std::vector<std::string_view> resources{"spec.initContainers[*].resources",
                                                "spec.containers[*].resources"};
  return {
      {"requests-equal-limits", C::kYes, "the missing half copied as written", resources},
      {"class",
       C::kYes,
       "the resolved class as the annotation",
       {"metadata.annotations[gpuadmit.io/class]"}},
      {"resource-names", C::kYes, "nvidia.com/gpu renamed per container, all or nothing",
       resources},
      {"tolerations",
       C::kYes,
       "JSON Patch, as spec.tolerations is atomic for apply; the list is rebuilt",
       {"spec.tolerations"}},
      {"node-affinity",
       C::kYes,
       "JSON Patch (nodeSelectorTerms and matchExpressions are atomic); skipped on a GPU011 "
       "conflict, decided in CEL",
       {"spec.affinity"}},
      {"defaults", C::kYes,
       "perGPU × N precomputed for N ≤ 128 (CEL quantities cannot multiply); above, written as "
       "<mantissa × N><suffix>, equal once the API server decodes it",
       resources},
      {"priority",
       C::kYes,
       "name, value and preemptionPolicy in one policy, from the classes the policy declares "
       "(MAPs run after the Priority plugin)",
       {"spec.priorityClassName", "spec.priority", "spec.preemptionPolicy"}},
      {"strip-gpu-pool",
       C::kYes,
       "the same tolerations, selector entries and terms removed",
       {"spec.tolerations", "spec.nodeSelector", "spec.affinity"}},
      {"gpu-visibility",
       C::kYes,
       "NVIDIA_VISIBLE_DEVICES=void appended, on CREATE and on an UPDATE that changed the "
       "template",
       {"spec.initContainers[*].env", "spec.containers[*].env", "spec.ephemeralContainers[*].env"}},
      {"queue",
       C::kYes,
       "the tenant's LocalQueue where Kueue reads it (the table's queue site), on CREATE",
       {"object:metadata.labels[kueue.x-k8s.io/queue-name]",
        "object:spec.jobTemplate.metadata.labels[kueue.x-k8s.io/queue-name]",
        "metadata.labels[kueue.x-k8s.io/queue-name]"}},
      {"topology",
       C::kNo,
       "left to the webhook and lint: the operators' job labels and the object's name as a pod "
       "affinity term, or Kueue's topology annotation",
       {"spec.affinity", "metadata.annotations[kueue.x-k8s.io/podset-required-topology]"}},
  };
}

std::string pad(std::string_view s, size_t width) {
  std::string out(s);
  // Width in characters, not bytes ("×", "→" are two and three bytes in UTF-8).
  size_t chars = 0;
  for (unsigned char c : out) chars += (c & 0xC0) != 0x80;
  if (chars < width) out.append(width - chars, ' ');
  return out;
}

}  // namespace

std::string_view coverage_name(Coverage c) {
  switch (c) {
    case Coverage::kYes:
      return "yes";
    case Coverage::kPartial:
      return "partial";
    case Coverage::kNo:
      break;
  }
  return "no";
}

std::string_view category_name(Category c) {
  switch (c) {
    case Category::kSecurity:
      return "security";
    case Category::kSafety:
      return "safety";
    case Category::kCorrectness:
      return "correctness";
    case Category::kAdvice:
      break;
  }
  return "advice";
}

std::span<const RuleRow> rule_rows() { return kRules; }

std::span<const MutationRow> mutation_rows() {
  static const std::vector<MutationRow> rows = make_mutation_rows();
  return rows;
}

const RuleRow* find_rule_row(std::string_view id) {
  for (const RuleRow& r : kRules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

bool in_fallback(const CompiledPolicy& policy, std::string_view id) {
  const RuleRow* row = find_rule_row(id);
  if (row == nullptr || row->native != Coverage::kYes) return false;
  if (row->category != Category::kSecurity && row->category != Category::kSafety) return false;
  // With strip, the webhook removes what GPU009 reports: denying it without the webhook would
  // reject pods the webhook lets through.
  // GPU026 judges a non-GPU pod by the pool tolerations the strip removes.
  if ((id == "GPU009" || id == "GPU026") &&
      policy.policy().enforcement.non_gpu_on_gpu_pool == Action::kStrip) {
    return false;
  }
  return true;
}

std::string table_markdown() {
  std::string out =
      "| rule | native | fallback | why |\n"
      "|---|---|---|---|\n";
  for (const RuleRow& r : kRules) {
    const bool fallback = r.native == Coverage::kYes &&
                          (r.category == Category::kSecurity || r.category == Category::kSafety);
    out += "| " + std::string(r.id) + " | " + std::string(coverage_name(r.native)) + " | " +
           (fallback ? std::string(category_name(r.category)) : "") + " | " + std::string(r.why) +
           " |\n";
  }
  out +=
      "\n| mutation | native | writes | why |\n"
      "|---|---|---|---|\n";
  for (const MutationRow& m : mutation_rows()) {
    std::string writes;
    for (std::string_view w : m.writes) writes += (writes.empty() ? "" : ", ") + std::string(w);
    out += "| " + std::string(m.name) + " | " + std::string(coverage_name(m.native)) + " | `" +
           writes + "` | " + std::string(m.why) + " |\n";
  }
  return out;
}

std::string table_comment() {
  std::string out =
      "# What these policies enforce in the API server (docs/native.md), with the webhook's\n"
      "# semantics (without --dra-lookup). `no`: only the webhook does it.\n#\n";
  for (const RuleRow& r : kRules) {
    out += "#   " + pad(r.id, 8) + pad(coverage_name(r.native), 4) + " " +
           pad(category_name(r.category), 12) + std::string(r.why) + "\n";
  }
  out += "#\n";
  for (const MutationRow& m : mutation_rows()) {
    out += "#   " + pad(m.name, 22) + pad(coverage_name(m.native), 4) + " " + std::string(m.why) +
           "\n";
  }
  return out;
}

bool judges_unmutated(const CompiledPolicy& policy, std::string_view id) {
  return in_fallback(policy, id) || id == "GPU025";
}

Json table_json(const CompiledPolicy& policy) {
  Json rules = Json::array();
  for (const RuleRow& r : kRules) {
    rules.push_back({{"id", r.id},
                     {"native", coverage_name(r.native)},
                     {"category", category_name(r.category)},
                     {"fallback", in_fallback(policy, r.id)},
                     {"unmutated", judges_unmutated(policy, r.id)},
                     {"why", r.why}});
  }
  Json mutations = Json::array();
  for (const MutationRow& m : mutation_rows()) {
    Json writes = Json::array();
    for (std::string_view w : m.writes) writes.push_back(w);
    mutations.push_back({{"name", m.name},
                         {"native", coverage_name(m.native)},
                         {"why", m.why},
                         {"writes", std::move(writes)}});
  }
  const NativeKinds kinds = native_kinds(policy);
  Json covered = Json::array();
  for (const NativeKind& k : kinds.covered) {
    Json entry = {{"group", k.group}, {"kind", k.kind}};
    if (!k.api_version.empty()) entry["apiVersion"] = k.api_version;
    // The harness's JudgedOnly: an UPDATE of such a kind is judged, never mutated.
    const WorkloadKind* table =
        k.api_version.empty() ? find_workload_kind(k.group.empty() ? "v1" : k.group + "/v1", k.kind)
                              : nullptr;
    entry["immutableTemplates"] =
        table != nullptr && table->template_updates == TemplateUpdates::kImmutable;
    covered.push_back(std::move(entry));
  }
  // The queued kinds without pod specs (TrainJob, AppWrapper, SparkApplication): judged by the
  // validating policies for their queue (GPU025), never mutated.
  for (const WorkloadKind& k : workload_kinds()) {
    if (!queued_without_pod_specs(k)) continue;
    covered.push_back({{"group", k.group},
                       {"kind", k.kind},
                       {"immutableTemplates", false},
                       {"validatedOnly", true}});
  }
  // The claims: judged by the validating policies (GPU018–GPU021), never mutated.
  for (std::string_view kind : kClaimKinds) {
    covered.push_back({{"group", kResourceApiGroup},
                       {"kind", kind},
                       {"immutableTemplates", false},
                       {"validatedOnly", true}});
  }
  Json not_covered = Json::array();
  for (const auto& [k, why] : kinds.not_covered) {
    not_covered.push_back({{"apiVersion", k.api_version}, {"kind", k.kind}, {"why", why}});
  }
  return {{"rules", std::move(rules)},
          {"mutations", std::move(mutations)},
          {"kinds", std::move(covered)},
          {"not_native_kinds", std::move(not_covered)}};
}

}  // namespace gpuadmit::render::native
