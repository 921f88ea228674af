// The live fleet as a picture (`gpuadmit fleet --live --svg FILE`, docs/fleet.md): per class, a
// row per real node and a square per GPU, filled by the running pods in their order (the
// colour of the workload holding most of a GPU), stranded GPUs crossed in red, nodes counted
// apart greyed with their state, the class's pending pods listed beside its rows. Every GPU is
// one `<rect class="gpu used|partial|free [stranded] [unavailable]" data-class data-node
// data-gpu>`.

#include <algorithm>
#include <map>

#include "fleet/live_output.h"
#include "fleet/svg_parts.h"

namespace gpuadmit::fleet {
namespace {

using namespace svg_parts;

constexpr int kNodeLabelWidth = 170;
// A node drawn with more squares than this would be no picture (kMaxNodeAmount allows 65,536).
constexpr int64_t kMaxCells = 256;

struct Cell {
  int64_t used = 0;
  std::string owner;  // the workload holding most of the GPU
  int64_t owner_units = 0;
};

// The node's GPUs filled by its pods' units in order (GPU i holds units [i×U, (i+1)×U)).
std::vector<Cell> cells_of(const LiveNodeReport& n, const LiveReport& report,
                           const LiveInput& input) {
  std::vector<Cell> cells(static_cast<size_t>(std::clamp<int64_t>(n.gpus, 0, kMaxCells)));
  const int64_t per_gpu = std::max<int64_t>(n.units_per_gpu, 1);
  const LiveClassReport* c = n.cls >= 0 ? &report.classes[static_cast<size_t>(n.cls)] : nullptr;
  int64_t at = 0;
  std::vector<std::map<std::string, int64_t>> shares(cells.size());
  for (size_t p : n.pods) {
    const LivePod& pod = input.pods[p];
    int64_t units = 0;
    for (const PodGpuRequest& r : pod.requests) {
      units +=
          c != nullptr ? units_of(r.resource, r.units, c->shape, input.nodes[n.node].gfd) : r.units;
    }
    const std::string owner = pod.owner.empty() ? pod.label() : pod.ns + "/" + pod.owner;
    for (int64_t u = at; u < at + units && static_cast<size_t>(u / per_gpu) < cells.size();) {
      const size_t cell = static_cast<size_t>(u / per_gpu);
      const int64_t take = std::min(at + units, (u / per_gpu + 1) * per_gpu) - u;
      cells[cell].used += take;
      shares[cell][owner] += take;
      u += take;
    }
    at += units;
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    for (const auto& [owner, units] : shares[i]) {
      if (units > cells[i].owner_units) {
        cells[i].owner = owner;
        cells[i].owner_units = units;
      }
    }
  }
  return cells;
}

struct LiveCanvas {
  std::string body;
  int width = 640;
  int y = kMargin;
  std::map<std::string, size_t> legend;  // workload → colour index, in order of first use
};

void draw_node(const LiveNodeReport& n, const std::string& cls, const LiveReport& report,
               const LiveInput& input, LiveCanvas& canvas) {
  const LiveNode& node = input.nodes[n.node];
  const bool apart = n.state != NodeState::kSchedulable;
  std::string label = node.name;
  if (label.size() > 22) label = label.substr(0, 21) + "…";
  canvas.body += text(kMargin, canvas.y + kCell - 4, label, apart ? " fill=\"#888888\"" : "");
  const std::vector<Cell> cells = cells_of(n, report, input);
  // Stranded units are a node's free units: its partly free and free GPUs are marked.
  const int64_t per_gpu = std::max<int64_t>(n.units_per_gpu, 1);
  for (size_t g = 0; g < cells.size(); ++g) {
    const Cell& cell = cells[g];
    const int x = kMargin + kNodeLabelWidth + static_cast<int>(g) * (kCell + kGap);
    const bool stranded = n.stranded > 0 && cell.used < per_gpu;
    std::string cls_attr = cell.used == 0        ? "gpu free"
                           : cell.used < per_gpu ? "gpu partial"
                                                 : "gpu used";
    if (stranded) cls_attr += " stranded";
    if (apart) cls_attr += " unavailable";
    canvas.body += "<rect class=\"" + cls_attr + "\" data-class=\"" + xml::escape(cls) +
                   "\" data-node=\"" + xml::escape(node.name) + "\" data-gpu=\"" +
                   std::to_string(g) + "\" x=\"" + std::to_string(x) + "\" y=\"" +
                   std::to_string(canvas.y) + "\" width=\"" + std::to_string(kCell) +
                   "\" height=\"" + std::to_string(kCell) + "\" fill=\"" +
                   (apart ? "#e0e0e0" : "#ffffff") + "\" stroke=\"" +
                   (stranded ? "#d00000" : "#888888") + "\"/>\n";
    if (cell.used > 0) {
      canvas.legend.emplace(cell.owner, canvas.legend.size());
      const int h = static_cast<int>(kCell * std::min(cell.used, per_gpu) / per_gpu);
      canvas.body += "<rect x=\"" + std::to_string(x) + "\" y=\"" +
                     std::to_string(canvas.y + kCell - h) + "\" width=\"" + std::to_string(kCell) +
                     "\" height=\"" + std::to_string(h) + "\" fill=\"" +
                     colour(canvas.legend.at(cell.owner)) + "\"/>\n";
    }
    if (stranded) canvas.body += cross(x, canvas.y);
  }
  const int after = kMargin + kNodeLabelWidth + static_cast<int>(cells.size()) * (kCell + kGap);
  if (apart) {
    canvas.body += text(after + 6, canvas.y + kCell - 4,
                        std::string(state_name(n.state)) + (n.taint.empty() ? "" : " " + n.taint),
                        " class=\"state\" fill=\"#888888\"");
  }
  canvas.width = std::max(canvas.width, after + 200);
  canvas.y += kRow;
}

void draw_class(const std::string& title, const std::string& cls, const std::vector<size_t>& rows,
                const std::vector<const PendingEntry*>& pending, const LiveReport& report,
                const LiveInput& input, LiveCanvas& canvas) {
  canvas.y += kLine;
  canvas.body += text(kMargin, canvas.y, title, " class=\"title\"");
  canvas.y += kGap * 2;
  const int top = canvas.y;
  int64_t widest = 0;
  for (size_t r : rows) {
    widest = std::max(widest, report.nodes[r].gpus);
    draw_node(report.nodes[r], cls, report, input, canvas);
  }
  const int list_x = kMargin + kNodeLabelWidth + static_cast<int>(widest) * (kCell + kGap) + 160;
  int list_y = top + kLine - 4;
  for (const PendingEntry* e : pending) {
    if (list_y == top + kLine - 4) {
      canvas.body += text(list_x, list_y, "pending:", " class=\"unplaceable-title\"");
      list_y += kLine;
    }
    const LivePod& pod = input.pods[e->pod];
    canvas.body +=
        text(list_x, list_y,
             pod.label() + " (" + (pod.requests.empty() ? "DRA" : requests_text(pod.requests)) +
                 "): " + std::string(reason_text(e->reason)),
             " class=\"unplaceable\"");
    list_y += kLine;
  }
  if (!pending.empty()) canvas.width = std::max(canvas.width, list_x + kListWidth);
  canvas.y = std::max(canvas.y, list_y) + kLine;
}

std::string class_title(const LiveClassReport& c) {
  return c.name + ": " + std::to_string(c.nodes) + " nodes, " + std::to_string(c.total) + " " +
         unit_word(c.shape.unit, c.total) + " — used " + std::to_string(c.used) + ", free " +
         std::to_string(c.free) + ", stranded " + std::to_string(c.stranded) +
         (c.repack.complete ? " (repacked: " + std::to_string(c.repack.stranded) + ", " +
                                  std::to_string(c.repack.empty_nodes) + " nodes empty)"
                            : "");
}

void draw_legend(LiveCanvas& canvas) {
  canvas.y += kLine * 2;
  canvas.body += text(kMargin, canvas.y, "workloads:", " class=\"title\"");
  std::vector<std::pair<std::string, size_t>> order(canvas.legend.begin(), canvas.legend.end());
  std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.second < b.second; });
  for (const auto& [workload, index] : order) {
    canvas.y += kRow;
    canvas.body += "<rect class=\"legend\" x=\"" + std::to_string(kMargin) + "\" y=\"" +
                   std::to_string(canvas.y - kCell + 4) + "\" width=\"" + std::to_string(kCell) +
                   "\" height=\"" + std::to_string(kCell) + "\" fill=\"" + colour(index) + "\"/>\n";
    canvas.body += text(kMargin + kCell + 8, canvas.y, workload);
  }
  canvas.y += kRow;
  canvas.body += "<rect x=\"" + std::to_string(kMargin) + "\" y=\"" +
                 std::to_string(canvas.y - kCell + 4) + "\" width=\"" + std::to_string(kCell) +
                 "\" height=\"" + std::to_string(kCell) +
                 "\" fill=\"#ffffff\" stroke=\"#d00000\"/>\n";
  canvas.body += text(kMargin + kCell + 8, canvas.y,
                      "stranded (free, but neither a pending pod nor the class's usual pod fits)");
  canvas.y += kRow;
  canvas.body += "<rect x=\"" + std::to_string(kMargin) + "\" y=\"" +
                 std::to_string(canvas.y - kCell + 4) + "\" width=\"" + std::to_string(kCell) +
                 "\" height=\"" + std::to_string(kCell) +
                 "\" fill=\"#e0e0e0\" stroke=\"#888888\"/>\n";
  canvas.body += text(kMargin + kCell + 8, canvas.y, "node cordoned, not ready or tainted");
  canvas.y += kMargin;
}

}  // namespace

std::string live_to_svg(const LiveReport& report, const LiveInput& input) {
  LiveCanvas canvas;
  for (size_t cls = 0; cls < report.classes.size(); ++cls) {
    std::vector<size_t> rows;
    for (size_t r = 0; r < report.nodes.size(); ++r) {
      if (report.nodes[r].cls == static_cast<int>(cls)) rows.push_back(r);
    }
    std::vector<const PendingEntry*> pending;
    for (const PendingEntry& e : report.pending) {
      if (e.cls == static_cast<int>(cls)) pending.push_back(&e);
    }
    if (rows.empty() && pending.empty()) continue;
    draw_class(class_title(report.classes[cls]), report.classes[cls].name, rows, pending, report,
               input, canvas);
  }
  std::vector<const PendingEntry*> classless;
  for (const PendingEntry& e : report.pending) {
    if (e.cls < 0) classless.push_back(&e);
  }
  if (!report.unmatched.empty() || !classless.empty()) {
    draw_class("no class: nodes with GPUs that match no class, pods of no class", "",
               report.unmatched, classless, report, input, canvas);
  }
  draw_legend(canvas);
  return document(canvas.width, canvas.y, canvas.body);
}

}  // namespace gpuadmit::fleet
