#include "fleet/svg.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "fleet/svg_parts.h"

namespace gpuadmit::fleet {
namespace {

using namespace svg_parts;

struct Canvas {
  std::string body;
  int width = 0;
  int y = kMargin;
};

// GPU g of node n of class c, on the canvas's current row: its outline (free, partial, used;
// red and crossed when stranded) and its used share in the colour of the workload it holds.
void draw_gpu(const ClassReport& c, size_t n, size_t g, const FleetInput& input,
              std::map<size_t, size_t>& legend, Canvas& canvas) {
  const int64_t per_gpu = c.packing.shape.units_per_gpu();
  const GpuCell& cell = c.packing.cells[n][g];
  const int x = kMargin + kLabelWidth + static_cast<int>(g) * (kCell + kGap);
  std::string cls = cell.used == 0 ? "gpu free" : cell.used < per_gpu ? "gpu partial" : "gpu used";
  if (cell.stranded) cls += " stranded";
  std::string fill = "#ffffff";
  if (cell.group >= 0) {
    const size_t w = input.groups[static_cast<size_t>(cell.group)].workload;
    legend.emplace(w, legend.size());
    fill = colour(legend.at(w));
  }
  canvas.body += "<rect class=\"" + cls + "\" data-class=\"" + xml::escape(c.name) +
                 "\" data-node=\"" + std::to_string(n) + "\" data-gpu=\"" + std::to_string(g) +
                 "\" x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(canvas.y) +
                 "\" width=\"" + std::to_string(kCell) + "\" height=\"" + std::to_string(kCell) +
                 "\" fill=\"#ffffff\" stroke=\"" + (cell.stranded ? "#d00000" : "#888888") +
                 "\"/>\n";
  if (cell.used > 0) {  // the used share of the GPU, filled from the bottom
    const int h = static_cast<int>(kCell * cell.used / std::max<int64_t>(per_gpu, 1));
    canvas.body += "<rect x=\"" + std::to_string(x) + "\" y=\"" +
                   std::to_string(canvas.y + kCell - h) + "\" width=\"" + std::to_string(kCell) +
                   "\" height=\"" + std::to_string(h) + "\" fill=\"" + fill + "\"/>\n";
  }
  if (cell.stranded) canvas.body += cross(x, canvas.y);
}

// One class: its title, its nodes' rows and its unplaceable pods beside them.
void draw_class(const ClassReport& c, const FleetReport& report, const FleetInput& input,
                std::map<size_t, size_t>& legend, Canvas& canvas) {
  const ClassShape& s = c.packing.shape;
  char title[256];
  std::snprintf(title, sizeof title,
                "%s: %lld nodes × %lld GPUs (%s) — placed %lld of %lld, stranded %lld, %.1f%%",
                c.name.c_str(), static_cast<long long>(s.nodes),
                static_cast<long long>(s.gpus_per_node), std::string(unit_name(s.unit)).c_str(),
                static_cast<long long>(c.packing.placed), static_cast<long long>(c.total()),
                static_cast<long long>(c.packing.stranded), c.utilisation() * 100.0);
  canvas.y += kLine;
  canvas.body += text(kMargin, canvas.y, title, " class=\"title\"");
  canvas.y += kGap * 2;
  const int top = canvas.y;
  for (size_t n = 0; n < c.packing.cells.size(); ++n) {
    canvas.body += text(kMargin, canvas.y + kCell - 4, "node " + std::to_string(n));
    for (size_t g = 0; g < c.packing.cells[n].size(); ++g) {
      draw_gpu(c, n, g, input, legend, canvas);
    }
    canvas.y += kRow;
  }
  const int list_x =
      kMargin + kLabelWidth + static_cast<int>(s.gpus_per_node) * (kCell + kGap) + 24;
  int list_y = top + kLine - 4;
  for (const UnplaceableEntry& u : report.unplaceable) {
    const PodGroup& g = input.groups[u.group];
    if (g.class_name != c.name) continue;
    if (list_y == top + kLine - 4) {
      canvas.body += text(list_x, list_y, "unplaceable:", " class=\"unplaceable-title\"");
      list_y += kLine;
    }
    const Workload& w = input.workloads[g.workload];
    canvas.body += text(list_x, list_y,
                        std::to_string(u.pods) + " × " + std::to_string(g.gpus) + " GPU " +
                            w.label() + ": " + std::string(reason_text(u.reason)),
                        " class=\"unplaceable\"");
    list_y += kLine;
  }
  canvas.y = std::max(canvas.y, list_y) + kLine;
  canvas.width = std::max(canvas.width, list_x + kListWidth);
}

}  // namespace

std::string to_svg(const FleetReport& report, const FleetInput& input) {
  Canvas canvas;
  std::map<size_t, size_t> legend;  // workload → colour index, in order of first use
  for (const ClassReport& c : report.classes) draw_class(c, report, input, legend, canvas);
  // Pods with no class or a class their namespace may not use have no row to sit beside.
  bool heading = false;
  for (const UnplaceableEntry& u : report.unplaceable) {
    const PodGroup& g = input.groups[u.group];
    if (u.reason != Unplaceable::kNoClass && u.reason != Unplaceable::kClassNotAllowed) continue;
    if (!heading) {
      canvas.y += kLine;
      canvas.body += text(kMargin, canvas.y, "unplaceable, outside any class:", " class=\"title\"");
      heading = true;
    }
    canvas.y += kLine;
    canvas.body +=
        text(kMargin, canvas.y,
             std::to_string(u.pods) + " × " + std::to_string(g.gpus) + " GPU " +
                 input.workloads[g.workload].label() + ": " + std::string(reason_text(u.reason)),
             " class=\"unplaceable\"");
  }
  canvas.y += kLine * 2;
  canvas.body += text(kMargin, canvas.y, "workloads:", " class=\"title\"");
  std::vector<std::pair<size_t, size_t>> order(legend.begin(), legend.end());
  std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.second < b.second; });
  for (const auto& [workload, index] : order) {
    canvas.y += kRow;
    canvas.body += "<rect class=\"legend\" x=\"" + std::to_string(kMargin) + "\" y=\"" +
                   std::to_string(canvas.y - kCell + 4) + "\" width=\"" + std::to_string(kCell) +
                   "\" height=\"" + std::to_string(kCell) + "\" fill=\"" + colour(index) + "\"/>\n";
    canvas.body += text(kMargin + kCell + 8, canvas.y, input.workloads[workload].label());
  }
  canvas.y += kRow;
  canvas.body += "<rect x=\"" + std::to_string(kMargin) + "\" y=\"" +
                 std::to_string(canvas.y - kCell + 4) + "\" width=\"" + std::to_string(kCell) +
                 "\" height=\"" + std::to_string(kCell) +
                 "\" fill=\"#ffffff\" stroke=\"#d00000\"/>\n";
  canvas.body += text(kMargin + kCell + 8, canvas.y, "stranded (free, but no remaining pod fits)");
  canvas.y += kMargin;
  canvas.width = std::max(canvas.width, 640);
  return document(canvas.width, canvas.y, canvas.body);
}

}  // namespace gpuadmit::fleet
