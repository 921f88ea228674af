#include "rules/nvlink_group.h"

#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// Whole GPUs only: MIG slices and time-sliced replicas do not use NVLink between devices (MIG
// instances have no peer-to-peer; a replica is a share of one GPU).
bool whole_gpu_class(const GpuClass& c) { return !c.mig && !c.time_slicing; }

class NvlinkGroupRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU033"; }
  std::string_view name() const override { return "GpusWithinOneNvlinkGroup"; }
  std::string_view summary() const override {
    return "a pod should ask for at most the GPUs of one NVLink group of its class "
           "(topology.nvlinkGroup)";
  }
  Action default_action() const override { return Action::kWarn; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const GpuClass& c = *ctx.gpu_class;
    if (!whole_gpu_class(c) || !c.topology || !c.topology->nvlink_group) return;
    const int64_t group = *c.topology->nvlink_group;
    const GpuResources gpu(pod, ctx);
    const int64_t total = pod_gpu_total(pod, *gpu);
    // More than a node holds is GPU006's: the pod never schedules.
    if (total <= group || (c.gpus_per_node && total > *c.gpus_per_node)) return;
    const PodGpuCount count = pod_gpu_count(pod, *gpu);
    out.push_back(Violation{
        "pod requests " + std::to_string(count.total) + " GPUs (" + count.breakdown +
            ") of class " + c.name + ", whose nodes join their GPUs by NVLink in groups of " +
            std::to_string(group) + ": traffic between its GPUs crosses PCIe; request at most " +
            std::to_string(group) +
            " GPUs per pod and add pods, or use a class whose NVLink groups hold " +
            std::to_string(count.total),
        pod.location().path, policy_path::cls(c.name) + ".topology.nvlinkGroup"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_nvlink_group_rule() { return std::make_unique<NvlinkGroupRule>(); }

}  // namespace gpuadmit
