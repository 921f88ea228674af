#include "rules/non_gpu_on_gpu_pool.h"

#include <algorithm>

#include "engine/controllers.h"
#include "engine/node_source.h"
#include "engine/scheduling.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// "nvidia.com/gpu:NoSchedule", "pool.example.com/a100=true:NoSchedule" (kubectl taint syntax).
std::string taint_text(const Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

// The classes whose nodeSelector has `key` with a value among `values` (all of them when
// `values` is null: operator Exists).
std::vector<std::string> classes_selected(const CompiledPolicy& policy, std::string_view key,
                                          const std::vector<std::string>* values) {
  std::vector<std::string> names;
  for (const GpuClass& c : policy.policy().classes) {
    for (const auto& [label, allowed] : c.node_selector) {
      if (label != key) continue;
      const bool hit = values == nullptr ||
                       std::any_of(allowed.begin(), allowed.end(),
                                   [&](const std::string& v) { return contains(*values, v); });
      if (hit && !contains(names, c.name)) names.push_back(c.name);
    }
  }
  return names;
}

std::string pools_text(const std::vector<std::string>& classes) {
  return (classes.size() == 1 ? "GPU pool " : "GPU pools ") + join(classes);
}

constexpr std::string_view kWhatToDo =
    "but the pod asks for no GPU; remove it, or request a GPU if the pod needs one";

// Tolerations of a GPU class's taints.
void report_tolerations(const CompiledPolicy& policy, const Json& spec, const std::string& path,
                        std::vector<Violation>& out) {
  if (const Json* tolerations = find_member(spec, "tolerations");
      tolerations != nullptr && tolerations->is_array()) {
    for (size_t i = 0; i < tolerations->size(); ++i) {
      const Json& toleration = (*tolerations)[i];
      const Taint* first = nullptr;
      std::vector<std::string> classes;
      for (const GpuClass& c : policy.policy().classes) {
        for (const Taint& taint : c.taints) {
          if (!tolerates(toleration, taint)) continue;
          if (first == nullptr) first = &taint;
          if (!contains(classes, c.name)) classes.push_back(c.name);
        }
      }
      if (first == nullptr) continue;
      out.push_back(Violation{"toleration " + json_text(toleration) + " tolerates the taint " +
                                  taint_text(*first) + " of " + pools_text(classes) + ", " +
                                  std::string(kWhatToDo),
                              path + ".tolerations[" + std::to_string(i) + "]"});
    }
  }
}

// nodeSelector labels of a GPU class's nodeSelector.
void report_node_selector(const CompiledPolicy& policy, const Json& spec, const std::string& path,
                          std::vector<Violation>& out) {
  if (const Json* selector = find_member(spec, "nodeSelector");
      selector != nullptr && selector->is_object()) {
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      if (!it.value().is_string()) continue;
      const std::vector<std::string> value{it.value().get<std::string>()};
      const std::vector<std::string> classes = classes_selected(policy, it.key(), &value);
      if (classes.empty()) continue;
      out.push_back(Violation{"nodeSelector " + it.key() + "=" + value[0] + " selects " +
                                  pools_text(classes) + ", " + std::string(kWhatToDo),
                              path + ".nodeSelector[\"" + it.key() + "\"]"});
    }
  }
}

