#include "rules/device_plugin_config.h"

#include <optional>
#include <string>

#include "rules/config_documents.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using rule_support::EmbeddedConfig;
using rule_support::member_path;

// The GPU Operator selects a node's config by this node label (its value: a key of the
// ConfigMap), GPU Operator docs, "Time-Slicing GPUs in Kubernetes".
constexpr std::string_view kConfigLabel = "nvidia.com/device-plugin.config";

// What one config does with nvidia.com/gpu.
struct Sharing {
  std::string block;  // "sharing.timeSlicing" or "sharing.mps"
  int64_t replicas = 0;
  std::string advertised;  // nvidia.com/gpu, nvidia.com/gpu.shared or a `rename`
  std::string rename_path;
  bool fail_greater_than_one = false;
  std::string entry_path;  // ...resources[i]
};

std::optional<Sharing> gpu_sharing(const EmbeddedConfig& cfg) {
  const Json* sharing = find_member(cfg.value, "sharing");
  if (sharing == nullptr || !sharing->is_object()) return std::nullopt;
  // MPS wins over time-slicing when both replicate (api/config/v1/sharing.go SharingStrategy).
  for (const char* kind : {"mps", "timeSlicing"}) {
    const Json* block = find_member(*sharing, kind);
    const Json* resources = block != nullptr ? find_member(*block, "resources") : nullptr;
    if (resources == nullptr || !resources->is_array()) continue;
    const std::string block_path = member_path(cfg.path, std::string("sharing.") + kind);
    for (size_t i = 0; i < resources->size(); ++i) {
      const Json& r = (*resources)[i];
      if (!r.is_object() || string_member(r, "name") != rule_support::kGpuResource) continue;
      const Json* replicas = find_member(r, "replicas");
      if (replicas == nullptr || !replicas->is_number_integer()) continue;
      Sharing s;
      s.block = std::string("sharing.") + kind;
      s.replicas = replicas->get<int64_t>();
      s.entry_path = block_path + ".resources[" + std::to_string(i) + "]";
      const Json* by_default = find_member(*block, "renameByDefault");
      const bool rename_by_default = by_default != nullptr && *by_default == true;
      s.advertised = std::string(string_member(r, "rename"));
      s.rename_path = s.entry_path + ".rename";
      if (s.advertised.empty()) {
        s.advertised = rename_by_default ? std::string(rule_support::kSharedGpuResource)
                                         : std::string(rule_support::kGpuResource);
        s.rename_path = block_path + ".renameByDefault";
      }
      const Json* fail = find_member(*block, "failRequestsGreaterThanOne");
      s.fail_greater_than_one = fail != nullptr && *fail == true;
      return s;
    }
  }
  return std::nullopt;
}

bool bound_by_label(const GpuClass& c, std::string_view key) {
  for (const auto& [label, values] : c.node_selector) {
    if (label != kConfigLabel) continue;
    for (const std::string& v : values)
      if (v == key) return true;
  }
  return false;
}

bool uses_label(const GpuClass& c) {
  for (const auto& entry : c.node_selector)
    if (entry.first == kConfigLabel) return true;
  return false;
}

// The classes a config serves: those whose nodes select it by label; else the class named like
// its key; else, for the only config of a policy that binds none by label, every class.
std::vector<const GpuClass*> served(const Policy& policy, const EmbeddedConfig& cfg,
                                    size_t configs) {
  std::vector<const GpuClass*> out;
  bool any_label = false;
  for (const GpuClass& c : policy.classes) {
    any_label = any_label || uses_label(c);
    if (!cfg.key.empty() && bound_by_label(c, cfg.key)) out.push_back(&c);
  }
  if (!out.empty()) return out;
  for (const GpuClass& c : policy.classes)
    if (!cfg.key.empty() && c.name == cfg.key && !uses_label(c)) return {&c};
  if (configs == 1 && !any_label) {
    for (const GpuClass& c : policy.classes) out.push_back(&c);
  }
  return out;
}

std::string bool_text(bool b) { return b ? "true" : "false"; }

class DevicePluginConfigRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU028"; }
  std::string_view name() const override { return "DevicePluginConfigMatchesPolicy"; }
  std::string_view summary() const override {
    return "the NVIDIA device plugin's config must share and advertise GPUs as the policy's "
           "classes say (time-slicing replicas, renameByDefault, failRequestsGreaterThanOne, "
           "MIG strategy)";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    // A config file of its own has neither apiVersion nor kind.
    return rule_support::is_config_map(api_version, kind) || (api_version.empty() && kind.empty());
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    std::vector<EmbeddedConfig> configs;
    for (EmbeddedConfig& c : rule_support::config_documents(object))
      if (rule_support::is_device_plugin_config(c.value)) configs.push_back(std::move(c));
    const std::string owner = owner_of(object);
    for (const EmbeddedConfig& cfg : configs) {
      const std::string what = "device plugin config" +
                               (cfg.key.empty() ? std::string() : " \"" + cfg.key + "\"") + owner;
      for (const GpuClass* c : served(ctx.policy->policy(), cfg, configs.size())) {
        check_sharing(cfg, what, *c, out);
        check_mig(cfg, what, *c, out);
      }
    }
  }

 private:
  static std::string owner_of(const Json& object) {
    const Json* metadata = find_member(object, "metadata");
    if (metadata == nullptr) return "";
    return " of ConfigMap " + std::string(string_member(*metadata, "name"));
  }

  static void check_sharing(const EmbeddedConfig& cfg, const std::string& what, const GpuClass& c,
                            std::vector<Violation>& out) {
    const std::optional<Sharing> s = gpu_sharing(cfg);
    const std::optional<TimeSlicing>& ts = c.time_slicing;
    if (!s && !ts) return;
    if (!s) {
      out.push_back({what + " shares no nvidia.com/gpu, but class " + c.name +
                         " is time-sliced (timeSlicing.replicas " + std::to_string(ts->replicas) +
                         "): each GPU is advertised once where the policy counts " +
                         std::to_string(ts->replicas) +
                         " slots; add sharing.timeSlicing.resources [{name: nvidia.com/gpu, "
                         "replicas: " +
                         std::to_string(ts->replicas) + "}]",
                     member_path(cfg.path, "sharing")});
      return;
    }
    if (!ts) {
      out.push_back({what + " shares each GPU " + std::to_string(s->replicas) + " ways (" +
                         s->block + "), but class " + c.name +
                         " is not time-sliced in the policy, which counts a whole GPU per "
                         "nvidia.com/gpu; add timeSlicing: {replicas: " +
                         std::to_string(s->replicas) + "} to class " + c.name +
                         ", or remove the sharing",
                     s->entry_path + ".replicas"});
      return;
    }
    if (s->replicas != ts->replicas) {
      out.push_back({what + " shares each GPU " + std::to_string(s->replicas) + " ways (" +
                         s->block + "), class " + c.name + " says " + std::to_string(ts->replicas) +
                         " (timeSlicing.replicas); make them equal",
                     s->entry_path + ".replicas"});
    }
    const std::string expected = ts->rename_by_default
                                     ? std::string(rule_support::kSharedGpuResource)
                                     : std::string(rule_support::kGpuResource);
    if (s->advertised != expected) {
      out.push_back({what + " advertises the shared GPUs as " + s->advertised + ", class " +
                         c.name + " expects " + expected + " (timeSlicing.renameByDefault: " +
                         bool_text(ts->rename_by_default) + "); make them agree",
                     s->rename_path});
    }
    if (s->fail_greater_than_one != ts->fail_requests_greater_than_one) {
      out.push_back(
          {what + " has failRequestsGreaterThanOne: " + bool_text(s->fail_greater_than_one) +
               ", class " + c.name + " says " + bool_text(ts->fail_requests_greater_than_one) +
               " (timeSlicing.failRequestsGreaterThanOne); make them agree",
           member_path(cfg.path, s->block + ".failRequestsGreaterThanOne")});
    }
  }

  // Only `mixed` advertises MIG slices as nvidia.com/mig-<profile>; `single` advertises them as
  // nvidia.com/gpu; `none` (the default) ignores MIG (k8s-device-plugin README, "Configuration
  // Option Details", MIG_STRATEGY).
  static void check_mig(const EmbeddedConfig& cfg, const std::string& what, const GpuClass& c,
                        std::vector<Violation>& out) {
    if (!c.mig) return;
    const Json* flags = find_member(cfg.value, "flags");
    std::string strategy =
        flags != nullptr ? std::string(string_member(*flags, "migStrategy")) : "";
    if (strategy.empty()) strategy = "none";
    const std::string expected =
        c.mig->strategy == MigConfig::Strategy::kSingle ? "single" : "mixed";
    if (strategy == expected) return;
    out.push_back({what + " has MIG strategy " + strategy + ", class " + c.name +
                       " hands out MIG slices with strategy " + expected +
                       " (mig.strategy); set flags.migStrategy: " + expected,
                   member_path(cfg.path, "flags.migStrategy")});
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_device_plugin_config_rule() {
  return std::make_unique<DevicePluginConfigRule>();
}

}  // namespace gpuadmit
