#include "render/native_mutations.h"

#include <algorithm>
#include <functional>
#include <map>

#include "engine/gpu_visibility.h"
#include "engine/kueue.h"
#include "engine/scheduling.h"
#include "render/native_cel.h"
#include "render/native_model.h"
#include "render/native_rules.h"

namespace gpuadmit::render::native {
namespace {

constexpr std::string_view kClassAnnotation = "gpuadmit.io/class";
constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
// perGPU × N is precomputed (the CEL quantity library has no multiplication) for N up to this;
// above it the product is written as <mantissa × N><suffix>, the same quantity in a form the
// API server canonicalizes when it decodes the object.
constexpr int64_t kPerGpuTable = 128;

// Builds CEL that rebuilds maps (two-variable comprehensions, Kubernetes 1.32+). Each use gets
// its own variable names, so that a value nested in another rebuild never sees the outer ones.
class MapBuilder {
 public:
  // `m` with member `key` (a CEL string expression) set to `value`; `m` is read more than once:
  // pass a variable.
  std::string with(std::string_view m, std::string_view key, std::string_view value) {
    const std::string x = next("x"), i = next("i");
    const std::string mm(m), k(key);
    return "(" + mm + ".map(" + x + ", " + x + ").filter(" + x + ", " + x + " != " + k + ") + [" +
           k + "]).transformMapEntry(" + i + ", " + x + ", {" + x + ": " + x + " == " + k +
           " ? dyn(" + std::string(value) + ") : " + mm + "[" + x + "]})";
  }
  // `m` without member `key`.
  std::string without(std::string_view m, std::string_view key) {
    const std::string x = next("x"), i = next("i");
    const std::string mm(m);
    return mm + ".filter(" + x + ", " + x + " != " + std::string(key) + ").transformMapEntry(" + i +
           ", " + x + ", {" + x + ": " + mm + "[" + x + "]})";
  }
  // `m` with the members of `pairs` (a CEL list of [key, value]) set.
  std::string with_pairs(std::string_view m, std::string_view pairs) {
    const std::string x = next("x"), i = next("i"), p = next("p");
    const std::string mm(m), pp(pairs);
    return "(" + mm + ".map(" + x + ", " + x + ").filter(" + x + ", !" + pp + ".exists(" + p +
           ", " + p + "[0] == " + x + ")) + " + pp + ".map(" + p + ", " + p +
           "[0])).transformMapEntry(" + i + ", " + x + ", {" + x + ": " + pp + ".exists(" + p +
           ", " + p + "[0] == " + x + ") ? " + pp + ".filter(" + p + ", " + p + "[0] == " + x +
           ")[0][1] : " + mm + "[" + x + "]})";
  }

