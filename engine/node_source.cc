#include "engine/node_source.h"

#include <algorithm>

#include "engine/scheduling.h"

namespace gpuadmit {
namespace {

const std::string* label_of(const ClusterNode& node, std::string_view key) {
  const auto it = std::lower_bound(
      node.labels.begin(), node.labels.end(), key,
      [](const auto& label, std::string_view k) { return std::string_view(label.first) < k; });
  return it != node.labels.end() && it->first == key ? &it->second : nullptr;
}

// Every key of `selector` is a label of the node with one of its values (a nodeSelector of the
// policy: key → allowed values).
bool labels_match(const ClusterNode& node, const LabelSelectorValues& selector) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& entry) {
    const std::string* value = label_of(node, entry.first);
    return value != nullptr &&
           std::find(entry.second.begin(), entry.second.end(), *value) != entry.second.end();
  });
}

// The node carries the labels the class's pods are sent to: its nodeSelector, or with MIG
// strategy single the product suffixed with one of the class's profiles, as GPU Feature
// Discovery labels such a node (and fleet/node_fit.cc reads it).
bool in_class_by_labels(const ClusterNode& node, const GpuClass& c) {
  if (c.node_selector.empty()) return false;
  if (labels_match(node, c.node_selector)) return true;
  if (!c.mig || c.mig->strategy != MigConfig::Strategy::kSingle) return false;
  return std::any_of(c.mig->profiles.begin(), c.mig->profiles.end(), [&](const std::string& p) {
    return labels_match(node, class_node_labels(c, p));
  });
}

bool in_class_by_taints(const ClusterNode& node, const GpuClass& c) {
  return std::any_of(c.taints.begin(), c.taints.end(), [&](const Taint& t) {
    return std::any_of(node.taints.begin(), node.taints.end(), [&](const Taint& n) {
      return n.key == t.key && n.effect == t.effect && (t.value.empty() || n.value == t.value);
    });
  });
}

}  // namespace

std::optional<ClusterNode> parse_node(const Json& object) {
  const Json* metadata = object.is_object() ? find_member(object, "metadata") : nullptr;
  if (metadata == nullptr || !metadata->is_object()) return std::nullopt;
  ClusterNode node;
  node.name = std::string(string_member(*metadata, "name"));
  if (node.name.empty()) return std::nullopt;
  if (const Json* labels = find_member(*metadata, "labels"); labels && labels->is_object()) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (it.value().is_string()) node.labels.emplace_back(it.key(), it.value().get<std::string>());
    }
    std::sort(node.labels.begin(), node.labels.end());
  }
  const Json* spec = find_member(object, "spec");
  const Json* taints =
      spec != nullptr && spec->is_object() ? find_member(*spec, "taints") : nullptr;
  if (taints != nullptr && taints->is_array()) {
    for (const Json& t : *taints) {
      if (!t.is_object() || string_member(t, "key").empty()) continue;
      node.taints.push_back(Taint{std::string(string_member(t, "key")),
                                  std::string(string_member(t, "value")),
                                  std::string(string_member(t, "effect"))});
    }
  }
  return node;
}

std::vector<std::string> gpu_pools_of_node(const ClusterNode& node, const CompiledPolicy& policy) {
  std::vector<std::string> pools;
  for (const GpuClass& c : policy.policy().classes) {
    if (in_class_by_labels(node, c)) pools.push_back(c.name);
  }
  if (!pools.empty()) return pools;
  for (const GpuClass& c : policy.policy().classes) {
    if (in_class_by_taints(node, c)) pools.push_back(c.name);
  }
  return pools;
}

StaticNodeSource::StaticNodeSource(const std::vector<Json>& nodes) {
  for (const Json& object : nodes) {
    std::optional<ClusterNode> node = parse_node(object);
    if (!node) continue;
    std::erase_if(nodes_, [&](const ClusterNode& n) { return n.name == node->name; });
    nodes_.push_back(std::move(*node));
  }
}

std::optional<ClusterNode> StaticNodeSource::find(std::string_view name) const {
  for (const ClusterNode& n : nodes_) {
    if (n.name == name) return n;
  }
  return std::nullopt;
}

}  // namespace gpuadmit
