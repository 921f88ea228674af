#include "engine/workload.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include "engine/saturating.h"
#include "engine/workload_kinds.h"

namespace gpuadmit {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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

// A path in an object: its unescaped reference tokens, root first ({"spec", "containers", "0"}).
using Tokens = std::vector<std::string>;

// Every match of `pattern` from `at` on below `node`, whose path is `path` (one path, extended
// and shortened on the way down).
void expand(const Json& node, const std::vector<std::string_view>& pattern, size_t at, Tokens& path,
            std::vector<Tokens>& out) {
  if (at == pattern.size()) {
    out.push_back(path);
    return;
  }
  std::string_view token = pattern[at];
  bool each_element = false;
  if (ends_with(token, "[*]")) {
    each_element = true;
    token.remove_suffix(3);
  }
  // `path` names `child` here.
  auto descend = [&](const Json& child) {
    if (!each_element) {
      expand(child, pattern, at + 1, path, out);
      return;
    }
    if (!child.is_array()) return;
    for (size_t i = 0; i < child.size(); ++i) {
      path.push_back(std::to_string(i));
      expand(child[i], pattern, at + 1, path, out);
      path.pop_back();
    }
  };
  if (!node.is_object()) return;
  if (token == "*") {
    for (auto it = node.begin(); it != node.end(); ++it) {
      path.push_back(it.key());
      descend(it.value());
      path.pop_back();
    }
    return;
  }
  if (const Json* child = find_member(node, token)) {
    path.emplace_back(token);
    descend(*child);
    path.pop_back();
  }
}

std::vector<Tokens> expand_tokens(const Json& object, std::string_view pattern) {
  std::vector<Tokens> out;
  Tokens path;
  expand(object, split_pattern(pattern), 0, path, out);
  return out;
}

JsonPointer pointer_of(const Tokens& tokens, size_t count) {
  JsonPointer pointer;
  for (size_t i = 0; i < count; ++i) pointer.push_back(tokens[i]);
  return pointer;
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

// Pods one pod spec of a policy `workloads` kind stands for: the product of the counts met on the
// way down from the root (`replicas`, else a JobSpec's parallelism (at most completions), else
// `minReplicas`; times `numOfHosts`). An absent count is 1, the Kubernetes default. The table's
// kinds name their counts instead (table_replicas).
int64_t replicas_along(const Json& object, const Tokens& tokens) {
  int64_t product = 1;
  const Json* node = &object;
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

// The node a path names in `object`, or null (never throws).
const Json* node_at(const Json& object, const Tokens& tokens) {
  const Json* node = &object;
  for (const std::string& token : tokens) {
    if (node == nullptr) break;
    if (node->is_object()) {
      node = find_member(*node, token);
    } else if (node->is_array() && !token.empty() && token.size() < 10 &&
               token.find_first_not_of("0123456789") == std::string::npos) {
      const size_t index = std::stoul(token);
      node = index < node->size() ? &(*node)[index] : nullptr;
    } else {
      node = nullptr;
    }
  }
  return node;
}

// A count path of the table resolved for one matched pod spec: the tokens it shares with the
// pod spec's pattern take the matched keys and indices ("spec.replicatedJobs[*].replicas" for
// /spec/replicatedJobs/2/template/spec/template/spec → /spec/replicatedJobs/2/replicas). nullopt
// when a wildcard lies outside the shared part (tests/engine/workload_kinds_test.cpp holds the
// table to it).
std::optional<Tokens> resolve_count_path(std::string_view count_path, std::string_view spec_pattern,
                                         const Tokens& matched) {
  const std::vector<std::string_view> count = split_pattern(count_path);
  const std::vector<std::string_view> spec = split_pattern(spec_pattern);
  Tokens out;
  size_t at = 0;  // in `matched`
  bool shared = true;
  for (size_t i = 0; i < count.size(); ++i) {
    const std::string_view token = count[i];
    const bool wildcard = token == "*" || ends_with(token, "[*]");
    shared = shared && i < spec.size() && spec[i] == token;
    if (!shared) {
      if (wildcard) return std::nullopt;
      out.emplace_back(token);
      continue;
    }
    const size_t n = ends_with(token, "[*]") ? 2 : 1;  // a list: its key and the index
    if (at + n > matched.size()) return std::nullopt;
    for (size_t k = 0; k < n; ++k) out.push_back(matched[at++]);
  }
  return out;
}

// The factor one ReplicaCount gives, 1 when its field is absent or not a count.
int64_t count_factor(const Json* node, CountRule rule) {
  if (rule == CountRule::kValue) {
    if (node == nullptr || !node->is_number_integer() || node->get<int64_t>() < 0) return 1;
    return node->get<int64_t>();
  }
  if (node == nullptr || !node->is_object()) return 1;
  switch (rule) {
    case CountRule::kJobSpec:
      return job_pods(*node).value_or(1);
    case CountRule::kRayGroup: {
      // KubeRay ray-operator/apis/ray/v1 WorkerGroupSpec: Replicas (else MinReplicas) groups of
      // NumOfHosts pods each (default 1).
      std::optional<int64_t> groups = count_member(*node, "replicas");
      if (!groups) groups = count_member(*node, "minReplicas");
      if (!groups) return 1;
      return saturating_mul(*groups, count_member(*node, "numOfHosts").value_or(1));
    }
    default:
      return 1;
  }
}

// Pods one pod spec of a table kind stands for: the product of the counts its template names.
int64_t table_replicas(const Json& object, const PodTemplatePath& path, const Tokens& matched) {
  int64_t product = 1;
  for (const ReplicaCount& count : path.counts) {
    const std::optional<Tokens> at = resolve_count_path(count.path, path.spec, matched);
    if (!at) continue;
    const Json* node = node_at(object, *at);
    if (count.rule == CountRule::kLwsGroup) {
      // LeaderWorkerSet: each replica is a group of `size` pods (default 1), one the leader.
      int64_t size = 1;
      if (node != nullptr && node->is_number_integer()) size = node->get<int64_t>();
      product = size > 0 ? saturating_mul(product, size - 1) : 0;
      continue;
    }
    product = saturating_mul(product, count_factor(node, count.rule));
  }
  return product;
}

// {"spec", "containers", "0", "resources"} → "spec.containers[0].resources".
std::string dotted_path_of(const Tokens& tokens) {
  std::string out;
  for (const std::string& token : tokens) {
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
  }
  return out;
}

const WorkloadDecl* policy_workload(std::string_view api_version, std::string_view kind,
                                    const CompiledPolicy& policy) {
  for (const WorkloadDecl& w : policy.policy().workloads) {
    if (w.api_version == api_version && w.kind == kind) return &w;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> pod_spec_patterns(std::string_view api_version, std::string_view kind,
                                           const CompiledPolicy& policy) {
  std::vector<std::string> patterns;
  if (const WorkloadDecl* w = policy_workload(api_version, kind, policy)) {
    patterns.assign(w->pod_specs.begin(), w->pod_specs.end());
  } else if (const WorkloadKind* k = find_workload_kind(api_version, kind)) {
    for (const PodTemplatePath& p : k->pod_specs) patterns.emplace_back(p.spec);
  }
  return patterns;
}

bool is_workload_kind(std::string_view api_version, std::string_view kind,
                      const CompiledPolicy& policy) {
  if (const WorkloadDecl* w = policy_workload(api_version, kind, policy)) {
    return !w->pod_specs.empty();
  }
  const WorkloadKind* k = find_workload_kind(api_version, kind);
  return k != nullptr && !k->pod_specs.empty();
}

std::vector<JsonPointer> expand_path_pattern(const Json& object, std::string_view pattern) {
  std::vector<JsonPointer> out;
  for (const Tokens& tokens : expand_tokens(object, pattern)) {
    out.push_back(pointer_of(tokens, tokens.size()));
  }
  return out;
}

std::vector<PodSpecLocation> find_pod_specs(const Json& object, const CompiledPolicy& policy) {
  std::vector<PodSpecLocation> locations;
  if (!object.is_object()) return locations;
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  auto add = [&](std::string_view pattern, const PodTemplatePath* table_path) {
    for (const Tokens& tokens : expand_tokens(object, pattern)) {
      PodSpecLocation loc;
      loc.is_template = !(kind == "Pod" && pattern == "spec");
      loc.metadata = pointer_of(tokens, tokens.empty() ? 0 : tokens.size() - 1);
      loc.metadata.push_back("metadata");
      loc.replicas = table_path != nullptr ? table_replicas(object, *table_path, tokens)
                                           : replicas_along(object, tokens);
      loc.path = dotted_path_of(tokens);
      loc.spec = pointer_of(tokens, tokens.size());
      locations.push_back(std::move(loc));
    }
  };
  if (const WorkloadDecl* w = policy_workload(api_version, kind, policy)) {
    for (const std::string& pattern : w->pod_specs) add(pattern, nullptr);
  } else if (const WorkloadKind* k = find_workload_kind(api_version, kind)) {
    for (const PodTemplatePath& path : k->pod_specs) add(path.spec, &path);
  }
  return locations;
}

std::string dotted_path(const JsonPointer& pointer) {
  Tokens tokens;
  for_each_pointer_token(pointer, [&](const std::string& token) { tokens.push_back(token); });
  return dotted_path_of(tokens);
}

}  // namespace gpuadmit