 private:
  std::string next(std::string_view stem) { return std::string(stem) + std::to_string(n_++); }
  int n_ = 0;
};

// JSON Patch operations, one per pod spec that `applies` and whose member changes: `add` at
// c.<pointer> + `suffix` of `value`, when it differs from `current`.
std::string member_ops(std::string_view applies, std::string_view pointer, std::string_view suffix,
                       std::string_view current, std::string_view value) {
  return "variables.ctx.filter(c, " + std::string(applies) + ").map(c, {'p': dyn(c." +
         std::string(pointer) + "), 'o': dyn(" + std::string(current) + "), 'n': dyn(" +
         std::string(value) + ")}).filter(z, z.o != z.n).map(z, JSONPatch{op: 'add', path: z.p + " +
         quote(suffix) + ", value: z.n})";
}

// One container list of the pod spec rebuilt: `kind` selects the entries of c.cs ('init',
// 'app', 'eph'), `each` rewrites the container `k.c` of entry `k`.
std::string container_list_ops(std::string_view applies, std::string_view list,
                               std::string_view kind, const std::string& each) {
  const std::string l = quote(list);
  return member_ops(
      std::string(applies) + " && " + l + " in c.spec && type(c.spec[" + l + "]) == list", "ps",
      "/" + std::string(list), "c.spec[" + l + "]",
      "c.cs.filter(k, k.k == '" + std::string(kind) + "').map(k, " + each + ")");
}

std::string join_ops(const std::vector<std::string>& lists) {
  std::string out;
  for (const std::string& l : lists) out += (out.empty() ? "" : " + ") + l;
  return out.empty() ? "[]" : out;
}

Json json_patch(std::string expression) {
  return {{"patchType", "JSONPatch"}, {"jsonPatch", {{"expression", std::move(expression)}}}};
}

// --- 1. requests = limits ---------------------------------------------------------------------

// The container `ct` (a CEL name) with each GPU request or limit written alone copied to the
// other.
std::string requests_equal_limits(const CompiledPolicy& policy, std::string_view ct) {
  MapBuilder mb;
  const std::string c(ct);
  auto missing = [&](std::string_view have, std::string_view other) {
    const std::string h(have), o(other);
    return h + ".filter(q, " + cel::is_gpu_resource(policy, "q") + " && " +
           cel::valid_quantity(h + "[q]") + " && !(q in " + o + " && " + o + "[q] != null))";
  };
  auto merged = [&](std::string_view base, std::string_view added, std::string_view from) {
    const std::string b(base), a(added), f(from);
    return "(" + b + ".map(y, y).filter(y, !(y in " + a + ")) + " + a +
           ").transformMapEntry(j, y, {y: y in " + a + " ? " + f + "[y] : " + b + "[y]})";
  };
  const std::string resources = let(
      "r1", "size(mr) > 0 ? " + mb.with("res", "'requests'", merged("rq", "mr", "lm")) + " : res",
      "size(ml) > 0 ? " + mb.with("r1", "'limits'", merged("lm", "ml", "rq")) + " : r1");
  return let("res", map_field(c, "resources"),
             let("rq", map_field("res", "requests"),
                 let("lm", map_field("res", "limits"),
                     let("mr", missing("lm", "rq"),
                         let("ml", missing("rq", "lm"),
                             "size(mr) + size(ml) == 0 ? " + c + " : " +
                                 mb.with(c, "'resources'", resources))))));
}

// --- 2. class annotation ----------------------------------------------------------------------

// The pod spec `c` gets the class annotation.
std::string class_annotates(const CompiledPolicy& policy) {
  return "(c.gpu && " + cel::known_class(policy, "c.cls") + " && " +
         string_field(map_field("c.meta", "annotations"), kClassAnnotation) + " != c.cls)";
}

std::string class_annotation(const CompiledPolicy& policy) {
  MapBuilder mb;
  const std::string applies = class_annotates(policy);
  return "variables.ctx.filter(c, " + applies +
         ").map(c, c.hm ? JSONPatch{op: 'add', path: c.pm + '/annotations', value: " +
         let("an", map_field("c.meta", "annotations"),
             mb.with("an", quote(kClassAnnotation), "c.cls")) +
         "} : JSONPatch{op: 'add', path: c.pm, value: {'annotations': {" + quote(kClassAnnotation) +
         ": c.cls}}})";
}

// --- 3. resource names ------------------------------------------------------------------------

std::string resource_target(const CompiledPolicy& policy) {
  std::string out = "''";
  const std::vector<GpuClass>& classes = policy.policy().classes;
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    std::string target;
    if (it->mig && it->mig->strategy == MigConfig::Strategy::kMixed) {
      target = "(c.mig != '' && c.mig in " + string_list(it->mig->profiles) +
               " ? 'nvidia.com/mig-' + c.mig.replace('+', '.') : '')";
    } else if (it->time_slicing && it->time_slicing->rename_by_default) {
      target = "(c.mig == '' ? 'nvidia.com/gpu.shared' : '')";
    } else {
      continue;
    }
    out = "(c.cls == " + quote(it->name) + " ? " + target + " : " + out + ")";
  }
  return out;
}

// The container `ct` with nvidia.com/gpu renamed to the target `tg` (bound to resource_target).
std::string resource_names(std::string_view ct) {
  MapBuilder mb;
  const std::string c(ct);
  const std::string gpu = "'nvidia.com/gpu'";
  auto renamed = [&](std::string_view m) {
    const std::string mm(m);
    return mm + ".map(y, y).transformMapEntry(j, y, {(y == " + gpu + " ? tg : y): " + mm + "[y]})";
  };
  const std::string resources =
      let("r1", "(" + gpu + " in rq) ? " + mb.with("res", "'requests'", renamed("rq")) + " : res",
          "(" + gpu + " in lm) ? " + mb.with("r1", "'limits'", renamed("lm")) + " : r1");
  return let("res", map_field(c, "resources"),
             let("rq", map_field("res", "requests"),
                 let("lm", map_field("res", "limits"),
                     "!(" + gpu + " in rq || " + gpu + " in lm) || [rq, lm].exists(m, " + gpu +
                         " in m && (!" + cel::valid_quantity("m[" + gpu + "]") +
                         " || tg in m)) ? " + c + " : " + mb.with(c, "'resources'", resources))));
}

// --- 4. tolerations -----------------------------------------------------------------------------

std::string cel_string_map(const Json& object) {
  std::string out = "{";
  for (auto it = object.begin(); it != object.end(); ++it) {
    out += (out.size() > 1 ? ", " : "") + quote(it.key()) + ": " + quote(it->get<std::string>());
  }
  return out + "}";
}

// The tolerations of a pod of class `c` after the mutation: for each taint in order, a
// toleration unless one in the list (existing or just appended) tolerates it.
std::string class_tolerations(const GpuClass& c) {
  const std::vector<Taint>& taints = c.taints;
  std::string exists = "[";
  for (size_t j = 0; j < taints.size(); ++j) {
    exists += std::string(j ? ", " : "") + "tl.exists(t, " + cel::tolerates("t", taints[j]) + ")";
  }
  exists += "]";
  std::string appended = "tl";
  std::vector<std::string> names;
  for (size_t j = 0; j < taints.size(); ++j) {
    names.push_back("a" + std::to_string(j));
    appended += " + (" + names[j] + " ? [" + cel_string_map(toleration_for(taints[j])) + "] : [])";
  }
  // a_j = !ex[j] && !(a_i for an earlier taint whose toleration tolerates taint j)
  std::string out = appended;
  for (size_t j = taints.size(); j-- > 0;) {
    std::vector<std::string> earlier;
    for (size_t i = 0; i < j; ++i) {
      if (tolerates(toleration_for(taints[i]), taints[j])) earlier.push_back(names[i]);
    }
    out = let(names[j], "!ex[" + std::to_string(j) + "] && !" + any_of(earlier), out);
  }
  return let("ex", exists, out);
}

std::string tolerations(const CompiledPolicy& policy) {
  std::string value = "tl";
  bool any = false;
  const std::vector<GpuClass>& classes = policy.policy().classes;
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    if (it->taints.empty()) continue;
    any = true;
    value = "(c.cls == " + quote(it->name) + " ? " + class_tolerations(*it) + " : " + value + ")";
  }
  if (!any) return "[]";
  const std::string applies =
      "c.gpu && (!('tolerations' in c.spec) || c.spec.tolerations == null || "
      "type(c.spec.tolerations) == list)";
  return member_ops(applies, "ps", "/tolerations", list_field("c.spec", "tolerations"),
                    let("tl", list_field("c.spec", "tolerations"), value));
}

