#include "render/native_rules.h"

#include <algorithm>
#include <functional>

#include "engine/gpu_visibility.h"
#include "engine/kueue.h"
#include "engine/rule.h"
#include "engine/scheduling.h"
#include "engine/workload_kinds.h"
#include "render/native_cel.h"
#include "render/native_model.h"
#include "render/native_tenants.h"
#include "rules/all_rules.h"

namespace gpuadmit::render::native {
namespace {

constexpr std::string_view kShared = "nvidia.com/gpu.shared";
constexpr std::string_view kWhole = "nvidia.com/gpu";
constexpr int64_t kMaxMigComputeSlices = 7;  // rules/fits_on_node.cc

// Whether some node label value satisfies, for key `ky`, the requirements `rs` ({op, vs}) of a
// term together with the pod's nodeSelector `ns` and the labels `lm` ({key: [values]}) —
// engine/scheduling.cc KeyConstraint::satisfiable, exactly. PARSE(x) stands for
// cel::parses_as_int64(x). With no candidate values and Gt/Lt bounds, the smallest integer
// above the lower bound that NotIn does not exclude is either that bound + 1 or an excluded
// value + 1: checking those decides "room > 0" without enumerating the range.
constexpr std::string_view kKeySatisfiable = R"cel((
  rs.exists(r, (r.op in ['In', 'NotIn'] && size(r.vs) == 0)
      || (r.op in ['Exists', 'DoesNotExist'] && size(r.vs) > 0)
      || (r.op in ['Gt', 'Lt'] && !(size(r.vs) == 1 && PARSE(r.vs[0])))
      || !(r.op in ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'])) ? false :
  [rs.exists(r, r.op in ['In', 'Exists', 'Gt', 'Lt'])
      || (ky in ns && type(ns[ky]) == string) || ky in lm].all(pr,
    (rs.exists(r, r.op == 'DoesNotExist') || !pr) ? !pr :
    [[dyn(rs.filter(r, r.op == 'In').map(r, r.vs)
        + ((ky in ns && type(ns[ky]) == string) ? [dyn([ns[ky]])] : [])
        + (ky in lm ? [dyn(lm[ky])] : [])),
     dyn(rs.filter(r, r.op == 'Gt')), dyn(rs.filter(r, r.op == 'Lt')),
     dyn(rs.filter(r, r.op == 'NotIn'))]].all(z,
      [[size(z[1]) > 0 ? z[1].map(r, int(r.vs[0])).max() : 0,
        size(z[2]) > 0 ? z[2].map(r, int(r.vs[0])).min() : 0]].all(bd,
        size(z[0]) > 0
          ? z[0][0].exists(v, z[0].all(s4, v in s4) && !z[3].exists(r, v in r.vs)
              && ((size(z[1]) == 0 && size(z[2]) == 0)
                  || (PARSE(v) && (size(z[1]) == 0 || int(v) > bd[0])
                      && (size(z[2]) == 0 || int(v) < bd[1]))))
          : (size(z[1]) == 0 && size(z[2]) == 0) ? true
          : (size(z[1]) > 0 ? (bd[0] < 9223372036854775807 ? [bd[0] + 1] : []) : [-9223372036854775807 - 1]).exists(xv,
                (size(z[1]) == 0 || xv > bd[0]) && (size(z[2]) == 0 || xv < bd[1])
                && !z[3].exists(r, string(xv) in r.vs))
            || z[3].exists(r, r.vs.exists(v, PARSE(v) && string(int(v)) == v
                && int(v) < 9223372036854775807 && [int(v) + 1].all(xv,
                  (size(z[1]) == 0 || xv > bd[0]) && (size(z[2]) == 0 || xv < bd[1])
                  && !z[3].exists(r2, string(xv) in r2.vs))))
      )))))cel";

// The class's node labels for context entry `c` (class_node_labels: with MIG strategy single
// and a profile, the product values become GPU Feature Discovery's `<product>-MIG-<profile>`,
// "+" written "."), as a CEL map {key: [values]} or a list [{k, v}]; {} / [] for an unknown
// class or one without labels.
std::string class_label_form(const CompiledPolicy& policy, std::string_view c, bool as_map) {
  const std::string cc(c);
  std::string out = as_map ? "{}" : "[]";
  const std::vector<GpuClass>& classes = policy.policy().classes;
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    if (it->node_selector.empty()) continue;
    const bool single = it->mig && it->mig->strategy == MigConfig::Strategy::kSingle;
    std::string form = as_map ? "{" : "[";
    for (size_t i = 0; i < it->node_selector.size(); ++i) {
      const auto& [key, values] = it->node_selector[i];
      std::string v = string_list(values);
      if (single && key == kGpuProductLabel) {
        v = "(" + cc + ".mig != '' ? " + v + ".map(pv, pv + '-MIG-' + " + cc +
            ".mig.replace('+', '.')) : " + v + ")";
      }
      form +=
          std::string(i ? ", " : "") +
          (as_map ? quote(key) + ": " + v : "{'k': dyn(" + quote(key) + "), 'v': dyn(" + v + ")}");
    }
    form += as_map ? "}" : "]";
    out = "(" + cc + ".cls == " + quote(it->name) + " ? " + form + " : " + out + ")";
  }
  return out;
}

// The rule's own default action (rules/): deny, or warn for GPU014.
Action default_action(std::string_view id) {
  static const std::vector<std::unique_ptr<const Rule>> rules = default_rules();
  for (const auto& r : rules) {
    if (r->id() == id) return r->default_action();
  }
  return Action::kDeny;
}

std::string valid(std::string_view v) { return cel::valid_quantity(v); }
std::string qty(std::string_view v) { return cel::quantity_of(v); }

// `c.cls == 'a' ? X_a : c.cls == 'b' ? X_b : otherwise` over the classes `each` returns an
// expression for.
std::string per_class(const CompiledPolicy& policy,
                      const std::function<std::optional<std::string>(const GpuClass&)>& each,
                      std::string_view otherwise = "true") {
  std::string out(otherwise);
  const std::vector<GpuClass>& classes = policy.policy().classes;
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    if (const std::optional<std::string> x = each(*it)) {
      out = "(c.cls == " + quote(it->name) + " ? " + *x + " : " + out + ")";
    }
  }
  return out;
}

