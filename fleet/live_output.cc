#include "fleet/live_output.h"

#include <algorithm>
#include <cmath>

#include "fleet/cost.h"
#include "fleet/text_table.h"

namespace gpuadmit::fleet {
namespace {

// The terminal report names at most this many nodes per list and pending pods; --output json
// holds every one.
constexpr size_t kListed = 20;

void more(std::ostream& out, size_t shown, size_t total, const char* what) {
  if (total > shown) {
    out << "    … and " << total - shown << " more " << what << " (--output json lists them)\n";
  }
}

std::string units_text(const LiveClassReport& c, int64_t n) {
  return std::to_string(n) + " " + unit_word(c.shape.unit, n);
}

std::string plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string apart_text(const LiveClassReport& c) {
  std::string out;
  auto add = [&](int64_t n, const char* what) {
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(c.cordoned, "cordoned");
  add(c.not_ready, "not ready");
  add(c.tainted, "tainted");
  return out.empty() ? "-" : out;
}

const LiveClassReport* class_of(const LiveReport& report, int cls) {
  return cls >= 0 ? &report.classes[static_cast<size_t>(cls)] : nullptr;
}

// "37 GPUs stranded on 9 nodes; repacked, 9 stranded and 3 nodes empty (1 now)".
std::string stranded_line(const LiveClassReport& c) {
  std::string out = c.name + ": ";
  out += c.stranded > 0
             ? units_text(c, c.stranded) + " stranded on " + plural(c.stranded_nodes, "node")
             : "nothing stranded";
  if (c.repack.skipped) {
    return out + "; not repacked (more than " + std::to_string(kMaxRepackGpus) + " GPUs)";
  }
  if (!c.repack.complete) {
    return out + "; repacked by first-fit decreasing, " + plural(c.repack.unplaced_pods, "pod") +
           " would not fit (no what-if)";
  }
  return out + "; repacked, " + std::to_string(c.repack.stranded) + " stranded and " +
         plural(c.repack.empty_nodes, "node") + " empty (" + std::to_string(c.empty_nodes) +
         " now)";
}

void write_classes(const LiveReport& report, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {{"class", "unit", "nodes", "counted apart", "total",
                                                 "used", "free", "unavailable", "stranded",
                                                 "running pods", "pending pods"}};
  for (const LiveClassReport& c : report.classes) {
    rows.push_back({c.name, std::string(unit_name(c.shape.unit)), std::to_string(c.nodes),
                    apart_text(c), std::to_string(c.total), std::to_string(c.used),
                    std::to_string(c.free), std::to_string(c.unavailable),
                    std::to_string(c.stranded), std::to_string(c.running_pods),
                    std::to_string(c.pending_pods)});
  }
  out << "GPU classes:\n";
  write_table(rows, out);
}

std::string tenant_name(const LiveTenantReport& t) {
  return t.name.empty() ? "(no tenant)" : t.name;
}

// Tenants with GPU pods, policy order, then the namespaces over their quota.
void write_tenants(const LiveReport& report, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"tenant", "namespaces", "running", "pending", "quota", "namespaces over quota"}};
  std::vector<std::string> over;
  size_t with_pods = 0;
  for (const LiveTenantReport& t : report.tenants) {
    if (t.namespaces.empty()) continue;
    if (++with_pods <= kListed) {
      rows.push_back({tenant_name(t), std::to_string(t.namespaces.size()),
                      std::to_string(t.running), std::to_string(t.pending),
                      t.quota ? std::to_string(*t.quota) : "-",
                      std::to_string(t.over_quota.size())});
    }
    for (size_t i : t.over_quota) {
      const TenantNamespaceUsage& ns = t.namespaces[i];
      over.push_back(ns.ns + " (" + t.name + "): holds " + std::to_string(ns.held()) + " GPUs (" +
                     std::to_string(ns.running) + " running + " + std::to_string(ns.pending) +
                     " pending), quota " + std::to_string(*t.quota) + ", " +
                     std::to_string(ns.held() - *t.quota) + " over");
    }
  }
  if (with_pods == 0) return;
  out << "\ntenants (GPUs; quota.gpus is each namespace's):\n";
  write_table(rows, out);
  more(out, std::min(with_pods, kListed), with_pods, "tenants");
  if (over.empty()) return;
  out << "\nnamespaces over their GPU quota (" << over.size() << "):\n";
  for (size_t i = 0; i < over.size() && i < kListed; ++i) out << "  " << over[i] << "\n";
  more(out, std::min(over.size(), kListed), over.size(), "namespaces");
}

// Priced classes' GPUs per hour, and the tenants' running pods per hour.
void write_cost(const LiveReport& report, std::ostream& out) {
  if (report.currency.empty()) return;
  std::vector<std::vector<std::string>> classes = {{"class", "allocated", "idle", "stranded"}};
  for (const LiveClassReport& c : report.classes) {
    if (c.cost) {
      classes.push_back(
          {c.name, money(c.cost->used), money(c.cost->idle), money(c.cost->stranded)});
    }
  }
  out << "\ncost per hour (" << report.currency << "):\n";
  write_table(classes, out);
  std::vector<std::vector<std::string>> tenants = {{"tenant", "allocated"}};
  for (const LiveTenantReport& t : report.tenants) {
    if (t.cost_micros > 0) tenants.push_back({tenant_name(t), money(t.cost_micros)});
  }
  if (tenants.size() == 1) return;
  out << "\n";
  write_table(tenants, out);
}

void write_stranded(const LiveReport& report, const LiveInput& input, std::ostream& out) {
  out << "\nstranded now:\n";
  for (const LiveClassReport& c : report.classes) {
    if (c.nodes == 0) continue;
    out << "  " << stranded_line(c) << "\n";
    size_t shown = 0;
    for (const LiveNodeReport& n : report.nodes) {
      if (n.stranded == 0 || class_of(report, n.cls) != &c || shown++ >= kListed) continue;
      out << "    " << input.nodes[n.node].name << ": " << n.free() << " of " << n.capacity
          << " free, fit neither a pending pod nor the usual pod (" << requests_text(c.usual)
          << ")\n";
    }
    more(out, std::min(shown, kListed), static_cast<size_t>(c.stranded_nodes), "nodes");
  }
}

void write_nodes(const LiveReport& report, const LiveInput& input, std::ostream& out) {
  size_t apart = 0;
  for (const LiveNodeReport& n : report.nodes) {
    const LiveClassReport* c = class_of(report, n.cls);
    if (c == nullptr || n.state == NodeState::kSchedulable) continue;
    if (apart == 0) out << "\nnodes counted apart:\n";
    if (apart++ >= kListed) continue;
    out << "  " << input.nodes[n.node].name << " (" << c->name << "): " << state_name(n.state)
        << (n.taint.empty() ? "" : " (" + n.taint + ")") << "; " << n.used_units << " of "
        << units_text(*c, n.capacity) << " used, " << n.free() << " unavailable\n";
  }
  more(out, std::min(apart, kListed), apart, "nodes");
  if (!report.unmatched.empty()) {
    out << "\nnodes with GPUs that match no class (" << report.unmatched.size() << "):\n";
    for (size_t k = 0; k < report.unmatched.size() && k < kListed; ++k) {
      const LiveNodeReport& n = report.nodes[report.unmatched[k]];
      const LiveNode& node = input.nodes[n.node];
      out << "  " << node.name << ":";
      for (const ResourceAmount& a : node.allocatable) {
        if (a.amount > 0) out << " " << a.amount << " " << a.resource;
      }
      if (node.dra_devices > 0) out << " " << node.dra_devices << " DRA GPUs";
      if (!node.gfd.product.empty()) out << " (" << node.gfd.product << ")";
      out << ", " << n.used_units << " used by "
          << plural(static_cast<int64_t>(n.pods.size()), "pod") << "\n";
    }
    more(out, std::min(report.unmatched.size(), kListed), report.unmatched.size(), "nodes");
  }
  size_t notes = 0;
  for (const LiveNodeReport& n : report.nodes) {
    for (const std::string& note : n.notes) {
      if (notes == 0) out << "\nnode notes:\n";
      if (notes++ >= kListed) continue;
      out << "  " << input.nodes[n.node].name << ": " << note << "\n";
    }
  }
  more(out, std::min(notes, kListed), notes, "notes");
}

void write_pending(const LiveReport& report, const LiveInput& input, std::ostream& out) {
  if (report.pending.empty()) return;
  out << "\npending GPU pods (" << report.pending.size() << "):\n";
  for (size_t k = 0; k < report.pending.size() && k < kListed; ++k) {
    const PendingEntry& e = report.pending[k];
    const LivePod& pod = input.pods[e.pod];
    out << "  " << pod.label();
    if (!pod.owner.empty()) out << " (" << pod.owner << ")";
    out << ": " << (pod.requests.empty() ? "DRA claims" : requests_text(pod.requests));
    if (const LiveClassReport* c = class_of(report, e.cls)) out << " on " << c->name;
    out << ": " << reason_text(e.reason) << " — " << e.detail << "\n";
    if (!pod.scheduler_message.empty()) out << "      scheduler: " << pod.scheduler_message << "\n";
  }
  more(out, std::min(report.pending.size(), kListed), report.pending.size(), "pending GPU pods");
}

Json amounts_json(const ResourceAmounts& amounts) {
  Json out = Json::object();
  for (const ResourceAmount& a : amounts) out[a.resource] = a.amount;
  return out;
}

Json requests_json(const std::vector<PodGpuRequest>& requests) {
  Json out = Json::object();
  for (const PodGpuRequest& r : requests) out[r.resource] = r.units;
  return out;
}

Json or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json money_json(int64_t micros) { return Json::parse(money(micros)); }

Json cost_json(const LiveClassReport& c) {
  if (!c.cost) return nullptr;
  return Json{{"perGPUHour", money_json(c.cost->per_gpu_hour)},
              {"used", money_json(c.cost->used)},
              {"idle", money_json(c.cost->idle)},
              {"stranded", money_json(c.cost->stranded)}};
}

Json tenant_json(const LiveReport& report, const LiveTenantReport& t) {
  Json namespaces = Json::array();
  for (size_t i = 0; i < t.namespaces.size(); ++i) {
    const TenantNamespaceUsage& ns = t.namespaces[i];
    const bool over = std::find(t.over_quota.begin(), t.over_quota.end(), i) != t.over_quota.end();
    namespaces.push_back({{"name", ns.ns},
                          {"running", ns.running},
                          {"pending", ns.pending},
                          {"runningPods", ns.running_pods},
                          {"pendingPods", ns.pending_pods},
                          {"claimPods", ns.claim_pods},
                          {"overQuota", over}});
  }
  Json classes = Json::array();
  for (const TenantClassUsage& c : t.classes) {
    const LiveClassReport* cls = c.cls >= 0 ? &report.classes[static_cast<size_t>(c.cls)] : nullptr;
    classes.push_back({{"class", cls != nullptr ? Json(cls->name) : Json(nullptr)},
                       {"running", c.running},
                       {"pending", c.pending}});
  }
  return Json{{"name", or_null(t.name)},
              {"quota", t.quota ? Json(*t.quota) : Json(nullptr)},
              {"running", t.running},
              {"pending", t.pending},
              {"namespacesOverQuota", t.over_quota.size()},
              {"costPerHour", report.currency.empty() ? Json(nullptr) : money_json(t.cost_micros)},
              {"namespaces", std::move(namespaces)},
              {"classes", std::move(classes)}};
}

Json class_json(const LiveClassReport& c) {
  return Json{{"name", c.name},
              {"unit", unit_name(c.shape.unit)},
              {"nodes",
               {{"total", c.nodes},
                {"schedulable", c.schedulable},
                {"cordoned", c.cordoned},
                {"notReady", c.not_ready},
                {"tainted", c.tainted},
                {"empty", c.empty_nodes}}},
              {"total", c.total},
              {"used", c.used},
              {"free", c.free},
              {"unavailable", c.unavailable},
              {"stranded", c.stranded},
              {"strandedNodes", c.stranded_nodes},
              {"runningPods", c.running_pods},
              {"pendingPods", c.pending_pods},
              {"usualRequest", c.usual.empty() ? Json(nullptr) : requests_json(c.usual)},
              {"usualUnits", c.usual_units},
              {"repack",
               {{"skipped", c.repack.skipped},
                {"complete", c.repack.complete},
                {"unplacedPods", c.repack.unplaced_pods},
                {"stranded", c.repack.stranded},
                {"strandedNodes", c.repack.stranded_nodes},
                {"emptyNodes", c.repack.empty_nodes}}},
              {"cost", cost_json(c)}};
}

Json node_json(const LiveReport& report, const LiveNodeReport& n, const LiveNode& node) {
  const LiveClassReport* c = class_of(report, n.cls);
  Json notes = Json::array();
  for (const std::string& note : n.notes) notes.push_back(note);
  return Json{{"name", node.name},
              {"class", c != nullptr ? Json(c->name) : Json(nullptr)},
              {"state", state_name(n.state)},
              {"taint", or_null(n.taint)},
              {"product", or_null(node.gfd.product)},
              {"gpus", n.gpus},
              {"unitsPerGPU", n.units_per_gpu},
              {"capacity", n.capacity},
              {"used", n.used_units},
              {"free", n.free()},
              {"stranded", n.stranded},
              {"allocatable", amounts_json(node.allocatable)},
              {"requested", amounts_json(n.used)},
              {"draGPUs", node.dra_devices},
              {"draAllocated", node.dra_allocated},
              {"pods", n.pods.size()},
              {"notes", std::move(notes)}};
}

Json pending_json(const LiveReport& report, const PendingEntry& e, const LivePod& pod) {
  const LiveClassReport* c = class_of(report, e.cls);
  return Json{{"namespace", pod.ns},
              {"name", pod.name},
              {"owner", or_null(pod.owner)},
              {"class", c != nullptr ? Json(c->name) : Json(nullptr)},
              {"requests", requests_json(pod.requests)},
              {"reason", reason_text(e.reason)},
              {"reasonId", reason_id(e.reason)},
              {"detail", e.detail},
              {"scheduler", or_null(pod.scheduler_message)},
              {"nominatedNode", or_null(pod.nominated_node)}};
}

// Prometheus text format: label values escape \, " and newline; HELP text \ and newline.
std::string escape_label(std::string_view value) {
  std::string out;
  for (char ch : value) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

struct Family {
  const char* name;
  const char* help;
};

void family(std::ostream& out, const Family& f) {
  out << "# HELP " << f.name << " " << f.help << "\n# TYPE " << f.name << " gauge\n";
}

void sample(std::ostream& out, const Family& f, const std::string& labels, int64_t value) {
  out << f.name << "{" << labels << "} " << value << "\n";
}

std::string class_labels(const LiveClassReport& c) {
  return "class=\"" + escape_label(c.name) + "\",unit=\"" + escape_label(unit_name(c.shape.unit)) +
         "\"";
}

}  // namespace

void write_live_text(const LiveReport& report, const LiveInput& input, std::ostream& out) {
  int64_t gpu_nodes = 0;
  for (const LiveNodeReport& n : report.nodes) gpu_nodes += n.capacity > 0;
  out << "live fleet: " << plural(static_cast<int64_t>(input.nodes.size()), "node") << ", "
      << gpu_nodes << " with GPUs; " << report.running_gpu_pods << " GPU pods running, "
      << report.pending.size() << " pending\n\n";
  write_classes(report, out);
  write_tenants(report, out);
  write_cost(report, out);
  write_stranded(report, input, out);
  write_nodes(report, input, out);
  write_pending(report, input, out);
  if (report.pods_on_unknown_nodes > 0) {
    out << "\n"
        << plural(report.pods_on_unknown_nodes, "GPU pod")
        << " bound to nodes the input does not hold (not counted); export nodes and pods "
           "together\n";
  }
}

Json live_to_json(const LiveReport& report, const LiveInput& input) {
  Json classes = Json::array();
  for (const LiveClassReport& c : report.classes) classes.push_back(class_json(c));
  Json nodes = Json::array();
  for (const LiveNodeReport& n : report.nodes)
    nodes.push_back(node_json(report, n, input.nodes[n.node]));
  Json unmatched = Json::array();
  for (size_t i : report.unmatched) unmatched.push_back(input.nodes[report.nodes[i].node].name);
  Json pending = Json::array();
  for (const PendingEntry& e : report.pending)
    pending.push_back(pending_json(report, e, input.pods[e.pod]));
  Json tenants = Json::array();
  for (const LiveTenantReport& t : report.tenants) tenants.push_back(tenant_json(report, t));
  return Json{{"mode", "live"},
              {"currency", or_null(report.currency)},
              {"classes", std::move(classes)},
              {"tenants", std::move(tenants)},
              {"nodes", std::move(nodes)},
              {"unmatchedNodes", std::move(unmatched)},
              {"pending", std::move(pending)},
              {"summary",
               {{"nodes", input.nodes.size()},
                {"pods", input.pods_read},
                {"terminalPods", input.terminal_pods},
                {"runningGPUPods", report.running_gpu_pods},
                {"pendingGPUPods", report.pending.size()},
                {"podsOnUnknownNodes", report.pods_on_unknown_nodes},
                {"objectsReadTwice", input.replaced}}}};
}

namespace {

// The GPU unit families, one sample per class each.
void write_unit_families(const LiveReport& report, std::ostream& out) {
  static constexpr Family kUnits[] = {
      {"gpuadmit_fleet_gpus",
       "GPU units allocatable on the class's nodes (unit: gpu, replica or mig-slice)."},
      {"gpuadmit_fleet_gpus_used", "GPU units requested by the running pods on the class's nodes."},
      {"gpuadmit_fleet_gpus_free", "GPU units free on the class's schedulable nodes."},
      {"gpuadmit_fleet_gpus_unavailable",
       "GPU units free on cordoned, NotReady or tainted nodes of the class."},
      {"gpuadmit_fleet_gpus_stranded",
       "Free GPU units that no pending pod and no pod of the class's usual size fits."},
      {"gpuadmit_fleet_gpus_stranded_after_repack",
       "Stranded GPU units if the running pods were packed again by first-fit decreasing (-1: the "
       "repack does not place every pod)."}};
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    family(out, kUnits[i]);
    for (const LiveClassReport& c : report.classes) {
      const int64_t values[] = {c.total,    c.used,
                                c.free,     c.unavailable,
                                c.stranded, c.repack.complete ? c.repack.stranded : -1};
      sample(out, kUnits[i], class_labels(c), values[i]);
    }
  }
}

// The node families: by state, empty, empty after a repack; and the running pods.
void write_node_families(const LiveReport& report, std::ostream& out) {
  const Family nodes{"gpuadmit_fleet_nodes", "Nodes of the class by state."};
  family(out, nodes);
  for (const LiveClassReport& c : report.classes) {
    const std::string cls = "class=\"" + escape_label(c.name) + "\",state=\"";
    sample(out, nodes, cls + "schedulable\"", c.schedulable);
    sample(out, nodes, cls + "cordoned\"", c.cordoned);
    sample(out, nodes, cls + "not_ready\"", c.not_ready);
    sample(out, nodes, cls + "tainted\"", c.tainted);
  }
  const Family empty{"gpuadmit_fleet_nodes_empty",
                     "Schedulable nodes of the class with GPUs and no GPU pod running."};
  const Family empty_after{"gpuadmit_fleet_nodes_empty_after_repack",
                           "Nodes of the class a repack of the running pods would leave empty (-1: "
                           "the repack does not place every pod)."};
  const Family running{"gpuadmit_fleet_pods_running", "GPU pods running on the class's nodes."};
  family(out, empty);
  for (const LiveClassReport& c : report.classes)
    sample(out, empty, "class=\"" + escape_label(c.name) + "\"", c.empty_nodes);
  family(out, empty_after);
  for (const LiveClassReport& c : report.classes)
    sample(out, empty_after, "class=\"" + escape_label(c.name) + "\"",
           c.repack.complete ? c.repack.empty_nodes : -1);
  family(out, running);
  for (const LiveClassReport& c : report.classes)
    sample(out, running, "class=\"" + escape_label(c.name) + "\"", c.running_pods);
}

// The pending pods by class and reason, and the GPU nodes no class matches.
void write_pending_families(const LiveReport& report, std::ostream& out) {
  const Family pending{"gpuadmit_fleet_pods_pending",
                       "Pending GPU pods by class and reason (class \"\": none)."};
  family(out, pending);
  constexpr PendingReason kReasons[] = {PendingReason::kGated,
                                        PendingReason::kNoClass,
                                        PendingReason::kDra,
                                        PendingReason::kLargerThanAnyNode,
                                        PendingReason::kTaintsAffinity,
                                        PendingReason::kFragmentation,
                                        PendingReason::kClassFull,
                                        PendingReason::kFits};
  for (int cls = -1; cls < static_cast<int>(report.classes.size()); ++cls) {
    const std::string name = cls < 0 ? "" : report.classes[static_cast<size_t>(cls)].name;
    for (PendingReason reason : kReasons) {
      int64_t n = 0;
      for (const PendingEntry& e : report.pending) n += e.cls == cls && e.reason == reason;
      sample(
          out, pending,
          "class=\"" + escape_label(name) + "\",reason=\"" + std::string(reason_id(reason)) + "\"",
          n);
    }
  }
  const Family unmatched{"gpuadmit_fleet_unmatched_gpu_nodes",
                         "Nodes with GPUs that match no class of the policy."};
  family(out, unmatched);
  out << unmatched.name << " " << report.unmatched.size() << "\n";
}

std::string tenant_label(const LiveTenantReport& t) {
  return "tenant=\"" + escape_label(t.name) + "\"";
}

// Per tenant (every one of the policy: zeros included), its classes with GPUs, and its
// namespaces with GPU pods.
void write_tenant_families(const LiveReport& report, std::ostream& out) {
  const Family gpus{"gpuadmit_fleet_tenant_gpus",
                    "GPUs the tenant's pods request, by state (running, pending; tenant \"\": "
                    "namespaces of no tenant)."};
  family(out, gpus);
  for (const LiveTenantReport& t : report.tenants) {
    sample(out, gpus, tenant_label(t) + ",state=\"running\"", t.running);
    sample(out, gpus, tenant_label(t) + ",state=\"pending\"", t.pending);
  }
  const Family by_class{"gpuadmit_fleet_tenant_class_gpus",
                        "GPUs the tenant's pods request on a class, by state (class \"\": none)."};
  family(out, by_class);
  for (const LiveTenantReport& t : report.tenants) {
    for (const TenantClassUsage& c : t.classes) {
      const std::string cls =
          c.cls >= 0 ? escape_label(report.classes[static_cast<size_t>(c.cls)].name) : "";
      const std::string labels = tenant_label(t) + ",class=\"" + cls + "\",state=\"";
      sample(out, by_class, labels + "running\"", c.running);
      sample(out, by_class, labels + "pending\"", c.pending);
    }
  }
  const Family held{"gpuadmit_fleet_namespace_gpus",
                    "GPUs a namespace's running and pending pods request, as its ResourceQuota "
                    "charges them (namespaces with GPU pods)."};
  const Family quota{"gpuadmit_fleet_namespace_gpu_quota",
                     "The namespace's GPU quota, its tenant's quota.gpus (tenants with one)."};
  family(out, held);
  for (const LiveTenantReport& t : report.tenants) {
    for (const TenantNamespaceUsage& ns : t.namespaces)
      sample(out, held, tenant_label(t) + ",namespace=\"" + escape_label(ns.ns) + "\"", ns.held());
  }
  family(out, quota);
  for (const LiveTenantReport& t : report.tenants) {
    if (!t.quota) continue;
    for (const TenantNamespaceUsage& ns : t.namespaces)
      sample(out, quota, tenant_label(t) + ",namespace=\"" + escape_label(ns.ns) + "\"", *t.quota);
  }
}

// Money per hour (docs/fleet.md, "Cost"): when a class has a price.
void write_cost_families(const LiveReport& report, std::ostream& out) {
  if (report.currency.empty()) return;
  const std::string currency = "currency=\"" + escape_label(report.currency) + "\"";
  const Family classes{"gpuadmit_fleet_cost_per_hour",
                       "What a priced class's GPUs cost per hour, by state (used: requested by "
                       "running pods; idle: free; stranded: of idle, stranded now)."};
  family(out, classes);
  for (const LiveClassReport& c : report.classes) {
    if (!c.cost) continue;
    const std::string labels = "class=\"" + escape_label(c.name) + "\"," + currency + ",state=\"";
    out << classes.name << "{" << labels << "used\"} " << money(c.cost->used) << "\n";
    out << classes.name << "{" << labels << "idle\"} " << money(c.cost->idle) << "\n";
    out << classes.name << "{" << labels << "stranded\"} " << money(c.cost->stranded) << "\n";
  }
  const Family tenants{"gpuadmit_fleet_tenant_cost_per_hour",
                       "What the tenant's running pods on priced classes cost per hour."};
  family(out, tenants);
  for (const LiveTenantReport& t : report.tenants) {
    out << tenants.name << "{" << tenant_label(t) << "," << currency << "} " << money(t.cost_micros)
        << "\n";
  }
}

}  // namespace

void write_live_prometheus(const LiveReport& report, std::ostream& out) {
  write_unit_families(report, out);
  write_node_families(report, out);
  write_pending_families(report, out);
  write_tenant_families(report, out);
  write_cost_families(report, out);
}

}  // namespace gpuadmit::fleet