// --- 5. node affinity ---------------------------------------------------------------------------

std::string mig_profile_valid(const CompiledPolicy& policy) {
  std::string known = "false";
  const std::vector<GpuClass>& classes = policy.policy().classes;
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    if (!it->mig) continue;
    known = "(c.cls == " + quote(it->name) + " ? c.mig in " + string_list(it->mig->profiles) +
            " : " + known + ")";
  }
  return "(c.mig == '' || " + known + ")";
}

std::string node_affinity(const CompiledPolicy& policy) {
  const std::string labels = class_labels(policy, "c");
  if (labels == "[]") return "[]";
  MapBuilder mb;
  const std::string expression = "{'key': dyn(l.k), 'operator': dyn('In'), 'values': dyn(l.v)}";
  // already_present (mutators/node_affinity.cc): key, In, the same set of string values.
  const std::string present =
      list_field("t", "matchExpressions") + ".exists(me, type(me) == map && " +
      string_field("me", "key") + " == l.k && " + string_field("me", "operator") +
      " == 'In' && 'values' in me && type(me['values']) == list && me['values'].all(mv, type(mv) "
      "== "
      "string) && me['values'].all(mv, mv in l.v) && l.v.all(mv, mv in me['values']))";
  const std::string empty_term = "(size(" + list_field("t", "matchExpressions") +
                                 ") == 0 && size(" + list_field("t", "matchFields") + ") == 0)";
  const std::string terms = "size(ts) == 0 ? [{'matchExpressions': lb.map(l, " + expression +
                            ")}] : ts.map(t, (type(t) != "
                            "map || " +
                            empty_term + ") ? t : " +
                            mb.with("t", "'matchExpressions'",
                                    list_field("t", "matchExpressions") + " + lb.filter(l, !" +
                                        present + ").map(l, " + expression + ")") +
                            ")";
  const std::string value =
      let("lb", labels,
          let("af", map_field("c.spec", "affinity"),
              let("na", map_field("af", "nodeAffinity"),
                  let("rq", map_field("na", kRequired),
                      let("ts", list_field("rq", "nodeSelectorTerms"),
                          let("nt", terms,
                              mb.with("af", "'nodeAffinity'",
                                      mb.with("na", quote(kRequired),
                                              mb.with("rq", "'nodeSelectorTerms'", "nt")))))))));
  const std::string applies = "c.gpu && " + cel::known_class(policy, "c.cls") + " && " +
                              mig_profile_valid(policy) + " && size(" + labels + ") > 0 && !" +
                              class_conflict(policy, "c") +
                              " && (!('affinity' in c.spec) || c.spec.affinity == null || "
                              "type(c.spec.affinity) == map)";
  return member_ops(applies, "ps", "/affinity", "('affinity' in c.spec ? c.spec.affinity : null)",
                    value);
}

// --- 6. defaults ------------------------------------------------------------------------------