// --- GPU001, GPU002, GPU008, GPU015: the quantities themselves ------------------------------

std::string requests_equal_limits() {
  return "c.cs.all(k, k.g.all(e, e.r == null || !" + valid("e.r") + " || (e.l != null && (!" +
         valid("e.l") + " || " + qty("e.r") + ".compareTo(" + qty("e.l") + ") == 0))))";
}

std::string whole_quantities() {
  auto whole = [](std::string_view v) {
    const std::string x(v);
    return "(" + x + " == null || (" + valid(x) + " && sign(" + qty(x) + ") >= 0 && " + qty(x) +
           ".isInteger()))";
  };
  return "c.cs.all(k, k.g.all(e, " + whole("e.r") + " && " + whole("e.l") + "))";
}

std::string no_mixed_kinds() {
  return "c.cs.all(k, size([k.g.exists(e, e.pe && e.n != " + quote(kShared) +
         " && !e.n.startsWith('nvidia.com/mig-')), k.g.exists(e, e.pe && e.n == " + quote(kShared) +
         "), k.g.exists(e, e.pe && e.n.startsWith('nvidia.com/mig-'))].filter(b, b)) < 2)";
}

std::string no_pod_level_gpus(const CompiledPolicy& policy) {
  return let("pr", map_field("c.spec", "resources"),
             "[" + map_field("pr", "requests") + ", " + map_field("pr", "limits") +
                 "].all(m, !m.exists(k, " + cel::is_gpu_resource(policy, "k") +
                 " && m[k] != null))");
}

// --- tenant rules ----------------------------------------------------------------------------

// Some tenant has what `has` tests: a rule reading that member of the records
// (render/native_tenants.h) is written, and holds where a record lacks it.
bool any_tenant(const CompiledPolicy& policy, const std::function<bool(const Tenant&)>& has) {
  const std::vector<Tenant>& ts = policy.policy().tenants;
  return std::any_of(ts.begin(), ts.end(), has);
}

// rules/allowed_classes.cc: a tenant's allowedClasses (empty: no GPUs); a namespace of no
// tenant may not use GPUs.
// rules/allowed_classes.cc check_implicit_device_classes: each implicit DeviceClass resource a
// container asks for belongs to an allowed class ("" when the policy maps no DeviceClass).
std::string implicit_device_classes_allowed(const CompiledPolicy& policy) {
  std::string map;
  for (const auto& [resource, gpu_class] : cel::implicit_device_class_resources(policy)) {
    map += (map.empty() ? "" : ", ") + quote(resource) + ": " + quote(gpu_class);
  }
  if (map.empty()) return "";
  return let("dm", "{" + map + "}",
             "c.cs.all(k, k.g.all(e, !e.pe || !(e.n in dm) || dm[e.n] in variables.t.ac))") +
         " && ";
}

std::string allowed_classes(const CompiledPolicy& policy) {
  const std::string allowed = "(!('ac' in variables.t) || !c.gpu || (size(variables.t.ac) > 0 && " +
                              implicit_device_classes_allowed(policy) + "c.cls != '' && (!" +
                              cel::known_class(policy, "c.cls") + " || c.cls in variables.t.ac)))";
  return "(" + no_tenant(policy) + " ? !c.gpu : " + allowed + ")";
}

std::string known_class_setting(const CompiledPolicy& policy) {
  return "(size(c.sc) == 0 || " + cel::known_class(policy, "c.sc[0]") + ")";
}

std::optional<std::string> count_limits(const CompiledPolicy& policy) {
  const bool per_container = any_tenant(
      policy, [](const Tenant& t) { return t.limits.max_gpus_per_container.has_value(); });
  const bool per_pod =
      any_tenant(policy, [](const Tenant& t) { return t.limits.max_gpus_per_pod.has_value(); });
  if (!per_container && !per_pod) return std::nullopt;
  std::vector<std::string> checks;
  if (per_container) {
    checks.push_back("(!('mc' in variables.t) || c.cs.all(k, " + cel::container_units("k") +
                     " <= variables.t.mc))");
  }
  if (per_pod) {
    checks.push_back("(!('mp' in variables.t) || " + cel::pod_gpu_total(policy, "c") +
                     " <= variables.t.mp)");
  }
  return "(!c.gpu || " + all_of(checks) + ")";
}

std::optional<std::string> allowed_priority_class(const CompiledPolicy& policy) {
  if (!any_tenant(policy, [](const Tenant& t) { return t.priority.allowed.has_value(); })) {
    return std::nullopt;
  }
  // And the Kueue WorkloadPriorityClass label where Kueue reads it (qp, bound by the caller to
  // kueue_queue_place): each template's for 'tpl', the workload's for 'top' and 'cron'
  // (rules/allowed_priority_class.cc check_workload_priority_class).
  const std::string label = std::string(kWorkloadPriorityClassLabel);
  const std::string workload_class =
      "(qp == 'tpl' ? " + string_field(map_field("c.meta", "labels"), label) +
      " : qp == '' ? '' : " +
      string_field(map_field(cel::kueue_queue_metadata("qp"), "labels"), label) + ")";
  // And each pod template's own (a Deployment's Pods run as single-pod workloads).
  const std::string template_class = string_field(map_field("c.meta", "labels"), label);
  return "(!('pa' in variables.t) || !c.gpu || (" +
         let("pn", string_field("c.spec", "priorityClassName"),
             "pn == '' || pn in variables.t.pa") +
         " && " + let("wp", workload_class, "wp == '' || wp in variables.t.pa") + " && " +
         let("wt", template_class, "wt == '' || wt in variables.t.pa") + "))";
}

