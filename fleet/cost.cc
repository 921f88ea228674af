#include "fleet/cost.h"

#include <limits>

namespace gpuadmit::fleet {

int64_t cost_micros(int64_t units, int64_t units_per_gpu, int64_t micros_per_gpu_hour) {
  if (units <= 0 || units_per_gpu <= 0 || micros_per_gpu_hour <= 0) return 0;
  // 128 bits: 10^7 GPUs × 10^15 millionths overflows 64.
  const __int128 product = static_cast<__int128>(units) * micros_per_gpu_hour;
  const __int128 cost = (product + units_per_gpu / 2) / units_per_gpu;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  return cost > kMax ? kMax : static_cast<int64_t>(cost);
}

std::string money(int64_t micros) {
  const bool negative = micros < 0;
  const uint64_t v = negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  std::string fraction = std::to_string(v % 1'000'000);
  fraction.insert(0, 6 - fraction.size(), '0');
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return (negative ? "-" : "") + std::to_string(v / 1'000'000) + "." + fraction;
}

}  // namespace gpuadmit::fleet