// What perGPU × N takes for one perGPU quantity: t, the products as Quantity::to_string writes
// them for N up to kPerGpuTable ('' when it overflows: the webhook then sets nothing); above it
// the canonical form's integer mantissa m × N with its suffix s, while N <= x (no int64
// overflow); z: the quantity is zero.
std::string per_gpu_entry(const Quantity& per_gpu) {
  std::string table = "['', ";
  for (int64_t n = 1; n <= kPerGpuTable; ++n) {
    const std::optional<Quantity> q = per_gpu.times(n);
    table += (n > 1 ? ", " : "") + quote(q ? q->to_string() : "");
  }
  table += "]";
  const std::string text = per_gpu.to_string();
  size_t digits = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const int64_t mantissa = std::stoll(text.substr(0, digits));
  const int64_t limit = mantissa == 0 ? 0 : INT64_MAX / (mantissa < 0 ? -mantissa : mantissa);
  // dyn(): Kubernetes' CEL takes only homogeneous aggregate literals (native_tenants.cc).
  return "{'t': dyn(" + table + "), 'm': dyn(" + std::to_string(mantissa) + "), 'x': dyn(" +
         std::to_string(limit) + "), 's': dyn(" + quote(text.substr(digits)) + "), 'z': dyn(" +
         (per_gpu.is_zero() ? "true" : "false") + ")}";
}

// perGPU × N for the container's N GPU units (`gu`), the perGPU quantity named by the CEL
// string `key` (an entry of variables.pg).
std::string per_gpu_value(std::string_view key) {
  return let("pq", "variables.pg[" + std::string(key) + "]",
             "gu <= " + std::to_string(kPerGpuTable) +
                 " ? pq.t[gu] : pq.m != 0 ? (gu <= pq.x ? string(gu * pq.m) + pq.s : '') : "
                 "(pq.z ? '0' : '')");
}

