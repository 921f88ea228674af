#include "fleet/report.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "fleet/text_table.h"

namespace gpuadmit::fleet {
namespace {

constexpr size_t kMaxFragmenters = 5;
constexpr size_t kMaxSuggestions = 3;

int64_t unplaced_pods(const ClassPacking& p) {
  int64_t pods = 0;
  for (const UnplacedPods& u : p.unplaced) pods = saturating_add(pods, u.pods);
  return pods;
}

// The nearest pod sizes that tile a node (the largest divisor of a node's units below the
// group's size, the smallest above) and keep the group's units in total; the one that frees more
// stranded units when the class is packed again, if any does.
void suggest(const ClassShape& shape, const FleetInput& input, const std::vector<size_t>& groups,
             const ClassPacking& before, Fragmenter& f) {
  const PodGroup& original = input.groups[f.group];
  const int64_t capacity = shape.units_per_node();
  if (original.pods > std::numeric_limits<int64_t>::max() / std::max<int64_t>(original.units, 1)) {
    return;
  }
  const int64_t total = original.pods * original.units;
  int64_t below = 0, above = 0;
  for (int64_t d = 1; d <= capacity; ++d) {
    if (capacity % d != 0) continue;
    if (d < original.units) below = d;
    if (d > original.units && above == 0) above = d;
  }
  for (int64_t d : {below, above}) {
    if (d == 0 || total % d != 0) continue;
    const ClassPacking after = pack_class(shape, input, groups, {f.group, d, total / d});
    const int64_t freed = before.stranded - after.stranded;
    if (freed <= f.freed || unplaced_pods(after) > unplaced_pods(before)) continue;
    f.freed = freed;
    f.suggested_units = d;
    f.suggested_pods = total / d;
  }
}

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", fraction * 100.0);
  return buffer;
}

const ClassReport* find_class(const FleetReport& report, const std::string& name) {
  for (const ClassReport& c : report.classes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string where(const FleetInput& input, const Workload& w) {
  return input.files[w.file] + ":" + std::to_string(w.line);
}

// "larger than a node (8 GPUs)" and friends.
std::string reason_detail(const FleetReport& report, const PodGroup& group, Unplaceable reason) {
  std::string text(reason_text(reason));
  const ClassReport* c = find_class(report, group.class_name);
  if (reason == Unplaceable::kLargerThanNode && c != nullptr) {
    const int64_t per_node = c->packing.shape.units_per_node();
    text +=
        " (" + std::to_string(per_node) + " " + unit_word(c->packing.shape.unit, per_node) + ")";
  } else if (reason == Unplaceable::kNoClass && !group.class_name.empty()) {
    text += " (\"" + group.class_name + "\" is not a class of the policy)";
  }
  return text;
}

}  // namespace

std::string_view reason_text(Unplaceable reason) {
  switch (reason) {
    case Unplaceable::kNone:
      return "";
    case Unplaceable::kNoClass:
      return "no class";
    case Unplaceable::kClassNotAllowed:
      return "class not allowed for the namespace";
    case Unplaceable::kLargerThanNode:
      return "larger than a node";
    case Unplaceable::kClassFull:
      return "class full";
  }
  return "";
}

std::string Workload::label() const { return ns + "/" + name + " (" + kind + ")"; }

double ClassReport::utilisation() const {
  const int64_t t = total();
  return t > 0 ? static_cast<double>(packing.placed) / static_cast<double>(t) : 0.0;
}

FleetReport build_report(const FleetInput& input, const CompiledPolicy& policy) {
  FleetReport report;
  for (size_t g = 0; g < input.groups.size(); ++g) {
    const PodGroup& group = input.groups[g];
    if (group.blocked != Unplaceable::kNone)
      report.unplaceable.push_back({g, group.pods, group.blocked});
  }
  for (const GpuClass& gpu_class : policy.policy().classes) {
    std::vector<size_t> groups;
    for (size_t g = 0; g < input.groups.size(); ++g) {
      const PodGroup& group = input.groups[g];
      if (group.blocked == Unplaceable::kNone && group.units > 0 && group.pods > 0 &&
          group.class_name == gpu_class.name) {
        groups.push_back(g);
      }
    }
    const ClassShape shape = class_shape(gpu_class);
    ClassReport c{gpu_class.name, pack_class(shape, input, groups)};
    for (const UnplacedPods& u : c.packing.unplaced)
      report.unplaceable.push_back({u.group, u.pods, u.reason});
    std::vector<Fragmenter> mine;
    for (size_t g : groups) {
      if (c.packing.stranded_by_group[g] > 0)
        mine.push_back({g, c.name, c.packing.stranded_by_group[g]});
    }
    std::stable_sort(mine.begin(), mine.end(), [](const Fragmenter& a, const Fragmenter& b) {
      return a.stranded > b.stranded;
    });
    for (size_t i = 0; i < mine.size() && i < kMaxSuggestions; ++i) {
      if (shape.unit != ClassUnit::kMigSlice) suggest(shape, input, groups, c.packing, mine[i]);
    }
    report.fragmenters.insert(report.fragmenters.end(), mine.begin(), mine.end());
    report.classes.push_back(std::move(c));
  }
  std::stable_sort(
      report.fragmenters.begin(), report.fragmenters.end(),
      [](const Fragmenter& a, const Fragmenter& b) { return a.stranded > b.stranded; });
  if (report.fragmenters.size() > kMaxFragmenters) report.fragmenters.resize(kMaxFragmenters);
  for (const UnplaceableEntry& u : report.unplaceable) {
    report.unplaceable_pods = saturating_add(report.unplaceable_pods, u.pods);
  }
  for (const Tenant& tenant : policy.policy().tenants) {
    TenantReport t{tenant.name, 0, tenant.quota_gpus};
    for (const PodGroup& group : input.groups) {
      if (input.workloads[group.workload].tenant == tenant.name) {
        t.requested_gpus = saturating_add(t.requested_gpus, saturating_mul(group.gpus, group.pods));
      }
    }
    report.tenants.push_back(std::move(t));
  }
  return report;
}

void write_text(const FleetReport& report, const FleetInput& input, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {{"class", "unit", "nodes", "total", "requested",
                                                 "placed", "stranded", "utilisation",
                                                 "unplaceable pods"}};
  for (const ClassReport& c : report.classes) {
    int64_t unplaced = 0;
    for (const UnplaceableEntry& u : report.unplaceable) {
      if (input.groups[u.group].class_name == c.name) unplaced = saturating_add(unplaced, u.pods);
    }
    const ClassShape& s = c.packing.shape;
    rows.push_back({c.name, std::string(unit_name(s.unit)),
                    std::to_string(s.nodes) + "×" + std::to_string(s.units_per_node()),
                    std::to_string(c.total()), std::to_string(c.packing.requested),
                    std::to_string(c.packing.placed), std::to_string(c.packing.stranded),
                    percent(c.utilisation()), std::to_string(unplaced)});
  }
  out << "GPU classes:\n";
  write_table(rows, out);
  if (!report.unplaceable.empty()) {
    out << "\nunplaceable pods (" << report.unplaceable_pods << "):\n";
    for (const UnplaceableEntry& u : report.unplaceable) {
      const PodGroup& g = input.groups[u.group];
      const Workload& w = input.workloads[g.workload];
      out << "  " << where(input, w) << ": " << w.label() << " " << g.path << ": " << u.pods
          << (u.pods == 1 ? " pod" : " pods") << " of " << g.gpus << " GPU"
          << (g.gpus == 1 ? "" : "s") << (g.class_name.empty() ? "" : " on " + g.class_name) << ": "
          << reason_detail(report, g, u.reason) << "\n";
    }
  }
  if (!report.tenants.empty()) {
    std::vector<std::vector<std::string>> t = {{"tenant", "requested GPUs", "quota.gpus", ""}};
    for (const TenantReport& r : report.tenants) {
      const bool over = r.quota && r.requested_gpus > *r.quota;
      t.push_back({r.name, std::to_string(r.requested_gpus),
                   r.quota ? std::to_string(*r.quota) : "-", over ? "over quota" : ""});
    }
    out << "\ntenants:\n";
    write_table(t, out);
  }
  if (!report.fragmenters.empty()) {
    out << "\nworkloads that strand most:\n";
    for (const Fragmenter& f : report.fragmenters) {
      const PodGroup& g = input.groups[f.group];
      const Workload& w = input.workloads[g.workload];
      const ClassShape& s = find_class(report, f.class_name)->packing.shape;
      out << "  " << where(input, w) << ": " << w.label() << " " << g.path << ": " << g.pods
          << " × " << g.units << " " << unit_word(s.unit, g.units) << " on " << s.units_per_node()
          << "-" << unit_word(s.unit, 1) << " nodes of " << f.class_name << " strand "
          << f.stranded;
      if (f.freed > 0) {
        out << "; as " << f.suggested_pods << " × " << f.suggested_units << " ("
            << f.suggested_pods * f.suggested_units << " in total) " << f.freed
            << " fewer stranded";
      }
      out << "\n";
    }
  }
}

namespace {

// Where a pod group comes from: its file, line, object and pod spec.
Json workload_json(const FleetInput& input, const PodGroup& g) {
  const Workload& w = input.workloads[g.workload];
  return Json{{"file", input.files[w.file]},
              {"line", w.line},
              {"apiVersion", w.api_version},
              {"kind", w.kind},
              {"namespace", w.ns},
              {"name", w.name},
              {"podSpec", g.path}};
}

// Each class: its shape, capacity, what was placed and stranded, its unplaceable pods.
Json classes_json(const FleetReport& report, const FleetInput& input) {
  Json classes = Json::array();
  for (const ClassReport& c : report.classes) {
    const ClassShape& s = c.packing.shape;
    int64_t unplaced = 0;
    for (const UnplaceableEntry& u : report.unplaceable) {
      if (input.groups[u.group].class_name == c.name) unplaced = saturating_add(unplaced, u.pods);
    }
    classes.push_back({{"name", c.name},
                       {"unit", unit_name(s.unit)},
                       {"nodes", s.nodes},
                       {"gpusPerNode", s.gpus_per_node},
                       {"unitsPerGPU", s.units_per_gpu()},
                       {"total", c.total()},
                       {"requested", c.packing.requested},
                       {"placed", c.packing.placed},
                       {"stranded", c.packing.stranded},
                       {"free", c.total() - c.packing.placed},
                       {"utilisation", c.utilisation()},
                       {"placedPods", c.packing.placed_pods},
                       {"unplaceablePods", unplaced}});
  }
  return classes;
}

// The pod groups that strand capacity, each with a shape that would strand less (or null).
Json fragmenters_json(const FleetReport& report, const FleetInput& input) {
  Json fragmenters = Json::array();
  for (const Fragmenter& f : report.fragmenters) {
    const PodGroup& g = input.groups[f.group];
    Json entry = workload_json(input, g);
    entry["class"] = f.class_name;
    entry["pods"] = g.pods;
    entry["unitsPerPod"] = g.units;
    entry["stranded"] = f.stranded;
    entry["suggestion"] = f.freed > 0 ? Json{{"pods", f.suggested_pods},
                                             {"unitsPerPod", f.suggested_units},
                                             {"freed", f.freed}}
                                      : Json(nullptr);
    fragmenters.push_back(std::move(entry));
  }
  return fragmenters;
}

}  // namespace

Json to_json(const FleetReport& report, const FleetInput& input) {
  Json classes = classes_json(report, input);
  Json unplaceable = Json::array();
  for (const UnplaceableEntry& u : report.unplaceable) {
    const PodGroup& g = input.groups[u.group];
    Json entry = workload_json(input, g);
    entry["class"] = g.class_name;
    entry["pods"] = u.pods;
    entry["gpusPerPod"] = g.gpus;
    entry["reason"] = reason_text(u.reason);
    unplaceable.push_back(std::move(entry));
  }
  Json tenants = Json::array();
  for (const TenantReport& t : report.tenants) {
    tenants.push_back({{"name", t.name},
                       {"requestedGPUs", t.requested_gpus},
                       {"quotaGPUs", t.quota ? Json(*t.quota) : Json(nullptr)}});
  }
  Json fragmenters = fragmenters_json(report, input);
  return Json{{"classes", std::move(classes)},
              {"unplaceable", std::move(unplaceable)},
              {"tenants", std::move(tenants)},
              {"fragmenters", std::move(fragmenters)},
              {"summary", {{"unplaceablePods", report.unplaceable_pods}}}};
}

}  // namespace gpuadmit::fleet
