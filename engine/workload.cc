#include "engine/workload.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>

#include "engine/saturating.h"

namespace gpuadmit {
namespace {

struct BuiltinKind {
  std::string_view group;  // API group; "" is the core group
  std::string_view kind;
  std::vector<std::string_view> patterns;
};

// SPEC §6. Matched by group and kind, any version: the template paths of these kinds have not
// changed across their versions. RayService is not in SPEC §6's list; it carries the same
// RayCluster spec under rayClusterConfig, so it is included (docs/decisions.md).
const std::vector<BuiltinKind>& builtin_kinds() {
  static const std::vector<BuiltinKind> kinds = {
      {"", "Pod", {"spec"}},
      {"", "ReplicationController", {"spec.template.spec"}},
      {"apps", "Deployment", {"spec.template.spec"}},
      {"apps", "ReplicaSet", {"spec.template.spec"}},
      {"apps", "StatefulSet", {"spec.template.spec"}},
      {"apps", "DaemonSet", {"spec.template.spec"}},
      {"batch", "Job", {"spec.template.spec"}},
      {"batch", "CronJob", {"spec.jobTemplate.spec.template.spec"}},
      {"jobset.x-k8s.io", "JobSet", {"spec.replicatedJobs[*].template.spec.template.spec"}},
      {"ray.io",
       "RayCluster",
       {"spec.headGroupSpec.template.spec", "spec.workerGroupSpecs[*].template.spec"}},
      {"ray.io",
       "RayJob",
       {"spec.rayClusterSpec.headGroupSpec.template.spec",
        "spec.rayClusterSpec.workerGroupSpecs[*].template.spec"}},
      {"ray.io",
       "RayService",
       {"spec.rayClusterConfig.headGroupSpec.template.spec",
        "spec.rayClusterConfig.workerGroupSpecs[*].template.spec"}},
      {"batch.volcano.sh", "Job", {"spec.tasks[*].template.spec"}},
      {"leaderworkerset.x-k8s.io",
       "LeaderWorkerSet",
       {"spec.leaderWorkerTemplate.leaderTemplate.spec",
        "spec.leaderWorkerTemplate.workerTemplate.spec"}},
  };
  return kinds;
}

// Kubeflow training operators name their role maps `<x>ReplicaSpecs` (tfReplicaSpecs,
// pytorchReplicaSpecs, mpiReplicaSpecs, xgbReplicaSpecs, paddleReplicaSpecs, mxReplicaSpecs).
constexpr std::string_view kKubeflowGroup = "kubeflow.org";
constexpr std::array<std::string_view, 6> kKubeflowKinds = {"TFJob",      "PyTorchJob", "MPIJob",
                                                            "XGBoostJob", "PaddleJob",  "MXJob"};

std::string_view group_of(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

bool is_kubeflow_kind(std::string_view api_version, std::string_view kind) {
  if (group_of(api_version) != kKubeflowGroup) return false;
  for (auto k : kKubeflowKinds) {
    if (k == kind) return true;
  }
  return false;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One pointer, extended and shortened on the way down (json_pointer's `/` copies every token).
void expand(const Json& node, const std::vector<std::string_view>& tokens, size_t at,
            JsonPointer& pointer, std::vector<JsonPointer>& out) {
  if (at == tokens.size()) {
    out.push_back(pointer);
    return;
  }
  std::string_view token = tokens[at];
  bool each_element = false;
  if (ends_with(token, "[*]")) {
    each_element = true;
    token.remove_suffix(3);
  }
  // `pointer` names `child` here.
  auto descend = [&](const Json& child) {
    if (!each_element) {
      expand(child, tokens, at + 1, pointer, out);
      return;
    }
    if (!child.is_array()) return;
    for (size_t i = 0; i < child.size(); ++i) {
      pointer.push_back(std::to_string(i));
      expand(child[i], tokens, at + 1, pointer, out);
      pointer.pop_back();
    }
  };
  if (!node.is_object()) return;
  if (token == "*") {
    for (auto it = node.begin(); it != node.end(); ++it) {
      pointer.push_back(it.key());
      descend(it.value());
      pointer.pop_back();
    }
    return;
  }
  if (const Json* child = find_member(node, token)) {
    pointer.push_back(std::string(token));
    descend(*child);
    pointer.pop_back();
  }
}

std::vector<std::string_view> split_pattern(std::string_view pattern) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t dot = pattern.find('.', start);
    if (dot == std::string_view::npos) dot = pattern.size();
    tokens.push_back(pattern.substr(start, dot - start));
    start = dot + 1;
  }
  return tokens;
}

// A non-negative whole replica-like count, or nullopt.
std::optional<int64_t> count_member(const Json& object, std::string_view key) {
  const Json* v = find_member(object, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  int64_t n = v->get<int64_t>();
  if (n < 0) return std::nullopt;
  return n;
}

// Pods a JobSpec runs at once: parallelism (default 1), but no more than completions when that
// is set ("the actual number of pods running in steady state will be less than this number when
// ((.spec.completions - .status.successful) < .spec.parallelism)", k8s.io/api/batch/v1
// JobSpec.Parallelism). nullopt when the object has neither field (not a JobSpec).
std::optional<int64_t> job_pods(const Json& object) {
  std::optional<int64_t> parallelism = count_member(object, "parallelism");
  std::optional<int64_t> completions = count_member(object, "completions");
  if (!parallelism && !completions) return std::nullopt;
  const int64_t running = parallelism.value_or(1);
  return completions ? std::min(running, *completions) : running;
}

// Calls each(token) for the reference tokens of a pointer, unescaped, root first ("/a~1b/0" →
// "a/b", "0"), in one reused string.
template <typename F>
void for_each_pointer_token(const JsonPointer& pointer, F each) {
  const std::string text = pointer.to_string();
  std::string token;
  size_t start = 0;
  while (start < text.size()) {  // text is "" or starts with '/'
    size_t end = text.find('/', start + 1);
    if (end == std::string::npos) end = text.size();
    token.clear();
    for (size_t i = start + 1; i < end; ++i) {
      if (text[i] == '~' && i + 1 < end && (text[i + 1] == '0' || text[i + 1] == '1')) {
        token += text[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += text[i];
      }
    }
    each(token);
    start = end;
  }
}

// The reference tokens of a pointer, unescaped, root first ("/a~1b/0" → {"a/b", "0"}).
std::vector<std::string> pointer_tokens(const JsonPointer& pointer) {
  std::vector<std::string> tokens;
  for_each_pointer_token(pointer, [&](const std::string& token) { tokens.push_back(token); });
  return tokens;
}

// Pods one pod spec stands for: the product of the counts met on the way down from the root
// (Deployment spec.replicas, Job spec.parallelism, JobSet replicatedJobs[i].replicas × the job's
// parallelism (at most completions), Kubeflow <x>ReplicaSpecs.<role>.replicas, Ray
// workerGroupSpecs[i].replicas (else minReplicas) × numOfHosts, Volcano tasks[i].replicas). An
// absent count is 1, the Kubernetes default.
int64_t replicas_along(const Json& object, const JsonPointer& spec_pointer) {
  int64_t product = 1;
  const Json* node = &object;
  JsonPointer walked;
  const std::vector<std::string> tokens = pointer_tokens(spec_pointer);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (node->is_object()) {
      node = find_member(*node, token);
    } else if (node->is_array() && !token.empty() &&
               token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10) {
      size_t index = std::stoul(token);
      node = index < node->size() ? &(*node)[index] : nullptr;
    } else {
      node = nullptr;
    }
    if (node == nullptr) break;
    if (!node->is_object()) continue;
    std::optional<int64_t> count = count_member(*node, "replicas");
    if (!count) count = job_pods(*node);
    if (!count) count = count_member(*node, "minReplicas");
    // KubeRay: a worker group's replicas are multi-host groups of numOfHosts pods each
    // (ray-operator/apis/ray/v1 WorkerGroupSpec.NumOfHosts, default 1).
    if (count) {
      if (auto hosts = count_member(*node, "numOfHosts")) count = saturating_mul(*count, *hosts);
    }
    if (count) product = saturating_mul(product, *count);
  }
  return product;
}

}  // namespace

std::vector<std::string> pod_spec_patterns(std::string_view api_version, std::string_view kind,
                                           const CompiledPolicy& policy) {
  std::vector<std::string> patterns;
  for (const WorkloadDecl& w : policy.policy().workloads) {
    if (w.api_version == api_version && w.kind == kind) {
      patterns.assign(w.pod_specs.begin(), w.pod_specs.end());
      return patterns;
    }
  }
  const std::string_view group = group_of(api_version);
  for (const BuiltinKind& b : builtin_kinds()) {
    if (b.group == group && b.kind == kind) {
      patterns.assign(b.patterns.begin(), b.patterns.end());
      return patterns;
    }
  }
  if (is_kubeflow_kind(api_version, kind)) {
    patterns.emplace_back("spec.*ReplicaSpecs.*.template.spec");
    patterns.emplace_back("spec.template.spec");  // MPIJob v1alpha1
  }
  return patterns;
}

std::vector<BuiltinWorkloadKind> builtin_workload_kinds() {
  std::vector<BuiltinWorkloadKind> out;
  for (const BuiltinKind& b : builtin_kinds()) {
    out.push_back({b.group, b.kind, !(b.group.empty() && b.kind == "Pod")});
  }
  for (std::string_view kind : kKubeflowKinds) out.push_back({kKubeflowGroup, kind, true});
  return out;
}

bool is_workload_kind(std::string_view api_version, std::string_view kind,
                      const CompiledPolicy& policy) {
  // pod_spec_patterns(...) is not empty, without building the list.
  for (const WorkloadDecl& w : policy.policy().workloads) {
    if (w.api_version == api_version && w.kind == kind) return !w.pod_specs.empty();
  }
  const std::string_view group = group_of(api_version);
  for (const BuiltinKind& b : builtin_kinds()) {
    if (b.group == group && b.kind == kind) return !b.patterns.empty();
  }
  return is_kubeflow_kind(api_version, kind);
}

std::vector<JsonPointer> expand_path_pattern(const Json& object, std::string_view pattern) {
  std::vector<JsonPointer> out;
  std::vector<std::string_view> tokens = split_pattern(pattern);
  // Kubeflow's role maps: "*ReplicaSpecs" matches every key with that suffix.
  if (tokens.size() > 1 && tokens[1] == "*ReplicaSpecs") {
    const Json* spec = find_member(object, tokens[0]);
    if (spec == nullptr || !spec->is_object()) return out;
    std::vector<std::string_view> rest(tokens.begin() + 2, tokens.end());
    for (auto it = spec->begin(); it != spec->end(); ++it) {
      if (!ends_with(it.key(), "ReplicaSpecs")) continue;
      JsonPointer pointer = JsonPointer() / std::string(tokens[0]) / it.key();
      expand(it.value(), rest, 0, pointer, out);
    }
    return out;
  }
  JsonPointer pointer;
  expand(object, tokens, 0, pointer, out);
  return out;
}

std::vector<PodSpecLocation> find_pod_specs(const Json& object, const CompiledPolicy& policy) {
  std::vector<PodSpecLocation> locations;
  if (!object.is_object()) return locations;
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  const bool is_lws =
      kind == "LeaderWorkerSet" && group_of(api_version) == "leaderworkerset.x-k8s.io";
  for (const std::string& pattern : pod_spec_patterns(api_version, kind, policy)) {
    for (JsonPointer& pointer : expand_path_pattern(object, pattern)) {
      PodSpecLocation loc;
      loc.is_template = !(kind == "Pod" && pattern == "spec");
      loc.metadata = pointer.parent_pointer() / "metadata";
      loc.replicas = replicas_along(object, pointer);
      if (is_lws && pattern.find("workerTemplate") != std::string::npos) {
        // LeaderWorkerSet: each replica is a group of `size` pods, one of them the leader.
        const Json* lwt = find_member(*find_member(object, "spec"), "leaderWorkerTemplate");
        int64_t size = 1;
        if (lwt != nullptr) size = count_member(*lwt, "size").value_or(1);
        loc.replicas = size > 0 ? loc.replicas * (size - 1) : 0;
      }
      loc.path = dotted_path(pointer);
      loc.spec = std::move(pointer);
      locations.push_back(std::move(loc));
    }
  }
  return locations;
}

std::string dotted_path(const JsonPointer& pointer) {
  std::string out;
  for_each_pointer_token(pointer, [&](const std::string& token) {
    bool numeric = !token.empty() && token.size() < 10;
    for (char c : token) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
    if (numeric) {
      out.append("[").append(token).append("]");
    } else if (token.find_first_of("./") != std::string::npos) {
      out.append("[\"").append(token).append("\"]");
    } else {
      if (!out.empty()) out += '.';
      out += token;
    }
  });
  return out;
}

}  // namespace gpuadmit