std::optional<std::string> quota(const CompiledPolicy& policy) {
  if (!any_tenant(policy, [](const Tenant& t) { return t.quota_gpus.has_value(); })) {
    return std::nullopt;
  }
  return "(!('q' in variables.t) || !c.gpu || " + cel::pod_gpu_total(policy, "c") +
         " <= variables.t.q)";
}

// --- class rules -------------------------------------------------------------------------------

// The MIG capacity of one node of class `g` GPUs for the profile held by CEL string `profile`
// (rules/fits_on_node.cc mig_capacity: g × ⌊7 / slices⌋), or -1 when it cannot be told.
std::string mig_capacity(int64_t g, std::string_view profile) {
  return let("mp", profile,
             let("gi", "mp.indexOf('g')",
                 "(gi > 0 && mp.substring(0, gi).matches('^[0-9]{1,18}$') && int(mp.substring(0, "
                 "gi)) > 0 && int(mp.substring(0, gi)) <= " +
                     std::to_string(kMaxMigComputeSlices) + ") ? " + std::to_string(g) + " * (" +
                     std::to_string(kMaxMigComputeSlices) + " / int(mp.substring(0, gi))) : -1"));
}

// What one node of the class offers of the resource named by CEL string `n` (fits_on_node.cc
// node_capacity), -1 when it cannot be told.
std::string node_capacity(const GpuClass& c, std::string_view n) {
  const int64_t g = *c.gpus_per_node;
  const std::string name(n);
  const int64_t replicas =
      c.time_slicing ? std::max<int64_t>(1, c.time_slicing->replicas) : int64_t{1};
  const std::string shared = std::to_string(g * replicas);
  std::string whole = std::to_string(g);
  if (c.time_slicing && !c.time_slicing->rename_by_default) {
    whole = shared;
  } else if (c.mig && c.mig->strategy == MigConfig::Strategy::kSingle) {
    whole = "(c.mig != '' ? " + mig_capacity(g, "c.mig") + " : " + std::to_string(g) + ")";
  }
  const std::string mig = c.mig ? mig_capacity(g, name + ".substring(15)") : "-1";
  return "(" + name + ".startsWith('nvidia.com/mig-') ? " + mig + " : " + name +
         " == " + quote(kShared) + " ? " + (c.time_slicing ? shared : std::to_string(g)) + " : " +
         name + " == " + quote(kWhole) + " ? " + whole + " : " + std::to_string(g) + ")";
}

// Whole GPUs whose per-node capacity is gpusPerNode itself: what GPU006's pod total counts.
cel::NamePredicate whole_unscaled(const GpuClass& c) {
  std::string scaled_gpu = "false";
  if (c.time_slicing && !c.time_slicing->rename_by_default) {
    scaled_gpu = "true";
  } else if (c.mig && c.mig->strategy == MigConfig::Strategy::kSingle) {
    scaled_gpu = "c.mig != ''";
  }
  return [scaled_gpu](std::string_view n) {
    const std::string x(n);
    return "(" + x + " != " + quote(kShared) + " && !" + x +
           ".startsWith('nvidia.com/mig-') && !(" + x + " == " + quote(kWhole) + " && " +
           scaled_gpu + "))";
  };
}

std::string fits_on_node(const CompiledPolicy& policy) {
  return "(!c.gpu || " +
         per_class(policy,
                   [&](const GpuClass& c) -> std::optional<std::string> {
                     if (!c.gpus_per_node) return std::nullopt;
                     const std::string cap = node_capacity(c, "e.n");
                     return "(!c.cs.exists(k, k.g.exists(e, e.pe && " +
                            let("cap", cap, "cap >= 0 && int(e.u) > cap") + ")) && " +
                            cel::pod_gpu_total(policy, "c", whole_unscaled(c)) +
                            " <= " + std::to_string(*c.gpus_per_node) + ")";
                   }) +
         ")";
}

// The MIG profile a resource name asks for ("nvidia.com/mig-1g.10gb.me" → "1g.10gb+me").
std::string resource_profile(std::string_view n) {
  return let("rp", std::string(n) + ".substring(15)",
             "(rp.endsWith('.me') && size(rp) > 3) ? rp.substring(0, size(rp) - 3) + '+me' : rp");
}

std::string mig_profile(const CompiledPolicy& policy) {
  return "(!c.gpu || " +
         per_class(policy,
                   [](const GpuClass& c) -> std::optional<std::string> {
                     const std::string mig_entry = "e.pe && e.n.startsWith('nvidia.com/mig-')";
                     if (!c.mig) {
                       return "(c.mig == '' && !c.cs.exists(k, k.g.exists(e, " + mig_entry + ")))";
                     }
                     const std::string profiles = string_list(c.mig->profiles);
                     const bool single = c.mig->strategy == MigConfig::Strategy::kSingle;
                     return "((c.mig == '' || c.mig in " + profiles +
                            ") && c.cs.all(k, k.g.all(e, !(" + mig_entry + ")" +
                            (single ? "" : " || " + resource_profile("e.n") + " in " + profiles) +
                            ")))";
                   }) +
         ")";
}

std::string time_slicing_one(const CompiledPolicy& policy) {
  return "(!c.gpu || " +
         per_class(policy,
                   [](const GpuClass& c) -> std::optional<std::string> {
                     if (!c.time_slicing || !c.time_slicing->fail_requests_greater_than_one) {
                       return std::nullopt;
                     }
                     const std::string shared =
                         c.time_slicing->rename_by_default
                             ? "e.n == " + quote(kShared)
                             : "(e.n == " + quote(kShared) + " || e.n == " + quote(kWhole) + ")";
                     return "c.cs.all(k, k.g.all(e, !(" + shared + " && int(e.u) > 1)))";
                   }) +
         ")";
}

