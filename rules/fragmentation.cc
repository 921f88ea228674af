#include "rules/fragmentation.h"

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// "a" or "an" before a number as it is read aloud: an 8, an 11, an 18, an 80, an 11000.
std::string_view article(int64_t n) {
  const std::string s = std::to_string(n);
  if (s[0] == '8') return "an";
  const bool eleven_or_eighteen = s.starts_with("11") || s.starts_with("18");
  return eleven_or_eighteen && s.size() % 3 == 2 ? "an" : "a";
}

// "1, 2, 4 or 8"; empty for implausibly large node sizes.
std::string divisors_text(int64_t g) {
  if (g > 64) return {};
  std::vector<std::string> divisors;
  for (int64_t d = 1; d <= g; ++d) {
    if (g % d == 0) divisors.push_back(std::to_string(d));
  }
  if (divisors.size() < 2) return divisors.empty() ? std::string() : divisors[0];
  const std::string last = divisors.back();
  divisors.pop_back();
  return join(divisors) + " or " + last;
}

// Pods of n GPUs on nodes of g GPUs leave g mod n GPUs of every node unusable by pods of the same
// size ("5 on an 8-GPU node strands 3"), a cost the platform team usually wants to hear about
// (default: warn, enforcement.fragmentation). Only for classes of whole GPUs: with MIG or
// time-slicing gpusPerNode does not describe what a node offers. A pod larger than a node is
// GPU006 (it cannot run at all), so only 0 < n < g is checked.
class FragmentationRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU014"; }
  std::string_view name() const override { return "NoGpuFragmentation"; }
  std::string_view summary() const override {
    return "a pod's GPU count should divide the class's gpusPerNode, or it strands GPUs";
  }
  Action default_action() const override { return Action::kWarn; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const GpuClass& c = *ctx.gpu_class;
    if (!c.gpus_per_node || c.mig || c.time_slicing) return;
    const int64_t g = *c.gpus_per_node;
    const GpuResources gpu(pod, ctx);
    const int64_t n = pod_gpu_total(pod, *gpu) + pod_claim_units(ctx);
    if (n <= 0 || n >= g || g % n == 0) return;
    const PodGpuCount count = with_claims(pod_gpu_count(pod, *gpu), ctx);
    std::string message = "pod requests " + std::to_string(n) + " GPUs (" + count.breakdown +
                          "): " + std::to_string(n) + " on " + std::string(article(g)) + " " +
                          std::to_string(g) + "-GPU node of class " + c.name + " strands " +
                          std::to_string(g % n);
    const std::string divisors = divisors_text(g);
    message += divisors.empty() ? "; request a divisor of " + std::to_string(g)
                                : "; request " + divisors + " GPUs per pod";
    out.push_back(Violation{std::move(message), pod.location().path});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_fragmentation_rule() {
  return std::make_unique<FragmentationRule>();
}

}  // namespace gpuadmit
