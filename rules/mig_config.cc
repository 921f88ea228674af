#include "rules/mig_config.h"

#include <algorithm>
#include <set>
#include <string>

#include "rules/config_documents.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using rule_support::EmbeddedConfig;
using rule_support::member_path;

// The MIG manager's node label: the name of the mig-config to apply (GPU Operator docs, "GPU
// Operator with MIG").
constexpr std::string_view kMigConfigLabel = "nvidia.com/mig.config";

// The profiles one named mig-config creates: the mig-devices keys with a count > 0 of its
// entries that enable MIG. An entry with a `device-filter` (PCI device ids) applies only to GPUs
// of those models, which the policy does not name: its profiles count as created, never as
// created on a class's nodes (`unfiltered`).
struct Created {
  std::set<std::string> all;
  std::set<std::string> unfiltered;
};

Created profiles_of(const Json& entries) {
  Created out;
  if (!entries.is_array()) return out;
  for (const Json& e : entries) {
    const Json* enabled = find_member(e, "mig-enabled");
    const Json* devices = find_member(e, "mig-devices");
    if (enabled == nullptr || *enabled != true || devices == nullptr || !devices->is_object())
      continue;
    const bool filtered = find_member(e, "device-filter") != nullptr;
    for (auto it = devices->begin(); it != devices->end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() <= 0) continue;
      out.all.insert(it.key());
      if (!filtered) out.unfiltered.insert(it.key());
    }
  }
  return out;
}

std::vector<std::string> bound_configs(const GpuClass& c) {
  for (const auto& [label, values] : c.node_selector)
    if (label == kMigConfigLabel) return values;
  return {};
}

std::string joined(const std::set<std::string>& items) {
  return join(std::vector<std::string>(items.begin(), items.end()));
}

class MigConfigRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU029"; }
  std::string_view name() const override { return "MigConfigMatchesPolicy"; }
  std::string_view summary() const override {
    return "MIG configurations (mig-parted, the GPU Operator's ClusterPolicy) must create the MIG "
           "profiles the policy's classes allow, with the classes' MIG strategy";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return rule_support::is_config_map(api_version, kind) ||
           (api_version.empty() && kind.empty()) || is_cluster_policy(api_version, kind);
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    const Policy& policy = ctx.policy->policy();
    if (is_cluster_policy(string_member(object, "apiVersion"), string_member(object, "kind"))) {
      check_cluster_policy(object, policy, out);
      return;
    }
    for (const EmbeddedConfig& cfg : rule_support::config_documents(object)) {
      if (rule_support::is_mig_parted_config(cfg.value)) check_configs(cfg, policy, out);
    }
  }

 private:
  static bool is_cluster_policy(std::string_view api_version, std::string_view kind) {
    return api_version == "nvidia.com/v1" && kind == "ClusterPolicy";
  }

  static void check_configs(const EmbeddedConfig& cfg, const Policy& policy,
                            std::vector<Violation>& out) {
    const Json* configs = find_member(cfg.value, "mig-configs");
    if (configs == nullptr || !configs->is_object()) return;
    const std::string what =
        "the mig-parted config" + (cfg.key.empty() ? std::string() : " \"" + cfg.key + "\"");
    const std::string configs_path = member_path(cfg.path, "mig-configs");
    std::set<std::string> anywhere;
    for (auto it = configs->begin(); it != configs->end(); ++it) {
      for (const std::string& p : profiles_of(it.value()).all) anywhere.insert(p);
    }
    for (const GpuClass& c : policy.classes) {
      if (!c.mig) continue;
      const std::vector<std::string> names = bound_configs(c);
      std::set<std::string> created, on_every_gpu;
      for (const std::string& name : names) {
        const Json* entries = find_member(*configs, name);
        if (entries == nullptr) {
          out.push_back({"class " + c.name + " selects nodes labelled " +
                             std::string(kMigConfigLabel) + "=" + name + ", which " + what +
                             " does not define: the MIG manager cannot apply it; add mig-configs." +
                             name + " or select a config it defines",
                         configs_path});
          continue;
        }
        const Created made = profiles_of(*entries);
        created.insert(made.all.begin(), made.all.end());
        on_every_gpu.insert(made.unfiltered.begin(), made.unfiltered.end());
      }
      const std::set<std::string>& available = names.empty() ? anywhere : created;
      const std::string where = names.empty()
                                    ? "no configuration of " + what
                                    : "none of its MIG configurations (" + join(names) + ")";
      for (const std::string& p : c.mig->profiles) {
        if (available.count(p)) continue;
        out.push_back({"class " + c.name + " allows MIG profile " + p + ", which " + where +
                           " creates: pods asking for nvidia.com/mig-" + p +
                           " stay Pending; add it to a mig-devices list or remove it from the "
                           "class's mig.profiles",
                       configs_path});
      }
      if (names.empty()) continue;
      std::set<std::string> idle;
      for (const std::string& p : on_every_gpu) {
        if (std::find(c.mig->profiles.begin(), c.mig->profiles.end(), p) == c.mig->profiles.end())
          idle.insert(p);
      }
      if (!idle.empty()) {
        out.push_back({"the MIG configurations of class " + c.name + " (" + join(names) +
                           ") create " + joined(idle) +
                           " slices, which the class does not allow (mig.profiles): they are never "
                           "requested; add them to the class or change the configurations",
                       configs_path});
      }
    }
  }

  // ClusterPolicy spec.mig.strategy (gpu-operator api/nvidia/v1 MIGSpec: none, single or mixed,
  // for the device plugin and GFD of every node). The CRD has no default (the Helm chart writes
  // single): a ClusterPolicy that does not say is not judged.
  static void check_cluster_policy(const Json& object, const Policy& policy,
                                   std::vector<Violation>& out) {
    const Json* spec = find_member(object, "spec");
    const Json* mig = spec != nullptr ? find_member(*spec, "mig") : nullptr;
    const std::string strategy =
        mig != nullptr ? std::string(string_member(*mig, "strategy")) : std::string();
    if (strategy.empty()) return;
    const Json* metadata = find_member(object, "metadata");
    const std::string name =
        metadata != nullptr ? std::string(string_member(*metadata, "name")) : "";
    for (const GpuClass& c : policy.classes) {
      if (!c.mig) continue;
      const std::string expected =
          c.mig->strategy == MigConfig::Strategy::kSingle ? "single" : "mixed";
      if (expected == strategy) continue;
      out.push_back({"ClusterPolicy " + name + " sets MIG strategy " + strategy +
                         " for every node, class " + c.name + " says " + expected +
                         " (mig.strategy); set spec.mig.strategy: " + expected +
                         " or change the class",
                     "spec.mig.strategy"});
    }
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_mig_config_rule() {
  return std::make_unique<MigConfigRule>();
}

}  // namespace gpuadmit