std::string fragmentation(const CompiledPolicy& policy) {
  return "(!c.gpu || " +
         per_class(policy,
                   [&](const GpuClass& c) -> std::optional<std::string> {
                     if (!c.gpus_per_node || c.mig || c.time_slicing) return std::nullopt;
                     const std::string g = std::to_string(*c.gpus_per_node);
                     return let("n", cel::pod_gpu_total(policy, "c"),
                                "n <= 0 || n >= " + g + " || " + g + " % n == 0");
                   }) +
         ")";
}

std::string non_gpu_on_gpu_pool(const CompiledPolicy& policy) {
  return "(c.gpu || " + cel::runs_on_every_node(policy) + " || !" +
         cel::targets_gpu_pool(policy, "c.spec") + ")";
}

// --- GPU024: no GPU without a request --------------------------------------------------------

// "/" + the path's elements without "" and "." (the hostPath check: the API server refuses ".."
// there, so this is filepath.Clean of the path made absolute; rules/gpu_visibility.cc).
std::string normalized(std::string_view path) {
  return "('/' + " + std::string(path) + ".split('/').filter(sg, sg != '' && sg != '.').join('/'))";
}

std::string under(std::string_view path, std::string_view root) {
  const std::string p(path);
  return "(" + p + " == " + quote(root) + " || " + p + ".startsWith(" +
         quote(std::string(root) + "/") + "))";
}

// Up to this many elements, the CEL below decides exactly a mountPath with ".." elements.
constexpr int kCleanElements = 64;

// engine/gpu_visibility.h names_devices_as_mount: filepath.Clean("/" + mountPath) starts with
// /var/run/nvidia-container-devices. CEL has no loop to resolve ".." with, so:
// - without a ".." element, Clean is "/" + the elements without "" and "." joined;
// - with one, Clean keeps a subsequence of the other elements, so a path with no element that
//   starts with nvidia-container-devices cannot match;
// - otherwise, up to kCleanElements elements, the kept elements are found by depth: with
//   w = +1 per name and -1 per "..", the depth after element k is d_k = S_k - min(0, min_{m<=k}
//   S_m) (S the prefix sums: ".." at the root stays at the root), and the element kept at level L
//   is the last name that took the depth to L (a later one would have popped it first); the
//   path matches when the final depth is >= 3 and the kept elements 1-3 are var, run and one
//   starting with nvidia-container-devices — exactly "/var/run/nvidia-container-devices" as a
//   string prefix;
// - past kCleanElements elements it matches (stricter than the webhook; docs/native.md).
std::string device_list_mount(std::string_view mount_path) {
  const std::string indexes = [] {
    std::string out = "[";
    for (int i = 0; i < kCleanElements; ++i) out += (i ? "," : "") + std::to_string(i);
    return out + "]";
  }();
  const auto kept = [](int level) {
    return "ps[pi.filter(pj, ps[pj] != '..' && pd[pj] == " + std::to_string(level) + ").max()]";
  };
  const std::string exact =
      let("pi", indexes + ".filter(pj, pj < size(ps))",
          let("pw", "pi.map(pj, ps[pj] == '..' ? -1 : 1)",
              let("pt", "pi.map(pk, pi.filter(pm, pm <= pk).map(pm, pw[pm]).sum())",
                  let("pd",
                      "pi.map(pk, pt[pk] - (pi.filter(pm, pm <= pk).map(pm, pt[pm]) + [0]).min())",
                      "pd[size(ps) - 1] >= 3 && " + kept(1) + " == 'var' && " + kept(2) +
                          " == 'run' && " + kept(3) + ".startsWith('nvidia-container-devices')"))));
  return let("ps",
             "('/' + " + std::string(mount_path) + ").split('/').filter(pe, pe != '' && pe != '.')",
             "(!ps.exists(pe, pe == '..') ? ('/' + ps.join('/')).startsWith(" +
                 quote(kDeviceListMountRoot) +
                 ") : (ps.exists(pe, pe.startsWith('nvidia-container-devices')) && (size(ps) > " +
                 std::to_string(kCleanElements) + " || " + exact + ")))");
}

