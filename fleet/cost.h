#pragma once
// Money in the fleet report (docs/fleet.md, "Cost"): exact integers of millionths of the
// policy's currency (policies/model.h GpuPrice), never floating point, so that the same fleet
// costs the same to the last digit in every output.

#include <cstdint>
#include <string>

namespace gpuadmit::fleet {

// What `units` of a class's unit cost per hour, `units_per_gpu` of them making one GPU priced
// `micros_per_gpu_hour`: rounded half up to a millionth; saturates at INT64_MAX.
int64_t cost_micros(int64_t units, int64_t units_per_gpu, int64_t micros_per_gpu_hour);

// "29.36", "0.80", "0.000001", "12.00": at least 2 decimals, at most 6, trailing zeros beyond
// the second dropped. Also a valid Prometheus sample value and JSON number.
std::string money(int64_t micros);

}  // namespace gpuadmit::fleet
