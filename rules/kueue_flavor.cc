#include "rules/kueue_flavor.h"

#include <algorithm>
#include <set>
#include <string>

#include "rules/rule_support.h"

namespace gpuadmit {

// The flavor's labels agree with class c: c selects at least one of them, and every one c
// selects has a value c allows.
bool flavor_selects_class(const GpuClass& c, const Json& labels) {
  bool any = false;
  for (const auto& [key, values] : c.node_selector) {
    const Json* value = find_member(labels, key);
    if (value == nullptr) continue;
    if (!value->is_string()) return false;
    any = true;
    if (std::find(values.begin(), values.end(), value->get_ref<const std::string&>()) ==
        values.end())
      return false;
  }
  return any;
}

namespace {

// Node labels that say a node has GPUs, whatever the policy: NVIDIA GPU Feature Discovery's and
// the clouds' accelerator labels. A flavor naming one is a GPU flavor; a flavor that names only
// labels a class also uses for other nodes (karpenter.sh/nodepool, an AKS agent pool) is judged
// only when one of its values is a class's.
bool gpu_label(std::string_view key) {
  static constexpr std::string_view kKeys[] = {"nvidia.com/gpu.product",
                                               "nvidia.com/gpu.present",
                                               "nvidia.com/gpu.count",
                                               "nvidia.com/mig.config",
                                               "nvidia.com/mig.strategy",
                                               "cloud.google.com/gke-accelerator",
                                               "karpenter.k8s.aws/instance-gpu-name",
                                               "karpenter.k8s.aws/instance-gpu-count",
                                               "kubernetes.azure.com/accelerator"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

// Some class allows the label's value.
bool class_value(const std::vector<GpuClass>& classes, const std::string& key, const Json& value) {
  if (!value.is_string()) return false;
  for (const GpuClass& c : classes)
    for (const auto& [k, values] : c.node_selector)
      if (k == key && std::find(values.begin(), values.end(),
                                value.get_ref<const std::string&>()) != values.end())
        return true;
  return false;
}

class KueueFlavorRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU031"; }
  std::string_view name() const override { return "KueueFlavorMatchesClass"; }
  std::string_view summary() const override {
    return "a Kueue ResourceFlavor that names a class's node labels must select a class's nodes";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return kind == "ResourceFlavor" && api_version.starts_with("kueue.x-k8s.io/");
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    const Json* spec = find_member(object, "spec");
    const Json* labels = spec != nullptr ? find_member(*spec, "nodeLabels") : nullptr;
    if (labels == nullptr || !labels->is_object()) return;
    const std::vector<GpuClass>& classes = ctx.policy->policy().classes;
    std::set<std::string> class_keys;
    for (const GpuClass& c : classes)
      for (const auto& entry : c.node_selector) class_keys.insert(entry.first);
    std::vector<std::string> named;  // the flavor's labels that are class labels
    bool gpu_flavor = false;
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (!class_keys.count(it.key())) continue;
      named.push_back(it.key() + "=" + rule_support::written(it.value()));
      gpu_flavor = gpu_flavor || gpu_label(it.key()) || class_value(classes, it.key(), it.value());
    }
    if (named.empty() || !gpu_flavor) return;
    for (const GpuClass& c : classes)
      if (flavor_selects_class(c, *labels)) return;
    const Json* metadata = find_member(object, "metadata");
    const std::string name =
        metadata != nullptr ? std::string(string_member(*metadata, "name")) : std::string();
    out.push_back({"ResourceFlavor " + name + " puts the workloads it admits on nodes labelled " +
                       join(named) +
                       ", which no class of the policy selects: the pods get both Kueue's node "
                       "labels and their class's node affinity and never schedule; use a class's "
                       "label values, or add a class for these nodes",
                   "spec.nodeLabels"});
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_kueue_flavor_rule() {
  return std::make_unique<KueueFlavorRule>();
}

}  // namespace gpuadmit