std::string gpu_visibility(const CompiledPolicy& policy) {
  const std::string may_get_gpus = "(k.g.exists(e, e.pa) || size(" +
                                   list_field(map_field("k.c", "resources"), "claims") + ") > 0)";
  const std::string names_visible_devices =
      "(type(v) == map && " + string_field("v", "name") + " == 'NVIDIA_VISIBLE_DEVICES')";
  const std::string env_ok =
      list_field("k.c", "env") + ".all(v, !" + names_visible_devices +
      " || (!('valueFrom' in v && v.valueFrom != null) && (!('value' in v) || v.value == null || "
      "(type(v.value) == string && v.value in ['', 'void', 'none']))))";
  // envFrom: safe behind an env entry for the variable only where the container requests no GPU
  // — with `fix` always there, as the webhook judges every such container as mutated (a template
  // the mutating policies leave alone included).
  const std::string hidden =
      policy.policy().enforcement.gpu_visibility == Action::kFix
          ? std::string("true")
          : list_field("k.c", "env") + ".exists(v, " + names_visible_devices + ")";
  const std::string env_from_ok =
      "((!" + may_get_gpus + " && " + hidden + ") || " + list_field("k.c", "envFrom") +
      ".all(f, type(f) != map || !'NVIDIA_VISIBLE_DEVICES'.startsWith(" +
      string_field("f", "prefix") + ")))";
  const std::string device_list_ok = list_field("k.c", "volumeMounts") +
                                     ".all(vm, type(vm) != map || !" +
                                     device_list_mount(string_field("vm", "mountPath")) + ")";
  const std::string host_path =
      let("vs",
          list_field("c.spec", "volumes") + ".filter(vo, type(vo) == map && " +
              string_field("vo", "name") + " == " + string_field("vm", "name") + ")",
          "size(vs) == 0 || !('hostPath' in vs[0] && type(vs[0].hostPath) == map) ? '' : " +
              normalized("(" + string_field("vs[0].hostPath", "path") + " + (" +
                         string_field("vm", "subPath") + " != '' ? '/' + " +
                         string_field("vm", "subPath") + " : ''))"));
  const std::string reaches =
      "(hp != '' && (hp == '/' || hp == '/dev' || hp.startsWith('/dev/nvidia') || " +
      under("hp", "/dev/dri") + "))";
  const std::string host_path_ok = list_field("k.c", "volumeMounts") +
                                   ".all(vm, type(vm) != map || !" + let("hp", host_path, reaches) +
                                   ")";
  std::vector<std::string> runtimes{"nvidia", "nvidia-cdi", "nvidia-legacy"};
  for (const std::string& r : policy.policy().nvidia_runtime_classes) runtimes.push_back(r);
  const std::string pod_ok = "(!" + map_field("c.meta", "annotations") +
                             ".exists(a, a.startsWith('cdi.k8s.io/')) && (" + "c.cs.exists(k, " +
                             may_get_gpus + ") || !(" + string_field("c.spec", "runtimeClassName") +
                             " in " + string_list(runtimes) + ")))";
  return "(" + cel::runs_on_every_node(policy) + " || (c.cs.all(k, " + env_ok + " && " +
         env_from_ok + " && " + device_list_ok + " && (" + may_get_gpus + " || " + host_path_ok +
         ")) && " + pod_ok + "))";
}

// --- GPU026: no privileged container on GPU nodes ---------------------------------------------

// rules/privileged_container.cc: a privileged container gets every device node. A pod without
// GPUs is judged only when it can run on a GPU pool (a class whose every NoSchedule and NoExecute
// taint it tolerates: engine/scheduling.h keeps_pods_off).
std::string privileged_container(const CompiledPolicy& policy) {
  std::vector<std::string> pools;
  for (const GpuClass& c : policy.policy().classes) {
    std::vector<std::string> tolerated;
    for (const Taint& t : c.taints) {
      if (keeps_pods_off(t)) tolerated.push_back("tl.exists(t, " + cel::tolerates("t", t) + ")");
    }
    pools.push_back(all_of(tolerated));
  }
  const std::string privileged =
      let("sx", map_field("k.c", "securityContext"), "'privileged' in sx && sx.privileged == true");
  return "(" + cel::runs_on_every_node(policy) + " || !c.cs.exists(k, " + privileged +
         ") || (!c.gpu && !" + let("tl", list_field("c.spec", "tolerations"), any_of(pools)) + "))";
}

// --- GPU025: the workload names a Kueue queue (workload level) -------------------------------

// rules/queue_required.cc: on CREATE, a GPU workload that names a controller Kueue integrates
// which did not send it (Kueue leaves it alone), or a GPU pod spec whose queue site names no
// queue — the workload's ('top', 'cron'), or each GPU pod template's own ('tpl').
std::optional<std::string> queue_required(const CompiledPolicy& policy) {
  if (!any_tenant(policy, [](const Tenant& t) { return t.queue && t.queue->require; })) {
    return std::nullopt;
  }
  // A queued kind without pod specs (TrainJob, AppWrapper, SparkApplication) names a queue on
  // CREATE and keeps it on UPDATE (rules/queue_required.cc check_queued_without_pod_specs).
  std::vector<std::string> queued;
  for (const WorkloadKind& k : workload_kinds()) {
    if (queued_without_pod_specs(k))
      queued.push_back(std::string(k.group) + "/" + std::string(k.kind));
  }
  const std::string unqueued_object =
      "variables.gk in " + string_list(queued) +
      " && (request.operation == 'CREATE' || (request.operation == 'UPDATE' && " +
      cel::queue_named_in(map_field("oldObject", "metadata")) + " != '')) && " +
      cel::queue_named_in("variables.top") + " == ''";
  // A controller's child (variables.bhc): detached, judged as a CREATE; updated by someone
  // else, denied when its spec changed, else allowed (rules/queue_required.cc judged_as_create).
  const std::string judged =
      "c.gpu && (variables.bhc == 2 || !" + cel::queue_grandfathered(policy, "c") + ")";
  // A GPU Pod's Kueue admission gate removed by anyone but Kueue (rules/queue_required.cc
  // ungated_by_other; engine/kueue.h sent_by_kueue).
  std::vector<std::string> kueue_users{std::string(kKueueControllerUser)};
  for (const ControllerIdentity& c : policy.policy().controllers) {
    for (const GroupKind& gk : c.kinds) {
      if (gk.group == "kueue.x-k8s.io" && gk.kind == "Workload") kueue_users.push_back(c.username);
    }
  }
  auto gated = [](const std::string& pod) {
    return list_field(map_field(pod, "spec"), "schedulingGates") +
           ".exists(g, type(g) == map && 'name' in g && g.name == " + quote(kKueueAdmissionGate) +
           ")";
  };
  const std::string ungated = "variables.gk == '/Pod' && request.operation == 'UPDATE' && " +
                              gated("oldObject") + " && !" + gated("object") +
                              " && !(request.userInfo.username in " + string_list(kueue_users) +
                              ") && variables.ctx.exists(c, c.gpu)";
  return "(!('qr' in variables.t) || !(" + ungated + ")) && " + "(!('qr' in variables.t) || !(" +
         unqueued_object + ")) && " +
         std::string(
             "(!('qr' in variables.t) || !((request.operation == 'CREATE' || "
             "request.operation == 'UPDATE') && ((variables.bhc == 1 || variables.bhc == 3) ? "
             "(variables.bhc == 3 && variables.ctx.exists(c, c.gpu)) : ") +
         let("qp", cel::kueue_queue_place(policy),
             "((variables.ctx.exists(c, " + judged + ") && " + cel::kueue_unbelieved_owner(policy) +
                 ") || (qp == 'tpl' ? variables.ctx.exists(c, " + judged + " && " +
                 cel::queue_named_in("c.meta") + " == '') : (qp != '' && variables.ctx.exists(c, " +
                 judged + ") && " + cel::kueue_queue_name("qp") + " == '')))") +
         ")))";
}

}  // namespace

