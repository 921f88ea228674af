#include "rules/all_rules.h"

#include "rules/allowed_classes.h"
#include "rules/allowed_priority_class.h"
#include "rules/class_placement.h"
#include "rules/cuda_compatibility.h"
#include "rules/cuda_visible_devices.h"
#include "rules/dra_admin_access.h"
#include "rules/dra_allocation_mode_all.h"
#include "rules/dra_count_limits.h"
#include "rules/dra_device_class.h"
#include "rules/dra_mig_profile.h"
#include "rules/dra_unresolved_claim.h"
#include "rules/fits_on_node.h"
#include "rules/fragmentation.h"
#include "rules/gpu_count_limits.h"
#include "rules/gpu_quota.h"
#include "rules/gpu_visibility.h"
#include "rules/known_class.h"
#include "rules/mig_profile.h"
#include "rules/no_mixed_gpu_kinds.h"
#include "rules/non_gpu_on_gpu_pool.h"
#include "rules/nvlink_group.h"
#include "rules/pod_level_gpu_resources.h"
#include "rules/privileged_container.h"
#include "rules/queue_required.h"
#include "rules/requests_equal_limits.h"
#include "rules/time_slicing_one_per_container.h"
#include "rules/whole_gpu_quantities.h"

namespace gpuadmit {

// In id order: findings of one pod spec are reported in this order. GPU016/GPU017 are lint rules
// over LimitRange/ResourceQuota objects, not pod-spec rules (lint/).
std::vector<std::unique_ptr<const Rule>> default_rules() {
  std::vector<std::unique_ptr<const Rule>> rules;
  rules.reserve(27);
  rules.push_back(make_requests_equal_limits_rule());           // GPU001
  rules.push_back(make_whole_gpu_quantities_rule());            // GPU002
  rules.push_back(make_allowed_classes_rule());                 // GPU003
  rules.push_back(make_known_class_rule());                     // GPU004
  rules.push_back(make_gpu_count_limits_rule());                // GPU005
  rules.push_back(make_fits_on_node_rule());                    // GPU006
  rules.push_back(make_mig_profile_rule());                     // GPU007
  rules.push_back(make_no_mixed_gpu_kinds_rule());              // GPU008
  rules.push_back(make_non_gpu_on_gpu_pool_rule());             // GPU009
  rules.push_back(make_allowed_priority_class_rule());          // GPU010
  rules.push_back(make_class_placement_rule());                 // GPU011
  rules.push_back(make_time_slicing_one_per_container_rule());  // GPU012
  rules.push_back(make_gpu_quota_rule());                       // GPU013
  rules.push_back(make_fragmentation_rule());                   // GPU014
  rules.push_back(make_pod_level_gpu_resources_rule());         // GPU015
  // GPU018–GPU022 check DRA claim objects (Rule::check_claim), GPU023 pods' claim references.
  rules.push_back(make_dra_device_class_rule());         // GPU018
  rules.push_back(make_dra_count_limits_rule());         // GPU019
  rules.push_back(make_dra_allocation_mode_all_rule());  // GPU020
  rules.push_back(make_dra_admin_access_rule());         // GPU021
  rules.push_back(make_dra_mig_profile_rule());          // GPU022
  rules.push_back(make_dra_unresolved_claim_rule());     // GPU023
  rules.push_back(make_gpu_visibility_rule());           // GPU024
  rules.push_back(make_queue_required_rule());           // GPU025
  rules.push_back(make_privileged_container_rule());     // GPU026
  rules.push_back(make_cuda_compatibility_rule());       // GPU027
  rules.push_back(make_cuda_visible_devices_rule());     // GPU032
  rules.push_back(make_nvlink_group_rule());             // GPU033
  return rules;
}

}  // namespace gpuadmit
