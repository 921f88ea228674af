#include "rules/time_slicing_one_per_container.h"

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// NVIDIA k8s-device-plugin, sharing.timeSlicing.failRequestsGreaterThanOne: in Allocate, a
// container that is given more than one replica of a shared resource fails with "request for
// 'nvidia.com/gpu.shared: 2' too large: maximum request size for shared resources is 1". That
// happens on the node, after scheduling: the pod fails with UnexpectedAdmissionError instead of
// being rejected up front. The check is per container (Allocate's ContainerRequests) and per
// resource; the shared resource is nvidia.com/gpu.shared when the class renames by default, and
// nvidia.com/gpu otherwise (the plugin advertises the replicas under the original name).
class TimeSlicingOnePerContainerRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU012"; }
  std::string_view name() const override { return "OneSharedGpuPerContainer"; }
  std::string_view summary() const override {
    return "at most 1 shared GPU per container on a time-sliced class with "
           "failRequestsGreaterThanOne";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const GpuClass& c = *ctx.gpu_class;
    if (!c.time_slicing || !c.time_slicing->fail_requests_greater_than_one) return;
    const GpuResources gpu(pod, ctx);
    for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      const bool shared = r.resource == kSharedGpuResource ||
                          (r.resource == kGpuResource && !c.time_slicing->rename_by_default);
      if (!shared) return;
      const std::optional<Quantity>& q = r.effective_quantity();
      if (!q || q->is_negative() || q->value() <= 1) return;
      out.push_back(Violation{
          container_label(ref) + ": " + r.resource + " " + written(*r.effective()) +
              " on time-sliced class " + c.name +
              " (failRequestsGreaterThanOne) would fail on the node with \"maximum request "
              "size for shared resources is 1\"; request 1 (more replicas of the same GPU add "
              "no compute), or use a class with whole GPUs",
          resource_path(ref, r.request != nullptr ? "requests" : "limits", r.resource)});
    });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_time_slicing_one_per_container_rule() {
  return std::make_unique<TimeSlicingOnePerContainerRule>();
}

}  // namespace gpuadmit
