#include "rules/document_rules.h"

#include "rules/device_plugin_config.h"
#include "rules/kueue_cluster_queue.h"
#include "rules/kueue_flavor.h"
#include "rules/limit_range_trap.h"
#include "rules/mig_config.h"
#include "rules/resource_quota_key.h"
#include "rules/scheduler_scoring.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const DocumentRule>> default_document_rules() {
  std::vector<std::unique_ptr<const DocumentRule>> rules;
  rules.push_back(make_limit_range_trap_rule());    // GPU016
  rules.push_back(make_resource_quota_key_rule());  // GPU017
  // The GPU stack's configuration against the policy (GPU028–GPU031).
  rules.push_back(make_device_plugin_config_rule());  // GPU028
  rules.push_back(make_mig_config_rule());            // GPU029
  rules.push_back(make_scheduler_scoring_rule());     // GPU030
  rules.push_back(make_kueue_flavor_rule());          // GPU031
  // GPU034: a ClusterQueue against the policy and the run's ResourceFlavors and LocalQueues.
  rules.push_back(make_kueue_cluster_queue_rule());
  return rules;
}

}  // namespace gpuadmit