std::string class_labels(const CompiledPolicy& policy, std::string_view c) {
  return class_label_form(policy, c, false);
}

std::string class_conflict(const CompiledPolicy& policy, std::string_view c) {
  const std::string cc(c);
  std::string sat(kKeySatisfiable);
  for (size_t at = sat.find("PARSE("); at != std::string::npos; at = sat.find("PARSE(", at)) {
    const size_t close = sat.find(')', at);
    const std::string replacement = cel::parses_as_int64(sat.substr(at + 6, close - at - 6));
    sat.replace(at, close - at + 1, replacement);
    at += replacement.size();
  }
  const std::string terms =
      list_field(map_field(map_field(map_field(cc + ".spec", "affinity"), "nodeAffinity"),
                           "requiredDuringSchedulingIgnoredDuringExecution"),
                 "nodeSelectorTerms");
  // The non-empty terms (is_empty_node_selector_term), each as its requirements {key, op, vs}
  // (string values only, as string_values reads them).
  const std::string judged =
      terms + ".filter(t, type(t) == map && (size(" + list_field("t", "matchExpressions") +
      ") > 0 || size(" + list_field("t", "matchFields") + ") > 0)).map(t, " +
      list_field("t", "matchExpressions") + ".filter(rq, type(rq) == map).map(rq, {'key': dyn(" +
      string_field("rq", "key") + "), 'op': dyn(" + string_field("rq", "operator") +
      "), 'vs': dyn(" + list_field("rq", "values") + ".filter(s3, type(s3) == string))}))";
  const std::string all_keys =
      "(xs.map(r, r.key) + ns.filter(sk, type(ns[sk]) == string) + "
      "lm.map(lk, lk)).all(ky, " +
      let("rs", "xs.filter(r, r.key == ky)", sat) + ")";
  // Satisfiable with the labels `lm`: one judged term (or, with none, the nodeSelector alone).
  const std::string satisfiable = "(size(tj) > 0 ? tj : dyn([[]])).exists(xs, " + all_keys + ")";
  const std::string with_and_without =
      "[dyn(" + class_label_form(policy, cc, true) + "), dyn({})].map(lm, " + satisfiable + ")";
  return let("tj", judged,
             let("ns", map_field(cc + ".spec", "nodeSelector"),
                 let("sv", with_and_without, "!sv[0] && sv[1]")));
}

