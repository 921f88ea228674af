#include "fleet/svg.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "xml/escape.h"

namespace gpuadmit::fleet {
namespace {

constexpr int kMargin = 16;
constexpr int kLabelWidth = 80;
constexpr int kCell = 18;
constexpr int kGap = 3;
constexpr int kRow = kCell + kGap;
constexpr int kLine = 16;  // text line height
constexpr int kListWidth = 520;

// A distinct colour per workload, none of them red (red marks stranded GPUs): Tableau's
// palette without its red, then hues by the golden angle outside the reds.
std::string colour(size_t index) {
  static constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                             "#edc948", "#9c755f", "#bab0ac", "#17becf"};
  constexpr size_t kCount = sizeof kPalette / sizeof kPalette[0];
  if (index < kCount) return kPalette[index];
  const int hue = 30 + static_cast<int>((index - kCount) * 137.508) % 300;  // 30..329
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "hsl(%d,55%%,%d%%)", hue, index % 2 == 0 ? 45 : 65);
  return buffer;
}

std::string text(int x, int y, std::string_view content, std::string_view extra = "") {
  return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\"" +
         std::string(extra) + ">" + xml::escape(content) + "</text>\n";
}

struct Canvas {
  std::string body;
  int width = 0;
  int y = kMargin;
};

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
  const int64_t per_gpu = s.units_per_gpu();
  for (size_t n = 0; n < c.packing.cells.size(); ++n) {
    canvas.body += text(kMargin, canvas.y + kCell - 4, "node " + std::to_string(n));
    for (size_t g = 0; g < c.packing.cells[n].size(); ++g) {
      const GpuCell& cell = c.packing.cells[n][g];
      const int x = kMargin + kLabelWidth + static_cast<int>(g) * (kCell + kGap);
      std::string cls = cell.used == 0        ? "gpu free"
                        : cell.used < per_gpu ? "gpu partial"
                                              : "gpu used";
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
                     "\" width=\"" + std::to_string(kCell) + "\" height=\"" +
                     std::to_string(kCell) + "\" fill=\"#ffffff\" stroke=\"" +
                     (cell.stranded ? "#d00000" : "#888888") + "\"/>\n";
      if (cell.used > 0) {  // the used share of the GPU, filled from the bottom
        const int h = static_cast<int>(kCell * cell.used / std::max<int64_t>(per_gpu, 1));
        canvas.body += "<rect x=\"" + std::to_string(x) + "\" y=\"" +
                       std::to_string(canvas.y + kCell - h) + "\" width=\"" +
                       std::to_string(kCell) + "\" height=\"" + std::to_string(h) + "\" fill=\"" +
                       fill + "\"/>\n";
      }
      if (cell.stranded) {
        canvas.body += "<path d=\"M" + std::to_string(x + 3) + " " + std::to_string(canvas.y + 3) +
                       "l" + std::to_string(kCell - 6) + " " + std::to_string(kCell - 6) + "m0 -" +
                       std::to_string(kCell - 6) + "l-" + std::to_string(kCell - 6) + " " +
                       std::to_string(kCell - 6) + "\" stroke=\"#d00000\" stroke-width=\"2\"/>\n";
      }
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
  std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      std::to_string(canvas.width) + "\" height=\"" + std::to_string(canvas.y) +
      "\" viewBox=\"0 0 " + std::to_string(canvas.width) + " " + std::to_string(canvas.y) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      "<style>.title{font-weight:bold;font-size:13px}.unplaceable{fill:#a00000}</style>\n";
  svg += canvas.body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace gpuadmit::fleet
