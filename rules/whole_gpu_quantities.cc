#include "rules/whole_gpu_quantities.h"

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// Extended resources such as nvidia.com/gpu are integer resources: the API server rejects a
// negative quantity (ValidateNonnegativeQuantity, "must be greater than or equal to 0") and one
// whose MilliValue() is not a multiple of 1000 (ValidateResourceQuantityValue, "must be an
// integer"), pkg/apis/core/validation. So "2000m" (= 2) is accepted and "500m" / "0.5" / "1.5"
// are not; a GPU cannot be split by quantity, only by MIG or time-slicing. gpuadmit checks the
// exact value: a sub-milli fraction such as "1.9999999" (which MilliValue() rounds up to 2000m
// and the API server accepts) is reported too, since the user did not write a whole number.
// "0" is not a GPU request (SPEC §2) and is whole: not a violation.
class WholeGpuQuantitiesRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU002"; }
  std::string_view name() const override { return "WholeGpuQuantities"; }
  std::string_view summary() const override {
    return "GPU quantities must be whole non-negative integers (1, not 0.5 or 500m)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const GpuResources gpu(pod, ctx);
    for_each_gpu_resource(pod, *gpu, [&](const ContainerRef& ref, const ContainerGpuResource& r) {
      check_value(ref, r.resource, "requests", "request", r.request, r.request_quantity, out);
      check_value(ref, r.resource, "limits", "limit", r.limit, r.limit_quantity, out);
    });
  }

 private:
  static void check_value(const ContainerRef& ref, const std::string& resource,
                          std::string_view section, std::string_view noun, const Json* value,
                          const std::optional<Quantity>& q, std::vector<Violation>& out) {
    if (value == nullptr) return;
    // Only a value that breaks the rule is worth a message.
    if (q && !q->is_negative() && q->is_integer()) return;
    // Valid quantities as written (500m); anything else as JSON, quoted, so that "" or " 1"
    // stay visible.
    const std::string head = container_label(ref) + ": " + resource + " " + std::string(noun) +
                             " " + (q ? written(*value) : json_text(*value));
    std::string problem;
    if (!q) {
      problem = " is not a valid quantity; write a whole number of GPUs such as 1";
    } else if (q->is_negative()) {
      problem = " is negative; write a whole number of GPUs such as 1";
    } else if (!q->is_integer()) {
      problem =
          " is not a whole number; a GPU cannot be split by quantity: write a whole number such "
          "as 1, or use a MIG profile (gpuadmit.io/mig-profile) or a time-sliced class";
    } else {
      return;
    }
    out.push_back(Violation{head + problem, resource_path(ref, section, resource)});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_whole_gpu_quantities_rule() {
  return std::make_unique<WholeGpuQuantitiesRule>();
}

}  // namespace gpuadmit