namespace {

Json validation(std::string_view id, std::string expression, std::string_view message) {
  return {{"expression", std::move(expression)},
          {"message", std::string(id) + ": " + std::string(message)},
          {"reason", "Forbidden"}};
}

// Over every pod spec: `variables.ctx.all(c, ok)`.
std::string per_pod(const std::string& ok) { return "variables.ctx.all(c, " + ok + ")"; }

struct RuleText {
  std::string id;
  std::optional<std::string> expression;  // nullopt: not generated in this scope
  std::string message;
};

// --- DRA claim objects (GPU018–GPU021) --------------------------------------------------------

// Each device request of a ResourceClaim or ResourceClaimTemplate being created, as a group: the
// alternatives of a firstAvailable request, or the one request (its `exactly`, or itself in
// v1beta1) — engine/dra.cc claim_requests. Claims the scheduler made for an extended-resource
// pod are not judged (pipeline.cc evaluate_claim).
std::string claim_groups() {
  const std::string spec = "(variables.kd == 'ResourceClaimTemplate' ? " +
                           map_field(map_field("object", "spec"), "spec") + " : " +
                           map_field("object", "spec") + ")";
  // engine/dra.h is_scheduler_extended_resource_claim: kube-scheduler's own ResourceClaim for
  // a pod's extended resources (the user, the annotation, one controller reference to a Pod).
  const std::string owners = list_field("variables.top", "ownerReferences");
  const std::string scheduler_claim =
      "(variables.kd == 'ResourceClaim' && request.userInfo.username == 'system:kube-scheduler' "
      "&& " +
      string_field(map_field("variables.top", "annotations"),
                   "resource.kubernetes.io/extended-resource-claim") +
      " == 'true' && " +
      let("ow", owners,
          "size(ow) == 1 && type(ow[0]) == map && " + string_field("ow[0]", "apiVersion") +
              " == 'v1' && " + string_field("ow[0]", "kind") + " == 'Pod' && " +
              string_field("ow[0]", "name") + " != '' && 'controller' in ow[0] && " +
              "ow[0].controller == true") +
      ")";
  const std::string is_claim =
      "(request.operation == 'CREATE' && variables.gk in ['resource.k8s.io/ResourceClaim', "
      "'resource.k8s.io/ResourceClaimTemplate'] && !" +
      scheduler_claim + ")";
  return "(" + is_claim + " ? " + list_field(map_field(spec, "devices"), "requests") +
         ".filter(rq, type(rq) == map).map(rq, ('firstAvailable' in rq && type(rq.firstAvailable) "
         "== list) ? rq.firstAvailable.filter(f, type(f) == map) : [('exactly' in rq && "
         "type(rq.exactly) == map) ? rq.exactly : rq]) : [])";
}

struct DeviceClassMaps {
  std::string cls;       // {deviceClass: class}
  std::string per_gpu;   // {deviceClass: devicesPerGPU (at least 1)}
  std::string per_node;  // {deviceClass: gpusPerNode of its class, 0 when unset}
  bool empty = true;
};

DeviceClassMaps device_class_maps(const CompiledPolicy& policy) {
  DeviceClassMaps m{"{", "{", "{", true};
  std::vector<std::string> seen;
  for (const GpuClass& c : policy.policy().classes) {
    for (const DeviceClassMapping& d : c.device_classes) {
      if (std::find(seen.begin(), seen.end(), d.name) != seen.end()) continue;
      const std::string sep = seen.empty() ? "" : ", ";
      seen.push_back(d.name);
      m.cls += sep + quote(d.name) + ": " + quote(c.name);
      m.per_gpu +=
          sep + quote(d.name) + ": " + std::to_string(std::max<int64_t>(1, d.devices_per_gpu));
      m.per_node += sep + quote(d.name) + ": " + std::to_string(c.gpus_per_node.value_or(0));
    }
  }
  m.cls += "}";
  m.per_gpu += "}";
  m.per_node += "}";
  m.empty = seen.empty();
  return m;
}

// long: the four claim rules share the device-class maps and the per-request terms.
std::vector<NativeValidation> claim_validations(const CompiledPolicy& policy) {
  std::vector<NativeValidation> out;
  const DeviceClassMaps dc = device_class_maps(policy);
  if (dc.empty) return out;
  const std::string name = string_field("f", "deviceClassName");
  const std::string mapped = "(" + name + " in " + dc.cls + ")";
  const std::string all = "(" + string_field("f", "allocationMode") + " == 'All')";
  const std::string count =
      "(('count' in f && type(f['count']) == int && f['count'] > 0) ? f['count'] : 1)";
  const std::string units = "(" + all + " ? " + dc.per_node + "[" + name + "] : " +
                            let("pg", dc.per_gpu + "[" + name + "]",
                                count + " / pg + (" + count + " % pg != 0 ? 1 : 0)") +
                            ")";
  auto every = [&](const std::string& ok) {
    return let("cg", claim_groups(), "cg.all(gr, gr.all(f, " + ok + "))");
  };
  auto add = [&](std::string_view id, const std::string& expression, std::string_view message) {
    out.push_back({std::string(id), validation(id, "(" + expression + ")", message)});
  };
  if (any_tenant(policy, [](const Tenant& t) { return t.allowed_classes.has_value(); })) {
    add("GPU018",
        "!('ac' in variables.t) || " +
            every("!" + mapped + " || " + dc.cls + "[" + name + "] in variables.t.ac"),
        "a DRA request's DeviceClass hands out GPUs of a class this namespace's tenant may not "
        "use (spec.tenants[].allowedClasses)");
  }
  if (count_limits(policy)) {
    std::vector<std::string> checks;
    checks.push_back("(!('mc' in variables.t) || cg.all(gr, gr.all(f, !" + mapped + " || " + all +
                     " || " + units + " <= variables.t.mc)))");
    checks.push_back("(!('mp' in variables.t) || ([0] + cg.map(gr, ([0] + gr.map(f, " + mapped +
                     " ? int(" + units + ") : 0)).max())).sum() <= variables.t.mp)");
    add("GPU019", let("cg", claim_groups(), all_of(checks)),
        "a DRA claim asks for more GPUs than maxGPUsPerContainer / maxGPUsPerPod of this "
        "namespace's tenant");
  }
  add("GPU020", "'aa' in variables.t || " + every("!(" + mapped + " && " + all + ")"),
      "allocationMode All on a GPU DeviceClass takes every GPU of a node, which this "
      "namespace's tenant may not ask for; use allocationMode ExactCount with a count");
  add("GPU021",
      "'ad' in variables.t || " +
          every("!(" + mapped + " && 'adminAccess' in f && f.adminAccess == true)"),
      "adminAccess on a GPU DeviceClass reaches GPUs other pods are using, which this "
      "namespace's tenant is not allowed to; remove adminAccess");
  return out;
}

// long: a table in code: one entry per pod rule (GPU001-GPU026), its id, CEL and message.
std::vector<RuleText> pod_rules(const CompiledPolicy& policy) {
  std::vector<RuleText> out;
  out.push_back({"GPU001", per_pod(requests_equal_limits()),
                 "GPU requests must equal limits: set requests and limits of every GPU resource "
                 "to the same whole number"});
  out.push_back({"GPU002", per_pod(whole_quantities()),
                 "GPU quantities must be whole non-negative numbers: a GPU cannot be split by "
                 "quantity (use a MIG profile or a time-sliced class)"});
  // rules/allowed_classes.cc: the tenant's allowedClasses; a namespace of no tenant may not use
  // GPUs. Two messages, told apart by the record (messageExpression).
  out.push_back({"GPU003", per_pod(allowed_classes(policy)), ""});
  out.push_back({"GPU004", per_pod(known_class_setting(policy)),
                 "gpuadmit.io/class names no class of the policy"});
  if (auto x = count_limits(policy)) {
    out.push_back({"GPU005", per_pod(*x),
                   "too many GPUs for this namespace's tenant (spec.tenants[].limits: "
                   "maxGPUsPerContainer, maxGPUsPerPod)"});
  }
  out.push_back({"GPU006", per_pod(fits_on_node(policy)),
                 "the GPUs of a container or of the pod cannot fit on one node of its class "
                 "(gpusPerNode); request fewer, or split the work across pods"});
  out.push_back({"GPU007", per_pod(mig_profile(policy)),
                 "the MIG profile is not one of the class's mig.profiles, or the class is not "
                 "MIG-partitioned"});
  out.push_back({"GPU008", per_pod(no_mixed_kinds()),
                 "a container mixes whole GPUs, shared GPUs and MIG slices; ask for one kind per "
                 "container"});
  out.push_back({"GPU009", per_pod(non_gpu_on_gpu_pool(policy)),
                 "the pod asks for no GPU but tolerates or selects a GPU pool; remove it, or "
                 "request a GPU if the pod needs one"});
  if (auto x = allowed_priority_class(policy)) {
    out.push_back({"GPU010", let("qp", cel::kueue_queue_place(policy), per_pod(*x)),
                   "priorityClassName, or the Kueue WorkloadPriorityClass of the label "
                   "kueue.x-k8s.io/priority-class, is not allowed for this namespace's tenant "
                   "(spec.tenants[].priority.allowed)"});
  }
  out.push_back({"GPU011",
                 per_pod("(!c.gpu || !" + cel::known_class(policy, "c.cls") + " || !" +
                         class_conflict(policy, "c") + ")"),
                 "the pod's own nodeSelector or node affinity contradicts its GPU class; remove "
                 "the contradicting constraint or choose another class"});
  out.push_back({"GPU012", per_pod(time_slicing_one(policy)),
                 "more than 1 shared GPU in a container on a time-sliced class with "
                 "failRequestsGreaterThanOne; request 1"});
  if (auto x = quota(policy)) {
    out.push_back({"GPU013", per_pod(*x),
                   "the pod requests more GPUs than the GPU quota of this namespace's tenant "
                   "(spec.tenants[].quota.gpus)"});
  }
  out.push_back({"GPU014", per_pod(fragmentation(policy)),
                 "the pod's GPU count does not divide its class's gpusPerNode and strands GPUs"});
  out.push_back({"GPU015", per_pod(no_pod_level_gpus(policy)),
                 "GPUs in pod-level spec.resources: Kubernetes takes only cpu, memory and "
                 "hugepages at pod level; move them into the container that uses the GPU"});
  out.push_back({"GPU024", per_pod(gpu_visibility(policy)),
                 "a container asks NVIDIA's container runtime for GPUs it did not request "
                 "(NVIDIA_VISIBLE_DEVICES, valueFrom or envFrom, the device-list folder, GPU "
                 "device mounts, the NVIDIA runtime class or CDI annotations); request the GPUs "
                 "it needs instead"});
  out.push_back({"GPU026", per_pod(privileged_container(policy)),
                 "a privileged container sees every GPU of its node, whatever it requests: drop "
                 "privileged and grant only the capabilities it needs, or run a node agent as a "
                 "DaemonSet in one of the policy's nodeAgents namespaces"});
  if (auto x = queue_required(policy)) {
    out.push_back({"GPU025", *x,
                   "this namespace's tenant runs GPU workloads through Kueue, but this one names "
                   "no LocalQueue, or names a controller Kueue manages that did not create it; "
                   "set the label kueue.x-k8s.io/queue-name, and remove an ownerReference of "
                   "your own"});
  }
  return out;
}

// GPU003's message: a namespace of no tenant, or a class the tenant does not allow.
Json gpu003(const CompiledPolicy& policy, std::string expression) {
  Json v = validation("GPU003", std::move(expression), "");
  v.erase("message");
  v["messageExpression"] =
      no_tenant(policy) + " ? " +
      quote(
          "GPU003: this namespace belongs to no tenant of the policy; it may not use GPUs: ask "
          "the platform team for a tenant whose namespaces match it, or a catch-all tenant "
          "(namespaces: [\".*\"]) last in spec.tenants") +
      " : " +
      quote(
          "GPU003: the pod's GPU class is not allowed for this namespace's tenant (its "
          "spec.tenants[].allowedClasses)");
  return v;
}

}  // namespace