// The resources the tenants' defaults name, in the mutator's order per tenant (request, perGPU,
// limit keys), GPU resources left out (mutators/defaults.cc default_resources); `lists` picks
// which of the three.
std::vector<std::string> default_resources(
    const CompiledPolicy& policy,
    const std::function<std::vector<const ResourceList*>(const TenantDefaults&)>& lists) {
  std::vector<std::string> names;
  for (const Tenant& t : policy.policy().tenants) {
    for (const ResourceList* list : lists(t.defaults)) {
      for (const auto& [name, q] : *list) {
        if (policy.is_gpu_resource(name)) continue;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

}  // namespace

std::string per_gpu_tables(const CompiledPolicy& policy) {
  std::map<std::string, std::string> entries;
  for (const Tenant& t : policy.policy().tenants) {
    for (const auto& [name, q] : t.defaults.per_gpu) {
      if (!policy.is_gpu_resource(name)) entries.emplace(q.to_string(), per_gpu_entry(q));
    }
  }
  std::string out;
  for (const auto& [key, entry] : entries)
    out += (out.empty() ? "" : ", ") + quote(key) + ": " + entry;
  return "{" + out + "}";
}

namespace {

// The container `ct` with the defaults set, when a tenant sets defaults ("" otherwise); reads
// `k.g` (the container's GPU units) and the names the caller binds: `dr`, `dl`, `dg` (the
// tenant's request, limit and perGPU maps: variables.t.df's r, l and g;
// render/native_tenants.h) and `bg` (defaults_budget).
// long: one CEL expression (limits, then requests capped at them, per container) built in the
// order it evaluates; its nested let() bindings read as one piece.
std::string defaults(const CompiledPolicy& policy, std::string_view ct) {
  const std::vector<std::string> names = default_resources(policy, [](const TenantDefaults& d) {
    return std::vector<const ResourceList*>{&d.request, &d.per_gpu, &d.limit};
  });
  if (names.empty()) return "";
  const std::string c(ct);
  const std::vector<std::string> limits = default_resources(
      policy, [](const TenantDefaults& d) { return std::vector<const ResourceList*>{&d.limit}; });
  MapBuilder mb;
  auto budgeted = [](const std::string& r) { return "bg.exists(bl, " + quote(r) + " in bl)"; };
  auto set = [](std::string_view m, const std::string& r) {
    return "(" + quote(r) + " in " + std::string(m) + " && " + std::string(m) + "[" + quote(r) +
           "] != null)";
  };
  // Limits first (LimitRange `default`): absent, and not below a request the user wrote.
  std::vector<std::string> limit_pairs;
  for (const std::string& r : limits) {
    const std::string req = "rq0[" + quote(r) + "]";
    const std::string value = "dl[" + quote(r) + "]";
    limit_pairs.push_back("(" + quote(r) + " in dl && !" + budgeted(r) + " && !" + set("lm0", r) +
                          " && (!" + set("rq0", r) + " || (" + cel::valid_quantity(req) + " && !" +
                          cel::quantity_of(req) + ".isGreaterThan(quantity(" + value +
                          ")))) ? [[dyn(" + quote(r) + "), dyn(" + value + ")]] : [])");
  }
  std::string added_limits = "[]";
  for (const std::string& p : limit_pairs) added_limits += " + " + p;
  // Requests: perGPU × N, else `request`, else the limit; capped at the limit.
  std::vector<std::string> request_pairs;
  for (const std::string& r : names) {
    const std::string k = quote(r);
    const std::string wanted = "((" + k + " in dg && gu > 0) ? dyn(" +
                               per_gpu_value("dg[" + k + "]") + ") : " + k + " in dr ? dyn(dr[" +
                               k + "]) : null)";
    const std::string limit = "(" + set("nl", r) + " ? nl[" + k + "] : null)";
    const std::string value =
        let("wd", "dyn(" + wanted + ")",
            let("li", "dyn(" + limit + ")",
                "wd == '' ? null : wd != null ? (li != null ? (!" + cel::valid_quantity("li") +
                    " ? null : quantity(wd).isGreaterThan(" + cel::quantity_of("li") +
                    ") ? li : wd) : wd) : (li != null && " + cel::valid_quantity("li") +
                    " ? li : null)"));
    request_pairs.push_back("((" + k + " in dr || " + k + " in dg || " + k + " in dl) && !" +
                            budgeted(r) + " && !" + set("rq0", r) + " ? [[dyn(" + k + "), dyn(" +
                            value + ")]] : [])");
  }
  std::string added_requests = "(";
  for (size_t i = 0; i < request_pairs.size(); ++i) {
    added_requests += (i ? " + " : "") + request_pairs[i];
  }
  added_requests += ").filter(pq, pq[1] != null)";
  const std::string resources =
      let("r1", "size(la) > 0 ? " + mb.with("res", "'limits'", "nl") + " : res",
          "size(lr) > 0 ? " + mb.with("r1", "'requests'", mb.with_pairs("rq0", "lr")) + " : r1");
  return let("gu", "([0] + k.g.map(ge, int(ge.cu))).sum()",
             let("res", map_field(c, "resources"),
                 let("rq0", map_field("res", "requests"),
                     let("lm0", map_field("res", "limits"),
                         let("la", added_limits,
                             let("nl", mb.with_pairs("lm0", "la"),
                                 let("lr", added_requests,
                                     "size(la) + size(lr) == 0 ? " + c + " : " +
                                         mb.with(c, "'resources'", resources))))))));
}

// `bg` of defaults(): the resources the pod-level spec.resources of `c` sets, the user's budget
// (mutators/defaults.cc pod_budgeted).
std::string defaults_budget() {
  return let("pr", map_field("c.spec", "resources"),
             "[" + map_field("pr", "requests") + ", " + map_field("pr", "limits") +
                 "].map(bm, bm.filter(bk, bm[bk] != null))");
}

// --- 9. GPU visibility --------------------------------------------------------------------------

// The container `ct` with NVIDIA_VISIBLE_DEVICES=void unless it may get GPUs or names the
// variable already (mutators/gpu_visibility.cc); reads `k.g`.
std::string hide_devices(std::string_view ct) {
  MapBuilder mb;
  const std::string c(ct);
  const std::string may_get_gpus =
      "(k.g.exists(e, e.pa) || size(" + list_field(map_field(c, "resources"), "claims") + ") > 0)";
  const std::string entry =
      "{'name': " + quote(kVisibleDevicesEnv) + ", 'value': " + quote(kNoVisibleDevices) + "}";
  const std::string hide =
      let("ev", "('env' in " + c + " && " + c + ".env != null) ? " + c + ".env : []",
          "(type(ev) != list || ev.exists(v, type(v) == map && " + string_field("v", "name") +
              " == " + quote(kVisibleDevicesEnv) + ")) ? " + c + " : " +
              mb.with(c, "'env'", "ev + [" + entry + "]"));
  return "(" + may_get_gpus + " ? " + c + " : " + hide + ")";
}

// Where gpu-visibility applies: every pod but a node agent's, CREATE and UPDATE alike
// (docs/decisions.md, "Controllers converge"): on UPDATE the model holds only the templates that
// changed, and immutable templates are never admitted.
std::string hides_devices(const CompiledPolicy& policy) {
  return "!" + cel::runs_on_every_node(policy);
}

// --- the container lists -----------------------------------------------------------------------

// The container lists of every pod spec the container mutators apply to, rebuilt once: each
// container through requests-equal-limits, resource-names and defaults (GPU pod specs), then
// gpu-visibility (`visibility`: every pod spec but a node agent's), in the webhook's order,
// each applied to what the one before made — one operation per list, where the API server
// would otherwise convert and default the object after each (docs/native.md, "Order and
// reinvocation"). None of them changes what the others decide by (the pod's class, its GPU
// units, whether it is a GPU pod), so the values the model read from the object hold for all.
// `names` gets the resource mutators that can change something, in order.
std::string container_resources(const CompiledPolicy& policy, bool visibility,
                                std::vector<std::string>& names) {
  std::string last = "k.c";
  std::vector<std::pair<std::string, std::string>> steps;  // {name, value over `last`}
  auto step = [&](std::string_view mutator, const std::string& value) {
    names.emplace_back(mutator);
    const std::string next = "cr" + std::to_string(steps.size());
    steps.emplace_back(next, value);
    last = next;
  };
  if (policy.policy().enforcement.requests_equal_limits == Action::kFix) {
    step("requests-equal-limits", requests_equal_limits(policy, last));
  }
  const std::string target = resource_target(policy);
  if (target != "''") {
    step("resource-names", let("tg", target, "tg == '' ? " + last + " : " + resource_names(last)));
  }
  const std::string with_defaults = defaults(policy, last);
  if (!with_defaults.empty()) {
    step("defaults",
         "!('df' in variables.t) ? " + last + " : " + let("bg", defaults_budget(), with_defaults));
  }
  if (steps.empty() && !visibility) return "[]";
  std::string each = last;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) each = let(it->first, it->second, each);
  std::string applies = "c.gpu";
  std::string ephemeral;  // only gpu-visibility rewrites ephemeral containers
  if (visibility) {
    // gpu-visibility last: the GPU pods' containers after the resource mutators, the others as
    // they are.
    const std::string hides = hides_devices(policy);
    if (steps.empty()) {
      each = hide_devices("k.c");
      applies = hides;
    } else {
      each = let("cg", "c.gpu ? " + each + " : k.c", hides + " ? " + hide_devices("cg") + " : cg");
      applies = "(c.gpu || " + hides + ")";
    }
    ephemeral = container_list_ops(hides, "ephemeralContainers", "eph", hide_devices("k.c"));
  }
  std::string ops = join_ops({container_list_ops(applies, "initContainers", "init", each),
                              container_list_ops(applies, "containers", "app", each)});
  if (!ephemeral.empty()) ops += " + " + ephemeral;
  if (!with_defaults.empty()) {
    ops = let(
        "dr", "dyn('df' in variables.t && 'r' in variables.t.df ? variables.t.df.r : {})",
        let("dl", "dyn('df' in variables.t && 'l' in variables.t.df ? variables.t.df.l : {})",
            let("dg", "dyn('df' in variables.t && 'g' in variables.t.df ? variables.t.df.g : {})",
                ops)));
  }
  return ops;
}

// --- 7. priority ------------------------------------------------------------------------------

// The tenant's priority (variables.t: pw byWorkload, pd default; render/native_tenants.h).
std::string priority(const CompiledPolicy& policy) {
  const std::vector<Tenant>& ts = policy.policy().tenants;
  if (std::none_of(ts.begin(), ts.end(), [](const Tenant& t) {
        return t.priority.default_class || !t.priority.by_workload.empty();
      })) {
    return "[]";
  }
  const std::string wanted =
      "(('pw' in variables.t && c.wl != '' && c.wl in variables.t.pw) ? variables.t.pw[c.wl] : "
      "'pd' in variables.t ? variables.t.pd : '')";
  std::string values = "{", preemption = "{";
  for (const PriorityClassDecl& d : policy.policy().priority_classes) {
    const std::string sep = values.size() > 1 ? ", " : "";
    values += sep + quote(d.name) + ": " + std::to_string(d.value);
    preemption += sep + quote(d.name) + ": " + quote(d.preemption_policy);
  }
  values += "}";
  preemption += "}";
  const PriorityClassDecl* global_default = policy.global_default_priority_class();
  const std::string current = string_field("c.spec", "priorityClassName");
  const std::string unset =
      "(" + current + " == ''" +
      (global_default ? " || " + current + " == " + quote(global_default->name) : std::string()) +
      ")";
  const std::string applies = "c.gpu && " + unset + " && " + wanted + " != ''";
  auto op = [&](std::string_view member, const std::string& value, bool pods_only) {
    const std::string m = quote(member);
    return "variables.ctx.filter(c, " + applies + (pods_only ? " && !c.tm" : "") + " && !(" + m +
           " in c.spec && c.spec[" + m + "] == " + value +
           ")).map(c, JSONPatch{op: 'add', path: "
           "c.ps + '/" +
           std::string(member) + "', value: " + value + "})";
  };
  return join_ops({op("priorityClassName", wanted, false),
                   op("priority", values + "[" + wanted + "]", true),
                   op("preemptionPolicy", preemption + "[" + wanted + "]", true)});
}

// --- 8. strip GPU pool --------------------------------------------------------------------------

// mutators/strip_gpu_pool.cc over the required terms `ts`: from each, `Exists` on a class
// label and the class values of an `In` on one (an `In` left with none goes); a term left with
// no expression and no matchFields goes. The pairs {d: dropped, e|t: value} are dyn() on both
// sides: Kubernetes' CEL takes only homogeneous aggregate literals (a bool beside a map is a
// compile error).
std::string stripped_terms(const CompiledPolicy& policy, MapBuilder& mb) {
  const std::string key = "(type(e) == map ? " + string_field("e", "key") + " : '')";
  const std::string op = string_field("e", "operator");  // read behind type(e) == map
  const std::string in_values =
      "((type(e) == map && " + op + " == 'In') ? " + list_field("e", "values") + " : [])";
  const std::string kept_values =
      "iv.filter(v, !(type(v) == string && " + cel::selects_pool_value(policy, "ek", "v") + "))";
  const std::string expression = let(
      "ek", key,
      let("iv", in_values,
          let("nv", kept_values,
              "(type(e) == map && " + op + " == 'Exists' && " + cel::is_pool_label(policy, "ek") +
                  ") ? {'d': dyn(true), 'e': dyn(e)} : size(nv) < size(iv) ? {'d': dyn(size(nv) == "
                  "0), 'e': dyn(" +
                  mb.with("e", "'values'", "nv") + ")} : {'d': dyn(false), 'e': dyn(e)}")));
  const std::string term =
      let("xs", list_field("t", "matchExpressions"),
          let("nx", "xs.map(e, " + expression + ").filter(z, !z.d).map(z, z.e)",
              "nx == xs ? {'d': dyn(false), 't': dyn(t)} : {'d': dyn(size(nx) == 0 && size(" +
                  list_field("t", "matchFields") + ") == 0), 't': dyn(" +
                  mb.with("t", "'matchExpressions'", "nx") + ")}"));
  return "ts.map(t, " + term + ").filter(z, !z.d).map(z, z.t)";
}

std::string strip_gpu_pool(const CompiledPolicy& policy) {
  MapBuilder mb;
  const std::string applies = "!c.gpu && !" + cel::runs_on_every_node(policy);
  const std::string tolerations =
      member_ops(applies + " && 'tolerations' in c.spec && type(c.spec.tolerations) == list", "ps",
                 "/tolerations", "c.spec.tolerations",
                 "c.spec.tolerations.filter(t, !(type(t) == map && " + string_field("t", "key") +
                     " != '' && " + cel::tolerates_any(policy, "t") + "))");
  const std::string selector =
      member_ops(applies + " && 'nodeSelector' in c.spec && type(c.spec.nodeSelector) == map", "ps",
                 "/nodeSelector", "c.spec.nodeSelector",
                 let("ns", "c.spec.nodeSelector",
                     "ns.filter(sk, !(type(ns[sk]) == string && " +
                         cel::selects_pool_value(policy, "sk", "ns[sk]") +
                         ")).transformMapEntry(si, sk, {sk: ns[sk]})"));
  // With no term left, the required affinity goes, and an affinity left empty with it.
  const std::string kept = stripped_terms(policy, mb);
  const std::string stripped =
      let("af", "c.spec.affinity",
          let("na", map_field("af", "nodeAffinity"),
              let("rq", map_field("na", kRequired),
                  let("ts", list_field("rq", "nodeSelectorTerms"),
                      let("kt", kept,
                          "kt == ts ? af : size(kt) > 0 ? " +
                              mb.with("af", "'nodeAffinity'",
                                      mb.with("na", quote(kRequired),
                                              mb.with("rq", "'nodeSelectorTerms'", "kt"))) +
                              " : " +
                              let("na2", mb.without("na", quote(kRequired)),
                                  "size(na2) > 0 ? " + mb.with("af", "'nodeAffinity'", "na2") +
                                      " : " + mb.without("af", "'nodeAffinity'")))))));
  const std::string affinity_applies =
      applies + " && 'affinity' in c.spec && type(c.spec.affinity) == map";
  const std::string affinity =
      "variables.ctx.filter(c, " + affinity_applies +
      ").map(c, {'p': dyn(c.ps), 'o': dyn(c.spec.affinity), 'n': dyn(" + stripped +
      ")}).filter(z, z.o != z.n).map(z, size(z.n) == 0 ? JSONPatch{op: 'remove', path: "
      "z.p + '/affinity'} : JSONPatch{op: 'add', path: z.p + '/affinity', value: z.n})";
  return join_ops({tolerations, selector, affinity});
}

// --- 10. Kueue queue ----------------------------------------------------------------------------

// mutators/queue_label.cc: on CREATE, the tenant's queue (variables.t.qn) where Kueue reads it and
// none is named — the object's metadata ('top'), the CronJob's jobTemplate ('cron'), or each GPU
// pod template's metadata ('tpl'). A copy is never here (the policy's matchConditions). The class
// annotation, earlier in the same JSON Patch, creates a template's metadata when it has none.
std::string queue_label(const CompiledPolicy& policy) {
  const std::vector<Tenant>& ts = policy.policy().tenants;
  if (std::none_of(ts.begin(), ts.end(),
                   [](const Tenant& t) { return t.queue && !t.queue->name.empty(); })) {
    return "[]";
  }
  MapBuilder mb;
  const std::string label = quote(kQueueNameLabel);
  const std::string name = "variables.t.qn";
  const std::string job_template = map_field(map_field("object", "spec"), "jobTemplate");
  const std::string per_template =
      "variables.ctx.filter(c, c.gpu && " + cel::queue_named_in("c.meta") +
      " == '').map(c, (c.hm || " + class_annotates(policy) +
      ") ? JSONPatch{op: 'add', path: c.pm + '/labels', value: " +
      let("lb", map_field("c.meta", "labels"), mb.with("lb", label, name)) +
      "} : JSONPatch{op: 'add', path: c.pm, value: {'labels': {" + label + ": " + name + "}}})";
  const std::string ops =
      let("qp", cel::kueue_queue_place(policy),
          "qp == 'tpl' ? " + per_template + " : (qp == '' || !variables.ctx.exists(c, c.gpu) || " +
              cel::kueue_queue_name("qp") +
              " != '') ? [] : qp == 'top' ? ('metadata' in "
              "object ? [JSONPatch{op: 'add', path: '/metadata/labels', value: " +
              let("lb", map_field("variables.top", "labels"), mb.with("lb", label, name)) +
              "}] : []) : " +
              let("jt", job_template,
                  "('jobTemplate' in object.spec && type(object.spec.jobTemplate) == map) ? "
                  "(('metadata' in jt && type(jt.metadata) == map) ? [JSONPatch{op: 'add', path: "
                  "'/spec/jobTemplate/metadata/labels', value: " +
                      let("lb", map_field("jt.metadata", "labels"), mb.with("lb", label, name)) +
                      "}] : [JSONPatch{op: 'add', path: '/spec/jobTemplate/metadata', value: "
                      "{'labels': {" +
                      label + ": " + name + "}}}]) : []"));
  return "(request.operation == 'CREATE' && 'qn' in variables.t) ? " + ops + " : []";
}

}  // namespace

std::vector<NativeMutation> mutations(const CompiledPolicy& policy) {
  const Enforcement& e = policy.policy().enforcement;
  // The API server evaluates a policy's variables again for every mutation, and encodes, patches,
  // decodes, converts and defaults the object after each (k8s.io/apiserver
  // pkg/admission/plugin/policy/mutating dispatcher.go dispatchOne, patch/json_patch.go): about
  // half a millisecond for a pod before any expression of ours (docs/performance.md). So every
  // mutation is one JSON Patch expression, its operations computed from the same object: the
  // container lists once, each container through requests-equal-limits, resource-names,
  // defaults and gpu-visibility in the webhook's order; then the other members. No two mutators
  // write one member of one pod spec (tolerations and node-affinity write a GPU pod's,
  // strip-gpu-pool another's), and none reads what another writes: each mutator's decisions
  // (the class, the GPU units, whether it is a GPU pod, the queue) hold for the object before
  // and after the others (render/native_mutations.h).
  const bool visibility = e.gpu_visibility == Action::kFix;
  // The names in SPEC §4 order (resource-names before class), as the annotation lists them.
  std::vector<std::string> names;
  std::vector<std::string> lists = {"(" + container_resources(policy, visibility, names) + ")"};
  const bool with_defaults = !names.empty() && names.back() == "defaults";
  if (with_defaults) names.pop_back();
  auto add = [&](std::string name, const std::string& expression) {
    if (expression == "[]") return;
    names.push_back(std::move(name));
    lists.push_back("(" + expression + ")");
  };
  add("class", class_annotation(policy));
  add("tolerations", tolerations(policy));
  add("node-affinity", node_affinity(policy));
  if (with_defaults) names.push_back("defaults");
  add("priority", priority(policy));
  if (e.non_gpu_on_gpu_pool == Action::kStrip) add("strip-gpu-pool", strip_gpu_pool(policy));
  if (visibility) names.push_back("gpu-visibility");
  add("queue", queue_label(policy));
  lists.erase(std::remove(lists.begin(), lists.end(), "([])"), lists.end());
  if (lists.empty()) return {};
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ",") + n;
  std::string expression = join_ops(lists);
  // A tenant with enforcement.mutate false is not mutated (variables.t.nm).
  const std::vector<Tenant>& ts = policy.policy().tenants;
  if (std::any_of(ts.begin(), ts.end(), [](const Tenant& t) { return !t.enforcement.mutate; })) {
    expression = "'nm' in variables.t ? [] : (" + expression + ")";
  }
  return {{joined, json_patch(std::move(expression))}};
}

}  // namespace gpuadmit::render::native