// Required node affinity (In or Exists) on a GPU class's nodeSelector labels.
void report_required_affinity(const CompiledPolicy& policy, const Json& spec,
                              const std::string& path, std::vector<Violation>& out) {
  const Json* terms = required_node_selector_terms(spec);
  if (terms == nullptr) return;
  const std::string terms_path = path +
                                 ".affinity.nodeAffinity."
                                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
  for (size_t t = 0; t < terms->size(); ++t) {
    const Json* expressions = find_member((*terms)[t], "matchExpressions");
    if (expressions == nullptr || !expressions->is_array()) continue;
    for (size_t e = 0; e < expressions->size(); ++e) {
      const Json& expression = (*expressions)[e];
      const std::string_view key = string_member(expression, "key");
      const std::string_view op = string_member(expression, "operator");
      std::vector<std::string> values;
      if (const Json* v = find_member(expression, "values"); v != nullptr && v->is_array()) {
        for (const Json& item : *v) {
          if (item.is_string()) values.push_back(item.get<std::string>());
        }
      }
      std::vector<std::string> classes;
      if (op == "In") {
        classes = classes_selected(policy, key, &values);
      } else if (op == "Exists") {
        classes = classes_selected(policy, key, nullptr);
      }
      if (classes.empty()) continue;
      out.push_back(Violation{
          "required node affinity " + std::string(key) + " " + std::string(op) +
              (op == "In" ? " [" + join(values) + "]" : std::string()) + " selects " +
              pools_text(classes) + ", " + std::string(kWhatToDo),
          terms_path + "[" + std::to_string(t) + "].matchExpressions[" + std::to_string(e) + "]"});
    }
  }
}

// spec.nodeName naming a node of a GPU pool. The name bypasses the scheduler, and the kubelet's
// own admission checks the node's NoExecute taints only (pkg/kubelet/lifecycle/predicate.go
// generalFilter: "Kubelet is only interested in the NoExecute taint"), so a GPU pool's
// NoSchedule taint does not keep the pod off. Known only from the cluster's Nodes
// (RequestContext::nodes: `serve --node-watch`): without them, or for a node they do not hold,
// nothing is reported — a pod bound to a node that does not exist is deleted by the pod garbage
// collector once the name stays unknown (pkg/controller/podgc gc_controller.go gcOrphaned).
void report_node_name(const PodContext& ctx, const Json& spec, const std::string& path,
                      std::vector<Violation>& out) {
  const NodeSource* nodes = ctx.request != nullptr ? ctx.request->nodes : nullptr;
  const std::string_view name = string_member(spec, "nodeName");
  if (nodes == nullptr || name.empty() || !nodes->synced()) return;
  const std::optional<ClusterNode> node = nodes->find(name);
  if (!node) return;
  const std::vector<std::string> pools = gpu_pools_of_node(*node, *ctx.policy);
  if (pools.empty()) return;
  out.push_back(Violation{"nodeName " + std::string(name) + " binds the pod to a node of " +
                              pools_text(pools) + ", " + std::string(kWhatToDo),
                          path + ".nodeName"});
}

// GPU nodes are tainted so that only GPU pods land there (SPEC §3 `taints`). A pod that asks for
// no GPU but tolerates those taints or selects the pools' labels takes CPU and memory a GPU pod
// needs, and keeps the node from scaling down. Node agents (the device plugin, DCGM exporter:
// DaemonSets and their pods in the policy's nodeAgents namespaces) must run on every node and
// are excepted, as are exempt namespaces (which never reach rules). Only required placement
// counts: a preferred affinity does not put the pod on a GPU node unless it also tolerates the
// taints, which is reported; so does a nodeName, which puts it there whatever it tolerates. A
// GPU pod bound by name to another class's node needs no rule: the class's required node
// affinity the mutation gave it is checked by the kubelet (AdmissionCheck's NodeAffinity in the
// same generalFilter). With nonGpuOnGpuPool: strip the mutation removes these before rules run.
class NonGpuOnGpuPoolRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU009"; }
  std::string_view name() const override { return "NonGpuPodOffGpuPools"; }
  std::string_view summary() const override {
    return "a non-GPU pod must not tolerate or select a GPU pool's taints or labels, nor be bound "
           "to a GPU pool's node by nodeName";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (ctx.gpu_pod) return;
    if (runs_on_every_node(ctx)) return;
    const CompiledPolicy& policy = *ctx.policy;
    const Json& spec = pod.spec();
    const std::string& path = pod.location().path;

    report_tolerations(policy, spec, path, out);
    report_node_selector(policy, spec, path, out);
    report_required_affinity(policy, spec, path, out);
    report_node_name(ctx, spec, path, out);
  }
};

}  // namespace

std::unique_ptr<const Rule> make_non_gpu_on_gpu_pool_rule() {
  return std::make_unique<NonGpuOnGpuPoolRule>();
}

}  // namespace gpuadmit