std::vector<NativeValidation> rule_validations(const CompiledPolicy& policy) {
  std::vector<NativeValidation> out;
  for (RuleText& r : pod_rules(policy)) {
    if (!r.expression) continue;
    out.push_back({r.id, r.id == "GPU003" ? gpu003(policy, std::move(*r.expression))
                                          : validation(r.id, std::move(*r.expression), r.message)});
  }
  for (NativeValidation& v : claim_validations(policy)) out.push_back(std::move(v));
  std::sort(out.begin(), out.end(),
            [](const NativeValidation& a, const NativeValidation& b) { return a.id < b.id; });
  return out;
}

std::string placed(const CompiledPolicy& policy, std::string_view id, Placement placement) {
  const char global = action_code(policy.action_for(id, default_action(id)));
  const bool audited = any_tenant(policy, [](const Tenant& t) { return t.enforcement.audit; });
  const bool overridden = any_tenant(policy, [&](const Tenant& t) {
    return std::any_of(t.enforcement.rules.begin(), t.enforcement.rules.end(),
                       [&](const auto& r) { return r.first == id; });
  });
  const std::string audit = "'au' in variables.t";
  const std::string key = quote(id);
  // The namespace's tenant's action for the rule (enforcement.rules, else the policy's).
  const std::string action = "(('x' in variables.t && " + key + " in variables.t.x) ? " +
                             "variables.t.x[" + key + "] : " + quote(std::string(1, global)) + ")";
  if (placement == Placement::kAudit) {
    if (!audited) return "false";
    if (!overridden) return global == 'o' ? "false" : audit;
    return "(" + audit + " && " + action + " != 'o')";
  }
  const char wanted = placement == Placement::kDeny ? 'd' : 'w';
  if (!overridden && global != wanted) return "false";
  const std::string not_audited = "!(" + audit + ")";
  if (!overridden) return audited ? not_audited : "true";
  return "(" + action + " == " + quote(std::string(1, wanted)) +
         (audited ? " && " + not_audited : "") + ")";
}

}  // namespace gpuadmit::render::native
