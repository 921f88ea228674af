#include "rules/cuda_visible_devices.h"

#include <charconv>
#include <string>
#include <vector>

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

constexpr std::string_view kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";
constexpr std::string_view kRemove =
    "the device plugin already gives the container exactly its GPUs, numbered from 0: remove "
    "CUDA_VISIBLE_DEVICES";

// The comma-separated entries, trimmed (CUDA ignores spaces around them).
std::vector<std::string> entries_of(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view e = value.substr(start, end - start);
    while (!e.empty() && e.front() == ' ') e.remove_prefix(1);
    while (!e.empty() && e.back() == ' ') e.remove_suffix(1);
    out.emplace_back(e);
    start = end + 1;
  }
  return out;
}

// A plain device index ("0", "3"); -1 for anything else (a UUID, MIG-…, a typo).
int64_t index_of(std::string_view entry) {
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), n);
  return ec == std::errc() && end == entry.data() + entry.size() && n >= 0 ? n : -1;
}

// Why the hard-coded value is wrong for a container of `units` GPUs. CUDA stops reading the list
// at the first entry that names no device, so such an entry hides the rest.
std::string what_is_wrong(std::string_view value, int64_t units) {
  const std::vector<std::string> entries = entries_of(value);
  std::vector<std::string> past;
  bool uuid = false;
  for (const std::string& e : entries) {
    const int64_t i = index_of(e);
    if (i >= units || (i < 0 && !e.starts_with("GPU-") && !e.starts_with("MIG-")))
      past.push_back(e.empty() ? "\"\"" : e);
    else if (i < 0)
      uuid = true;
  }
  const std::string gets = "it gets " + std::to_string(units) + (units == 1 ? " GPU" : " GPUs");
  if (!past.empty()) {
    return gets + ", numbered 0 to " + std::to_string(units - 1) + ", and " + join(past) +
           " names none of them";
  }
  if (uuid) return "a GPU UUID names one node's device, not the ones allocated to the pod";
  if (static_cast<int64_t>(entries.size()) < units) {
    return gets + " and names " + std::to_string(entries.size()) + ": the others stay idle";
  }
  return gets + ", which CUDA already sees";
}

class CudaVisibleDevicesRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU032"; }
  std::string_view name() const override { return "NoHardCodedGpuIndices"; }
  std::string_view summary() const override {
    return "a container with GPUs should not hard-code CUDA_VISIBLE_DEVICES: the device plugin "
           "exposes exactly its GPUs, numbered from 0";
  }
  Action default_action() const override { return Action::kWarn; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const GpuResources gpu(pod, ctx);
    for (size_t c = 0; c < pod.containers().size(); ++c) {
      const int64_t units = gpu->units(c);
      if (units <= 0) continue;
      const ContainerRef& ref = pod.containers()[c];
      const Json* env = find_member(pod.container(ref), "env");
      if (env == nullptr || !env->is_array()) continue;
      for (size_t i = 0; i < env->size(); ++i) {
        const Json& entry = (*env)[i];
        if (string_member(entry, "name") != kCudaVisibleDevices) continue;
        const Json* value = find_member(entry, "value");
        if (value == nullptr || !value->is_string()) continue;  // valueFrom: not hard-coded
        const std::string& v = value->get_ref<const std::string&>();
        out.push_back({container_label(ref) + " sets CUDA_VISIBLE_DEVICES=" + v + ": " +
                           what_is_wrong(v, units) + "; " + std::string(kRemove),
                       ref.path + ".env[" + std::to_string(i) + "].value"});
      }
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_cuda_visible_devices_rule() {
  return std::make_unique<CudaVisibleDevicesRule>();
}

}  // namespace gpuadmit
