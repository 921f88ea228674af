#pragma once
// The fleet as a picture (`gpuadmit fleet --svg FILE`, docs/fleet.md): each class's nodes as
// rows of GPU cells coloured by workload, stranded GPUs hatched red, a legend of the workloads,
// and the class's unplaceable pods listed beside its rows. Every GPU is one
// `<rect class="gpu ...">` with data-class, data-node and data-gpu attributes.

#include <string>

#include "fleet/report.h"

namespace gpuadmit::fleet {

std::string to_svg(const FleetReport& report, const FleetInput& input);

}  // namespace gpuadmit::fleet
