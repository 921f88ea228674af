#include "policies/compiled_policy.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

namespace gpuadmit {

namespace {

// Namespace names are [a-z0-9-]: a pattern of only such characters matches only itself.
bool is_literal(std::string_view pattern) {
  for (char c : pattern) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

// A list of RE2 full-match patterns, matched as one: literal patterns (most namespace names)
// by string comparison, the rest as one anchored alternation compiled once.
class NamespaceMatcher {
 public:
  explicit NamespaceMatcher(const std::vector<std::string>& patterns) {
    std::string alternation;
    for (const std::string& p : patterns) {
      if (is_literal(p)) {
        literals_.insert(p);
        continue;
      }
      // Each pattern must compile on its own: a bad one never matches and cannot break the
      // others (only possible for a Policy built by hand, the loader rejects it).
      RE2 alone(p, RE2::Quiet);
      if (!alone.ok()) continue;
      if (!alternation.empty()) alternation += '|';
      alternation += "(?:" + p + ")";
    }
    if (!alternation.empty()) {
      regex_ = std::make_unique<RE2>(alternation, RE2::Quiet);
      if (!regex_->ok()) regex_.reset();
    }
  }

  bool matches(std::string_view ns) const {
    if (literals_.find(ns) != literals_.end()) return true;
    return regex_ && RE2::FullMatch(re2::StringPiece(ns.data(), ns.size()), *regex_);
  }

 private:
  std::set<std::string, std::less<>> literals_;
  std::unique_ptr<RE2> regex_;
};

// Every tenant's namespace patterns matched at once: the first tenant (in policy order) with a
// pattern that full-matches. Literal patterns by one map lookup, the rest by one RE2::Set pass
// (one DFA over all of them), so the cost does not grow with the number of tenants: with 2,000
// tenants tried one by one, evaluate's p99 was 16 times the default policy's
// (bench/pipeline_bench).
class TenantMatcher {
 public:
  explicit TenantMatcher(const std::vector<Tenant>& tenants)
      : set_(set_options(), RE2::ANCHOR_BOTH) {
    for (size_t t = 0; t < tenants.size(); ++t) {
      for (const std::string& p : tenants[t].namespaces) {
        if (is_literal(p)) {
          literals_.emplace(p, t);  // keeps the first tenant's index
          continue;
        }
        // A pattern that does not compile on its own never matches (only possible for a Policy
        // built by hand: the loader rejects it).
        auto alone = std::make_unique<RE2>(p, RE2::Quiet);
        if (!alone->ok() || set_.Add(p, nullptr) < 0) continue;
        set_tenant_.push_back(t);
        one_by_one_.push_back(std::move(alone));
      }
    }
    has_set_ = !set_tenant_.empty() && set_.Compile();
  }

  static RE2::Options set_options() {
    RE2::Options options(RE2::Quiet);
    options.set_max_mem(64 << 20);  // thousands of patterns in one DFA; states are built lazily
    return options;
  }

  // The tenant index, or SIZE_MAX.
  size_t match(std::string_view ns) const {
    size_t best = SIZE_MAX;
    if (auto it = literals_.find(ns); it != literals_.end()) best = it->second;
    if (set_tenant_.empty()) return best;
    const re2::StringPiece text(ns.data(), ns.size());
    thread_local std::vector<int> matched;
    matched.clear();
    RE2::Set::ErrorInfo error{RE2::Set::kNoError};
    if (has_set_ && set_.Match(text, &matched, &error)) {
      for (int i : matched) best = std::min(best, set_tenant_[static_cast<size_t>(i)]);
    } else if (!has_set_ || error.kind != RE2::Set::kNoError) {
      // The set did not compile or its DFA ran out of memory: one pattern at a time, in order.
      for (size_t i = 0; i < one_by_one_.size() && set_tenant_[i] < best; ++i) {
        if (RE2::FullMatch(text, *one_by_one_[i])) best = set_tenant_[i];
      }
    }
    return best;
  }

 private:
  std::map<std::string, size_t, std::less<>> literals_;
  RE2::Set set_;
  std::vector<size_t> set_tenant_;                // tenant of each pattern in set_
  std::vector<std::unique_ptr<RE2>> one_by_one_;  // the same patterns, for the fallback
  bool has_set_ = false;
};

// Node labels that every node has: selecting them says nothing about GPU pools, so a class that
// also pins e.g. the architecture does not turn every arm64 pod into a GPU009 finding.
bool is_generic_node_label(std::string_view key) {
  static const std::set<std::string_view> kGeneric = {"kubernetes.io/arch",
                                                      "kubernetes.io/os",
                                                      "kubernetes.io/hostname",
                                                      "topology.kubernetes.io/zone",
                                                      "topology.kubernetes.io/region",
                                                      "node.kubernetes.io/instance-type",
                                                      "beta.kubernetes.io/arch",
                                                      "beta.kubernetes.io/os",
                                                      "beta.kubernetes.io/instance-type",
                                                      "failure-domain.beta.kubernetes.io/zone",
                                                      "failure-domain.beta.kubernetes.io/region"};
  return kGeneric.count(key) > 0;
}

constexpr std::string_view kMigPrefix = "nvidia.com/mig-";

}  // namespace

struct CompiledPolicy::Patterns {
  std::unique_ptr<TenantMatcher> tenants;
  std::unique_ptr<NamespaceMatcher> exempt;
  std::unique_ptr<NamespaceMatcher> node_agents;
  // "username\ngroup/Kind" of every spec.controllers entry (a newline ends no username).
  std::set<std::string, std::less<>> controllers;
  std::map<std::string, size_t, std::less<>> classes;           // name -> index
  std::map<std::string, size_t, std::less<>> priority_classes;  // name -> index
  std::map<std::string, Action, std::less<>> rule_actions;
  std::set<std::string, std::less<>> gpu_resources;
  bool gpu_resources_qualified = true;  // every name in gpu_resources has a '/'
  std::set<std::string, std::less<>> taint_keys;
  std::set<std::string, std::less<>> label_keys;
  const PriorityClassDecl* global_default = nullptr;
  std::map<std::string, DeviceClassMatch, std::less<>> device_classes;
};

std::shared_ptr<const CompiledPolicy> CompiledPolicy::compile(Policy policy) {
  return std::shared_ptr<const CompiledPolicy>(new CompiledPolicy(std::move(policy)));
}

CompiledPolicy::CompiledPolicy(Policy policy)
    : policy_(std::move(policy)), patterns_(std::make_unique<Patterns>()) {
  Patterns& p = *patterns_;
  p.tenants = std::make_unique<TenantMatcher>(policy_.tenants);
  p.exempt = std::make_unique<NamespaceMatcher>(policy_.enforcement.exempt_namespaces);
  p.node_agents = std::make_unique<NamespaceMatcher>(policy_.enforcement.node_agent_namespaces);
  for (const ControllerIdentity& c : policy_.controllers) {
    for (const GroupKind& k : c.kinds)
      p.controllers.insert(c.username + "\n" + k.group + "/" + k.kind);
  }
  for (size_t i = 0; i < policy_.classes.size(); ++i) {
    const GpuClass& c = policy_.classes[i];
    p.classes.emplace(c.name, i);  // the first of duplicate names wins
    for (const Taint& taint : c.taints) p.taint_keys.insert(taint.key);
    for (const DeviceClassMapping& m : c.device_classes) {
      p.device_classes.emplace(m.name, DeviceClassMatch{&c, &m});  // the first mapping wins
    }
    for (const auto& [key, values] : c.node_selector) {
      if (!is_generic_node_label(key)) p.label_keys.insert(key);
    }
  }
  for (size_t i = 0; i < policy_.priority_classes.size(); ++i) {
    const PriorityClassDecl& pc = policy_.priority_classes[i];
    p.priority_classes.emplace(pc.name, i);
    if (pc.global_default && !p.global_default) p.global_default = &pc;
  }
  for (const auto& [id, action] : policy_.enforcement.rules) p.rule_actions.emplace(id, action);
  p.gpu_resources.insert("nvidia.com/gpu");
  p.gpu_resources.insert("nvidia.com/gpu.shared");
  for (const std::string& r : policy_.gpu_resources) p.gpu_resources.insert(r);
  for (const auto& [device_class, match] : p.device_classes) {
    p.gpu_resources.insert(std::string(kImplicitDeviceClassResource) + device_class);
  }
  p.gpu_resources_qualified =
      std::all_of(p.gpu_resources.begin(), p.gpu_resources.end(),
                  [](const std::string& r) { return r.find('/') != r.npos; });
}

CompiledPolicy::~CompiledPolicy() = default;

const Tenant* CompiledPolicy::tenant_for(std::string_view ns) const {
  const size_t t = patterns_->tenants->match(ns);
  return t == SIZE_MAX ? nullptr : &policy_.tenants[t];
}

bool CompiledPolicy::is_exempt(std::string_view ns) const { return patterns_->exempt->matches(ns); }

bool CompiledPolicy::is_node_agent_namespace(std::string_view ns) const {
  return patterns_->node_agents->matches(ns);
}

bool CompiledPolicy::names_controller(std::string_view username, std::string_view group,
                                      std::string_view kind) const {
  if (username.empty() || patterns_->controllers.empty()) return false;
  std::string key;
  key.reserve(username.size() + group.size() + kind.size() + 2);
  key.append(username).append("\n").append(group).append("/").append(kind);
  return patterns_->controllers.count(key) > 0;
}

const GpuClass* CompiledPolicy::find_class(std::string_view name) const {
  auto it = patterns_->classes.find(name);
  return it == patterns_->classes.end() ? nullptr : &policy_.classes[it->second];
}

CompiledPolicy::DeviceClassMatch CompiledPolicy::find_device_class(
    std::string_view device_class) const {
  auto it = patterns_->device_classes.find(device_class);
  return it == patterns_->device_classes.end() ? DeviceClassMatch{} : it->second;
}

const PriorityClassDecl* CompiledPolicy::find_priority_class(std::string_view name) const {
  auto it = patterns_->priority_classes.find(name);
  return it == patterns_->priority_classes.end() ? nullptr : &policy_.priority_classes[it->second];
}

const PriorityClassDecl* CompiledPolicy::global_default_priority_class() const {
  return patterns_->global_default;
}

CompiledPolicy::DeviceClassMatch CompiledPolicy::implicit_device_class(
    std::string_view resource) const {
  if (!resource.starts_with(kImplicitDeviceClassResource)) return {};
  return find_device_class(resource.substr(kImplicitDeviceClassResource.size()));
}

bool CompiledPolicy::is_gpu_resource(std::string_view resource) const {
  // A container's other resources (cpu, memory, ephemeral-storage, hugepages-2Mi) have no '/';
  // while every GPU name has one, they are told apart without a lookup.
  if (patterns_->gpu_resources_qualified && resource.find('/') == std::string_view::npos) {
    return false;
  }
  if (resource.size() > kMigPrefix.size() && resource.substr(0, kMigPrefix.size()) == kMigPrefix) {
    return true;
  }
  return patterns_->gpu_resources.find(resource) != patterns_->gpu_resources.end();
}

bool CompiledPolicy::is_nvidia_runtime_class(std::string_view name) const {
  // The GPU Operator creates the RuntimeClass `nvidia`, and with CDI enabled `nvidia-cdi` and
  // `nvidia-legacy` (gpu-operator docs, "Container Device Interface Support").
  if (name == "nvidia" || name == "nvidia-cdi" || name == "nvidia-legacy") return true;
  const std::vector<std::string>& extra = policy_.nvidia_runtime_classes;
  return std::find(extra.begin(), extra.end(), name) != extra.end();
}

Action CompiledPolicy::action_for(std::string_view rule_id, Action default_action) const {
  if (auto it = patterns_->rule_actions.find(rule_id); it != patterns_->rule_actions.end()) {
    return it->second;
  }
  const Enforcement& e = policy_.enforcement;
  if (rule_id == "GPU001") {
    // `fix` repairs a missing request or limit; requests and limits that differ remain a
    // violation, which `fix` denies (the API server would reject the pod anyway).
    return e.requests_equal_limits == Action::kFix ? Action::kDeny : e.requests_equal_limits;
  }
  if (rule_id == "GPU009") {
    // `strip` removes the offending tolerations and selectors; whatever it cannot remove
    // (the key-less wildcard; a nodeName on a GPU pool's node, with the cluster's Nodes known)
    // is still denied.
    return e.non_gpu_on_gpu_pool == Action::kStrip ? Action::kDeny : e.non_gpu_on_gpu_pool;
  }
  if (rule_id == "GPU014") return e.fragmentation;
  if (rule_id == "GPU024") {
    // `fix` sets NVIDIA_VISIBLE_DEVICES=void where nothing is set; explicit settings are denied.
    return e.gpu_visibility == Action::kFix ? Action::kDeny : e.gpu_visibility;
  }
  return default_action;
}

Action CompiledPolicy::action_for(const Tenant* tenant, std::string_view rule_id,
                                  Action default_action) const {
  if (tenant != nullptr) {
    for (const auto& [id, action] : tenant->enforcement.rules) {
      if (id == rule_id) return action;
    }
  }
  return action_for(rule_id, default_action);
}

bool CompiledPolicy::is_gpu_pool_taint_key(std::string_view key) const {
  return patterns_->taint_keys.find(key) != patterns_->taint_keys.end();
}

bool CompiledPolicy::is_gpu_pool_label_key(std::string_view key) const {
  return patterns_->label_keys.find(key) != patterns_->label_keys.end();
}

}  // namespace gpuadmit
