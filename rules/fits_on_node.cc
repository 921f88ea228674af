#include "rules/fits_on_node.h"

#include <limits>

#include "engine/resources.h"
#include "engine/saturating.h"
#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// The most compute slices a MIG-capable GPU has (A100, H100, H200: 7; A30: 4). A profile
// <n>g.* fits at most 7 / n times on one GPU, which bounds the MIG devices of a node.
constexpr int64_t kMaxMigComputeSlices = 7;

struct Capacity {
  int64_t units = 0;
  std::string text;     // how it was computed, for the message
  bool scaled = false;  // counts replicas or MIG devices, not physical GPUs
};

// What one node of the class offers of `resource`, or nullopt when gpuadmit cannot tell (a MIG
// resource on a class that is not MIG-partitioned: GPU007 reports that).
std::optional<Capacity> node_capacity(std::string_view resource, const PodContext& ctx) {
  const GpuClass& c = *ctx.gpu_class;
  const int64_t g = *c.gpus_per_node;
  const std::string per_node = std::to_string(g) + " GPUs per node";
  auto mig_capacity = [&](std::string_view profile) -> std::optional<Capacity> {
    const std::optional<int64_t> slices = mig_compute_slices(profile);
    if (!slices || *slices > kMaxMigComputeSlices) return std::nullopt;
    const int64_t per_gpu = kMaxMigComputeSlices / *slices;
    const int64_t units = saturating_mul(g, per_gpu);
    return Capacity{units,
                    per_node + " \u00d7 at most " + std::to_string(per_gpu) + " " +
                        std::string(profile) + " slices each = " + std::to_string(units),
                    true};
  };
  auto shared_capacity = [&]() -> Capacity {
    const int64_t replicas = c.time_slicing->replicas > 0 ? c.time_slicing->replicas : 1;
    const int64_t units = saturating_mul(g, replicas);
    return Capacity{units,
                    per_node + " \u00d7 " + std::to_string(replicas) +
                        " time-slicing replicas = " + std::to_string(units),
                    true};
  };
  switch (gpu_kind(resource)) {
    case GpuKind::kMig:
      if (!c.mig) return std::nullopt;
      return mig_capacity(mig_profile_of_resource(resource).value_or(""));
    case GpuKind::kShared:
      if (c.time_slicing) return shared_capacity();
      break;
    case GpuKind::kWhole:
      if (resource != kGpuResource) break;
      // With time-slicing and no rename, nvidia.com/gpu counts replicas; with MIG strategy
      // single it counts MIG devices of the pod's profile (NVIDIA k8s-device-plugin).
      if (c.time_slicing && !c.time_slicing->rename_by_default) return shared_capacity();
      if (c.mig && c.mig->strategy == MigConfig::Strategy::kSingle && !ctx.mig_profile.empty()) {
        return mig_capacity(ctx.mig_profile);
      }
      break;
  }
  return Capacity{g, per_node};
}

// A pod runs on one node: a container, and the pod as a whole, cannot use more GPUs than one node
// of its class has (gpusPerNode). Such a pod stays Pending forever ("Insufficient
// nvidia.com/gpu"); gpuadmit rejects it up front. Counted per resource, with time-slicing
// replicas and MIG slices taken into account; the pod total (the effective request) is checked
// over whole GPUs, whose per-node capacity is gpusPerNode itself.
class FitsOnNodeRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU006"; }
  std::string_view name() const override { return "FitsOnOneNode"; }
  std::string_view summary() const override {
    return "a container's and a pod's GPUs must fit on one node of the class (gpusPerNode)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr || !ctx.gpu_class->gpus_per_node) return;
    const GpuClass& c = *ctx.gpu_class;
    bool container_too_big = false;
    const GpuResources gpu(pod, ctx);
    for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      const std::optional<Quantity>& q = r.effective_quantity();
      if (!q || q->is_negative() || q->is_zero()) return;
      const std::optional<Capacity> capacity = node_capacity(r.resource, ctx);
      if (!capacity || q->value() <= capacity->units) return;
      container_too_big = true;
      out.push_back(
          Violation{container_label(ref) + ": " + r.resource + " " + written(*r.effective()) +
                        " cannot fit on one node of class " + c.name + " (" + capacity->text +
                        "); request at most " + std::to_string(capacity->units) +
                        ", or split the work across pods",
                    resource_path(ref, r.request != nullptr ? "requests" : "limits", r.resource),
                    policy_path::cls(c.name) + (capacity->scaled ? "" : ".gpusPerNode")});
    });
    // The GPU units of a container's DRA claims (ceil(count / devicesPerGPU) each) must fit.
    const std::vector<ContainerRef>& containers = pod.containers();
    for (size_t i = 0; i < containers.size(); ++i) {
      const int64_t n = claim_units(ctx, i);
      if (n <= *c.gpus_per_node) continue;
      container_too_big = true;
      out.push_back(Violation{
          container_label(containers[i]) + ": " + std::to_string(n) + " GPUs of DRA claims (" +
              container_claims_text(ctx, i) + ") cannot fit on one node of class " + c.name + " (" +
              std::to_string(*c.gpus_per_node) + " GPUs); request at most " +
              std::to_string(*c.gpus_per_node) + ", or split the work across pods",
          containers[i].path + ".resources.claims", policy_path::cls(c.name) + ".gpusPerNode"});
    }
    if (container_too_big) return;
    // The pod total over the resources whose per-node capacity is gpusPerNode itself (whole
    // GPUs): on a mixed MIG class nvidia.com/gpu still means whole GPUs, of which a node never
    // has more than gpusPerNode. Replicas and MIG devices are per-container checks only.
    const std::function<bool(std::string_view)> whole = [&](std::string_view resource) {
      const std::optional<Capacity> capacity = node_capacity(resource, ctx);
      return gpu_kind(resource) == GpuKind::kWhole && capacity && !capacity->scaled;
    };
    const int64_t g = *c.gpus_per_node;
    if (pod_gpu_total(pod, *gpu, whole) + pod_claim_units(ctx) <= g) return;
    const PodGpuCount count = with_claims(pod_gpu_count(pod, *gpu, whole), ctx);
    out.push_back(Violation{"pod requests " + std::to_string(count.total) + " GPUs (" +
                                count.breakdown + ") but a node of class " + c.name + " has " +
                                std::to_string(g) + "; a pod runs on one node: request at most " +
                                std::to_string(g) + " per pod, or split the work across pods",
                            pod.location().path, policy_path::cls(c.name) + ".gpusPerNode"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_fits_on_node_rule() { return std::make_unique<FitsOnNodeRule>(); }

}  // namespace gpuadmit
