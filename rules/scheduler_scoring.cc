#include "rules/scheduler_scoring.h"

#include <string>

#include "rules/config_documents.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using rule_support::EmbeddedConfig;
using rule_support::member_path;

bool is_scheduler_config(const Json& value) {
  return string_member(value, "kind") == "KubeSchedulerConfiguration" &&
         string_member(value, "apiVersion").starts_with("kubescheduler.config.k8s.io/");
}

class SchedulerScoringRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU030"; }
  std::string_view name() const override { return "GpuBinPackingScoring"; }
  std::string_view summary() const override {
    return "the scheduler must not score GPU resources with LeastAllocated, which spreads GPU pods "
           "and strands GPUs; use MostAllocated or RequestedToCapacityRatio";
  }
  Action default_action() const override { return Action::kWarn; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return rule_support::is_config_map(api_version, kind) ||
           (kind == "KubeSchedulerConfiguration" &&
            api_version.starts_with("kubescheduler.config.k8s.io/"));
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    for (const EmbeddedConfig& cfg : rule_support::config_documents(object)) {
      if (!is_scheduler_config(cfg.value)) continue;
      const Json* profiles = find_member(cfg.value, "profiles");
      if (profiles == nullptr || !profiles->is_array()) continue;
      for (size_t i = 0; i < profiles->size(); ++i) {
        check_profile((*profiles)[i], member_path(cfg.path, "profiles[" + std::to_string(i) + "]"),
                      *ctx.policy, out);
      }
    }
  }

 private:
  // A profile's NodeResourcesFit args. Without a scoringStrategy the scheduler defaults to
  // LeastAllocated over cpu and memory (pkg/scheduler/apis/config/v1 defaults.go,
  // SetDefaults_NodeResourcesFitArgs): GPUs are then not scored at all, which is not this rule's
  // case.
  static void check_profile(const Json& profile, const std::string& path,
                            const CompiledPolicy& policy, std::vector<Violation>& out) {
    const Json* configs = find_member(profile, "pluginConfig");
    if (configs == nullptr || !configs->is_array()) return;
    std::string scheduler(string_member(profile, "schedulerName"));
    if (scheduler.empty()) scheduler = "default-scheduler";
    for (size_t j = 0; j < configs->size(); ++j) {
      const Json& pc = (*configs)[j];
      if (string_member(pc, "name") != "NodeResourcesFit") continue;
      const Json* args = find_member(pc, "args");
      const Json* strategy = args != nullptr ? find_member(*args, "scoringStrategy") : nullptr;
      const Json* resources = strategy != nullptr ? find_member(*strategy, "resources") : nullptr;
      if (resources == nullptr || !resources->is_array()) continue;
      std::string type(string_member(*strategy, "type"));
      if (type.empty()) type = "LeastAllocated";
      if (type != "LeastAllocated") continue;
      for (const Json& r : *resources) {
        const std::string_view resource = string_member(r, "name");
        if (!policy.is_gpu_resource(resource)) continue;
        out.push_back(
            {"scheduler profile " + scheduler + " scores " + std::string(resource) +
                 " with LeastAllocated (NodeResourcesFit scoringStrategy), which prefers the "
                 "emptiest node: GPU pods spread over the GPU nodes and strand GPUs that a "
                 "multi-GPU pod needs on one node; use MostAllocated, or RequestedToCapacityRatio "
                 "with shape [{utilization: 0, score: 0}, {utilization: 100, score: 10}]",
             path + ".pluginConfig[" + std::to_string(j) + "].args.scoringStrategy"});
      }
    }
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_scheduler_scoring_rule() {
  return std::make_unique<SchedulerScoringRule>();
}

}  // namespace gpuadmit
