#include "rules/requests_equal_limits.h"

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// Kubernetes does not overcommit extended resources: the API server rejects a container whose
// request for one differs from its limit ("must be equal to nvidia.com/gpu limit") or that has a
// request without a limit ("Limit must be set for non overcommitable resources"),
// pkg/apis/core/validation ValidateResourceRequirements. gpuadmit reports it at admission and in
// CI with a message that says what to write. A limit without a request is fine: the API server
// defaults the request of a Pod to its limit (pkg/apis/core/v1 SetDefaults_Pod), and the `fix`
// mutation writes it out for templates. Differing values are never changed (SPEC §4.1).
class RequestsEqualLimitsRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU001"; }
  std::string_view name() const override { return "GpuRequestsEqualLimits"; }
  std::string_view summary() const override {
    return "GPU requests must equal limits, for every container and GPU resource";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const GpuResources gpu(pod, ctx);
    for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      if (r.request == nullptr) return;  // limit only: the request defaults to it
      const std::optional<Quantity>& request = r.request_quantity;
      if (!request) return;  // unparsable: GPU002 reports it
      if (r.limit == nullptr) {
        out.push_back(Violation{container_label(ref) + ": " + r.resource + " request " +
                                    written(*r.request) + " has no limit; set limits[\"" +
                                    r.resource + "\"] to " + written(*r.request) + " as well",
                                resource_path(ref, "requests", r.resource)});
        return;
      }
      const std::optional<Quantity>& limit = r.limit_quantity;
      if (!limit || *request == *limit) return;
      out.push_back(Violation{container_label(ref) + ": " + r.resource + " request " +
                                  written(*r.request) + " \u2260 limit " + written(*r.limit) +
                                  "; set both to the same whole number",
                              resource_path(ref, "limits", r.resource)});
    });
  }
};

}  // namespace

std::unique_ptr<const Rule> make_requests_equal_limits_rule() {
  return std::make_unique<RequestsEqualLimitsRule>();
}

}  // namespace gpuadmit
