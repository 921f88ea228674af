#pragma once
// `gpuadmit fleet --live`'s outputs (docs/fleet.md, "Live mode"): the terminal report, JSON, the
// Prometheus text exposition format (for a CronJob pushing it, or node_exporter's textfile
// collector) and the SVG picture of the real nodes and pods.

#include <ostream>
#include <string>

#include "engine/json.h"
#include "fleet/live_model.h"
#include "fleet/live_report.h"

namespace gpuadmit::fleet {

void write_live_text(const LiveReport& report, const LiveInput& input, std::ostream& out);
Json live_to_json(const LiveReport& report, const LiveInput& input);
// Gauges per class (docs/fleet.md lists them), text format 0.0.4: HELP and TYPE before each
// family, label values escaped.
void write_live_prometheus(const LiveReport& report, std::ostream& out);
std::string live_to_svg(const LiveReport& report, const LiveInput& input);

}  // namespace gpuadmit::fleet
