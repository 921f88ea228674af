#include "render/native_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/controllers.h"
#include "engine/kueue.h"
#include "engine/scheduling.h"
#include "engine/workload.h"
#include "engine/workload_kinds.h"
#include "render/native_cel.h"
#include "render/native_tenants.h"

namespace gpuadmit::render::native {
namespace {

constexpr std::string_view kClassKey = "gpuadmit.io/class";
constexpr std::string_view kMigProfileKey = "gpuadmit.io/mig-profile";
constexpr std::string_view kWorkloadKey = "gpuadmit.io/workload";

std::vector<std::string> split(std::string_view pattern) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t dot = pattern.find('.', start);
    if (dot == std::string_view::npos) dot = pattern.size();
    tokens.emplace_back(pattern.substr(start, dot - start));
    start = dot + 1;
  }
  return tokens;
}

bool is_wildcard(std::string_view token) { return token == "*" || token.ends_with("[*]"); }

size_t wildcards(const std::vector<std::string>& tokens) {
  size_t n = 0;
  for (const std::string& t : tokens) n += (t == "*[*]") ? 2 : is_wildcard(t) ? 1 : 0;
  return n;
}

// The table's pod template paths of a kind (engine/workload_kinds.h): the one place the native
// policies read the engine's workload table.
std::vector<std::string> table_patterns(const WorkloadKind& kind) {
  std::vector<std::string> patterns;
  for (const PodTemplatePath& p : kind.pod_specs) patterns.emplace_back(p.spec);
  return patterns;
}

// Why a pattern cannot be read natively, or "" when it can: at most one wildcard before the
// pod spec, whose own key is a plain name.
std::string unreadable(std::string_view pattern) {
  const std::vector<std::string> tokens = split(pattern);
  if (tokens.empty() || tokens.back().empty() || is_wildcard(tokens.back())) {
    return "pattern " + std::string(pattern) + " does not end in a member name";
  }
  if (wildcards(tokens) > 1) {
    return "pattern " + std::string(pattern) +
           " has more than one wildcard (CEL on Kubernetes before 1.34 cannot flatten lists)";
  }
  return "";
}

std::string pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Navigation from a CEL expression through plain member tokens, each an object: the guard that
// they exist and the expression of the last one.
struct Path {
  std::string guard;
  std::string expr;
  std::string pointer;  // JSON pointer text of the tokens ("/spec/template")
};
Path navigate(std::string base, const std::vector<std::string>& tokens) {
  Path p{"type(" + base + ") == map", std::move(base), ""};
  for (const std::string& t : tokens) {
    const std::string key = quote(t);
    p.guard += " && " + key + " in " + p.expr + " && type(" + p.expr + "[" + key + "]) == map";
    p.expr += "[" + key + "]";
    p.pointer += "/" + pointer_token(t);
  }
  return p;
}

// One tpls entry: {ps: pointer of the spec, pm: pointer of its metadata, tm, t: the spec's
// parent, s: the spec, id: where the parent is}; an old-side entry (over oldObject) has only id
// and t. `pointer` is a CEL string expression (the parent's pointer); `id` one that names the
// parent's place the same way in object and oldObject.
std::string entry(const std::string& parent, const std::string& pointer, bool tm,
                  const std::string& spec_key, bool pointers, const std::string& id, bool old) {
  if (old) return "{'id': dyn(" + id + "), 't': dyn(" + parent + ")}";
  const std::string ps = pointers ? pointer + " + " + quote("/" + pointer_token(spec_key)) : "''";
  const std::string pm = pointers ? pointer + " + '/metadata'" : "''";
  return "{'ps': dyn(" + ps + "), 'pm': dyn(" + pm + "), 'tm': dyn(" + (tm ? "true" : "false") +
         "), 't': dyn(" + parent + "), 's': dyn(" + parent + "[" + quote(spec_key) +
         "]), 'id': dyn(" + id + ")}";
}

// The tpls entries of one pattern (at most one wildcard) under `base` (object, or oldObject for
// the old side) as a CEL list expression.
std::string pattern_templates(std::string_view pattern, bool tm, CelLevel level,
                              const std::string& base, bool old) {
  const bool pointers = level == CelLevel::kMutating;
  std::vector<std::string> tokens = split(pattern);
  const std::string spec_key = tokens.back();
  tokens.pop_back();
  auto wild = std::find_if(tokens.begin(), tokens.end(),
                           [](const std::string& t) { return is_wildcard(t); });
  if (wild == tokens.end()) {
    const Path parent = navigate(base, tokens);
    const Path spec = navigate(parent.expr, {spec_key});
    const std::string pointer = quote(parent.pointer);
    // The old side needs no test of the spec: an old template without one equals no entry.
    return "((" + parent.guard + (old ? "" : spec.guard.substr(spec.guard.find(" && "))) + ") ? [" +
           entry(parent.expr, pointer, tm, spec_key, pointers, pointer, old) + "] : [])";
  }
  const std::vector<std::string> prefix(tokens.begin(), wild);
  const std::string wildcard = *wild;
  std::vector<std::string> suffix(wild + 1, tokens.end());
  const Path head = navigate(base, prefix);
  if (wildcard == "*") {  // every member of a map
    const std::string item = head.expr + "[k]";
    const Path inner = navigate(item, suffix);
    const Path spec = navigate(inner.expr, {spec_key});
    const std::string guard = inner.guard + (old ? "" : spec.guard.substr(spec.guard.find(" && ")));
    const std::string pointer = quote(head.pointer + "/") +
                                " + k.replace('~', '~0').replace('/', '~1')" +
                                (inner.pointer.empty() ? "" : " + " + quote(inner.pointer));
    return "((" + head.guard + ") ? " + head.expr + ".filter(k, " + guard + ").map(k, " +
           entry(inner.expr, pointer, tm, spec_key, pointers, pointer, old) + ") : [])";
  }
  // name[*]: every element of a list member.
  const std::string name = wildcard.substr(0, wildcard.size() - 3);
  const std::string list = head.expr + "[" + quote(name) + "]";
  const Path inner = navigate("e", suffix);
  const Path spec = navigate(inner.expr, {spec_key});
  const std::string guard = inner.guard + (old ? "" : spec.guard.substr(spec.guard.find(" && ")));
  const std::string head_guard =
      head.guard + " && " + quote(name) + " in " + head.expr + " && type(" + list + ") == list";
  if (!pointers) {
    // Without the index (two-variable comprehensions are CEL 1.32+) the id names the list:
    // unchanged when an equal template is anywhere in the old list (docs/native.md,
    // "Differences").
    const std::string id = quote(head.pointer + "/" + pointer_token(name));
    return "((" + head_guard + ") ? " + list + ".filter(e, " + guard + ").map(e, " +
           entry(inner.expr, "''", tm, spec_key, false, id, old) + ") : [])";
  }
  const std::string pointer = quote(head.pointer + "/" + pointer_token(name) + "/") +
                              " + string(i)" +
                              (inner.pointer.empty() ? "" : " + " + quote(inner.pointer));
  return "((" + head_guard + ") ? " + list + ".transformList(i, e, " + guard + ", " +
         entry(inner.expr, pointer, tm, spec_key, true, pointer, old) + ") : [])";
}

// The kind test of a NativeKind: exact apiVersion and kind for a policy workload, group and
// kind (any version) for a built-in one.
std::string kind_test(const NativeKind& k) {
  if (!k.api_version.empty()) {
    return "(variables.av == " + quote(k.api_version) + " && variables.kd == " + quote(k.kind) +
           ")";
  }
  return "variables.gk == " + quote(k.group + "/" + k.kind);
}

std::string templates(const NativeKinds& kinds, CelLevel level, const std::string& base, bool old) {
  // Kinds with the same patterns share one branch (Deployment, StatefulSet, Job... all read
  // spec.template.spec; the Kubeflow kinds share theirs). Policy workloads come first, as the
  // engine prefers them over a built-in kind of the same group and kind.
  struct Branch {
    std::vector<std::string> tests;
    std::string list;
  };
  std::vector<Branch> branches;
  for (const NativeKind& k : kinds.covered) {
    std::string list;
    for (const std::string& p : k.patterns) {
      const bool tm = !(k.group.empty() && k.kind == "Pod" && p == "spec");
      list += (list.empty() ? "" : " + ") + pattern_templates(p, tm, level, base, old);
    }
    auto same = std::find_if(branches.begin(), branches.end(), [&](const Branch& b) {
      return b.list == list && k.api_version.empty();
    });
    if (same != branches.end() && !same->tests.empty() &&
        same->tests.back().starts_with("variables.gk")) {
      same->tests.push_back(kind_test(k));
    } else {
      branches.push_back({{kind_test(k)}, list});
    }
  }
  std::string out = "[]";
  for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
    std::vector<std::string> groups;
    for (const std::string& t : it->tests) {
      if (t.starts_with("variables.gk == ")) groups.push_back(t.substr(16));
    }
    const std::string test = groups.size() == it->tests.size() && groups.size() > 1
                                 ? "variables.gk in [" +
                                       [&] {
                                         std::string l;
                                         for (const std::string& g : groups)
                                           l += (l.empty() ? "" : ", ") + g;
                                         return l;
                                       }() +
                                       "]"
                                 : any_of(it->tests);
    out = test + " ? " + it->list + " : " + out;
  }
  return out;
}

// --- one pod spec ------------------------------------------------------------------------

// `m[section][key]` is a string (metadata annotations or labels).
std::string has_string(std::string_view m, std::string_view section, std::string_view key) {
  const std::string mm(m);
  const std::string s = quote(section);
  const std::string k = quote(key);
  return "(" + s + " in " + mm + " && type(" + mm + "[" + s + "]) == map && " + k + " in " + mm +
         "[" + s + "] && type(" + mm + "[" + s + "][" + k + "]) == string)";
}

// A workload setting (SPEC §2, PodView::setting): the pod (template) annotation, its label,
// then (templates only) the object's annotation and label. `present` yields [value] or [],
// otherwise the value or ''.
std::string setting(std::string_view meta, std::string_view tm, std::string_view key,
                    bool present) {
  const std::string m(meta);
  auto value = [&](std::string_view from, std::string_view section) {
    const std::string v = std::string(from) + "[" + quote(section) + "][" + quote(key) + "]";
    return present ? "[" + v + "]" : v;
  };
  const std::string none = present ? "[]" : "''";
  return "(" + has_string(m, "annotations", key) + " ? " + value(m, "annotations") + " : " +
         has_string(m, "labels", key) + " ? " + value(m, "labels") + " : (" + std::string(tm) +
         " && " + has_string("variables.top", "annotations", key) + ") ? " +
         value("variables.top", "annotations") + " : (" + std::string(tm) + " && " +
         has_string("variables.top", "labels", key) + ") ? " + value("variables.top", "labels") +
         " : " + none + ")";
}

// Whole units of a quantity `q` (Quantity.Value(): rounded up; 0 when not positive), capped
// at 10^15 (the engine saturates at 2^63; every limit a policy can compare with is smaller).
std::string units(std::string_view q) {
  const std::string v(q);
  const std::string fraction =
      let("f", "int(" + v + ".asApproximateFloat())",
          "quantity(string(f)).isLessThan(" + v + ") ? (quantity(string(f + 1)).isLessThan(" + v +
              ") ? f + 2 : f + 1) : f");
  return "(sign(" + v + ") <= 0 ? 0 : " + v +
         ".isGreaterThan(quantity('1000000000000000')) ? 1000000000000000 : " + v +
         ".isInteger() ? " + v + ".asInteger() : " + fraction + ")";
}

std::string positive(std::string_view value) {
  return "(" + cel::valid_quantity(value) + " && sign(" + cel::quantity_of(value) + ") == 1)";
}

// The units of a raw value, 0 when it does not parse.
std::string value_units(std::string_view value) {
  return "(" + cel::valid_quantity(value) + " ? " + let("q", cel::quantity_of(value), units("q")) +
         " : 0)";
}

// One GPU resource of a container: name k, raw request r and limit l (null when absent or null).
// u: units of the effective value (the request when written, else the limit); cu: the parsed
// request's units, else the limit's (PodGpuResources::units); pe: the effective value is
// positive; pa: the request or the limit is.
std::string gpu_entry() {
  const std::string body =
      "{'n': dyn(k), 'r': dyn(r), 'l': dyn(l), 'u': dyn(r != null ? ur : ul), 'cu': dyn(" +
      cel::valid_quantity("r") +
      " ? ur : ul), 'pe': dyn(r != null ? pr : pl), 'pa': dyn(pr || pl)}";
  return let("r", "k in rq ? rq[k] : null",
             let("l", "k in lm ? lm[k] : null",
                 let("ur", value_units("r"),
                     let("ul", value_units("l"),
                         let("pr", positive("r"), let("pl", positive("l"), body))))));
}

// The GPU resources of container `c` (container_gpu_resources: requests first, then limits
// without a request; null values skipped).
std::string gpu_resources(const CompiledPolicy& policy, std::string_view c) {
  const std::string res = map_field(c, "resources");
  const std::string body =
      "(rq.filter(k, " + cel::is_gpu_resource(policy, "k") + " && rq[k] != null) + lm.filter(k, " +
      cel::is_gpu_resource(policy, "k") +
      " && lm[k] != null && !(k in rq && rq[k] != null))).map(k, " + gpu_entry() + ")";
  return let("rq", map_field(res, "requests"), let("lm", map_field(res, "limits"), body));
}

// The containers of spec `s` in Kubernetes order (PodView::containers). `o` orders init
// containers by name (sidecars started before an init container count with it).
std::string containers(const CompiledPolicy& policy, std::string_view s) {
  auto entry = [](std::string_view kind, std::string_view restartable, std::string_view order) {
    return "{'k': dyn('" + std::string(kind) + "'), 'r': dyn(" + std::string(restartable) +
           "), 'o': dyn(" + std::string(order) + "), 'c': dyn(c)}";
  };
  const std::string listed =
      "ic.map(c, " +
      entry("init", string_field("c", "restartPolicy") + " == 'Always'",
            "icn.indexOf(" + string_field("c", "name") + ")") +
      ") + " + list_field(s, "containers") + ".map(c, " + entry("app", "false", "0") + ") + " +
      list_field(s, "ephemeralContainers") + ".map(c, " + entry("eph", "false", "0") + ")";
  const std::string with_gpus = "(" + listed +
                                ").map(x, {'k': x.k, 'r': x.r, 'o': x.o, 'c': x.c, 'g': dyn(" +
                                gpu_resources(policy, "x.c") + ")})";
  return let("ic", list_field(s, "initContainers"),
             let("icn", "ic.map(c, " + string_field("c", "name") + ")", with_gpus));
}

// A pod whose claims the webhook cannot resolve without --dra-lookup (engine/dra.cc
// resolve_pod_claims: an entry naming a template or a claim).
std::string unresolved_claims(std::string_view s) {
  return list_field(s, "resourceClaims") + ".exists(rc, type(rc) == map && ((" +
         quote("resourceClaimTemplateName") +
         " in rc && type(rc.resourceClaimTemplateName) == string) || (" +
         quote("resourceClaimName") + " in rc && type(rc.resourceClaimName) == string)))";
}

// The class whose nodeSelector the pod's nodeSelector names most (engine/context.cc
// node_selector_match_keys; ties to the first class), else the tenant's defaultClass, else the
// only class, else ''.
std::string class_from_placement(const CompiledPolicy& policy, std::string_view s) {
  const std::vector<GpuClass>& classes = policy.policy().classes;
  std::string fallback = classes.size() == 1 ? quote(classes.front().name) : "''";
  const std::vector<Tenant>& tenants = policy.policy().tenants;
  if (std::any_of(tenants.begin(), tenants.end(),
                  [](const Tenant& t) { return t.default_class.has_value(); })) {
    fallback = "('dc' in variables.t ? variables.t.dc : " + fallback + ")";
  }
  std::vector<std::string> counts;
  std::vector<std::string> names;
  bool any_selector = false;
  for (const GpuClass& c : classes) {
    names.push_back(c.name);
    std::vector<std::string> conflicts;
    std::vector<std::string> named;
    for (const auto& [key, values] : c.node_selector) {
      const std::string k = quote(key);
      const std::string present = "(" + k + " in ns && type(ns[" + k + "]) == string)";
      conflicts.push_back("(" + present + " && !(ns[" + k + "] in " + string_list(values) + "))");
      named.push_back("(" + present + " ? 1 : 0)");
    }
    any_selector = any_selector || !named.empty();
    std::string sum = "0";
    for (const std::string& n : named) sum = sum == "0" ? n : sum + " + " + n;
    counts.push_back(named.empty() ? "0" : "(" + any_of(conflicts) + " ? 0 : " + sum + ")");
  }
  if (!any_selector) return fallback;
  std::string list = "[";
  for (size_t i = 0; i < counts.size(); ++i) list += (i ? ", " : "") + counts[i];
  list += "]";
  return let("ns", map_field(s, "nodeSelector"),
             let("ms", list,
                 "ms.max() > 0 ? " + string_list(names) + "[ms.indexOf(ms.max())] : " + fallback));
}

std::string context(const CompiledPolicy& policy) {
  const std::string gpu = "cs.exists(k, k.g.exists(e, e.pa)) || (" + unresolved_claims("s") +
                          " && (size(sc) > 0 || " + cel::targets_gpu_pool(policy, "s") + "))";
  const std::string cls = "size(sc) > 0 ? sc[0] : !g ? '' : " + class_from_placement(policy, "s");
  const std::string body =
      "{'id': dyn(x.id), 'ps': dyn(x.ps), 'pm': dyn(x.pm), 'tm': dyn(x.tm), 'spec': dyn(s), "
      "'meta': dyn(m), "
      "'hm': dyn('metadata' in x.t && type(x.t.metadata) == map), "
      "'cs': dyn(cs), 'sc': dyn(sc), 'mig': dyn(" +
      setting("m", "x.tm", kMigProfileKey, false) + "), 'wl': dyn(" +
      setting("m", "x.tm", kWorkloadKey, false) + "), 'gpu': dyn(g), 'cls': dyn(" + cls + ")}";
  return "variables.tpls.map(x, " +
         let("s", "x.s",
             let("m", map_field("x.t", "metadata"),
                 let("cs", containers(policy, "s"),
                     let("sc", setting("m", "x.tm", kClassKey, true), let("g", gpu, body))))) +
         ")";
}

// engine/controllers.h template_treatment == kJudge, without TemplateMode::kValidate: the
// object is not a Pod and has a controller (a copy: the MutatingAdmissionPolicy's
// matchConditions leave it unmutated), or it is an UPDATE of a kind whose templates the API
// server does not let an UPDATE change (the table's TemplateUpdates::kImmutable: the mutating
// policies admit those kinds on CREATE only).
std::string judged_only() {
  std::vector<std::string> immutable;
  for (const WorkloadKind& k : workload_kinds()) {
    if (k.template_updates == TemplateUpdates::kImmutable &&
        !(k.group.empty() && k.kind == "Pod")) {
      immutable.push_back(std::string(k.group) + "/" + std::string(k.kind));
    }
  }
  return "variables.gk != '/Pod' && (" + cel::has_controller("variables.top") +
         " || (request.operation == 'UPDATE' && variables.gk in " + string_list(immutable) + "))";
}

Json variable(std::string_view name, std::string expression) {
  return {{"name", name}, {"expression", std::move(expression)}};
}

// Taints of every class, without repeats (key, value, effect).
std::vector<Taint> pool_taints(const CompiledPolicy& policy) {
  std::vector<Taint> out;
  for (const GpuClass& c : policy.policy().classes) {
    for (const Taint& t : c.taints) {
      if (std::none_of(out.begin(), out.end(), [&](const Taint& o) {
            return o.key == t.key && o.value == t.value && o.effect == t.effect;
          })) {
        out.push_back(t);
      }
    }
  }
  return out;
}

// {label: [values of every class with that label]} as a CEL map literal.
std::string pool_labels(const CompiledPolicy& policy) {
  std::map<std::string, std::vector<std::string>> labels;
  std::vector<std::string> order;
  for (const GpuClass& c : policy.policy().classes) {
    for (const auto& [key, values] : c.node_selector) {
      if (!labels.count(key)) order.push_back(key);
      std::vector<std::string>& all = labels[key];
      for (const std::string& v : values) {
        if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(v);
      }
    }
  }
  std::string out = "{";
  for (size_t i = 0; i < order.size(); ++i) {
    out += (i ? ", " : "") + quote(order[i]) + ": " + string_list(labels[order[i]]);
  }
  return out + "}";
}

}  // namespace

NativeKinds native_kinds(const CompiledPolicy& policy) {
  NativeKinds out;
  for (const WorkloadDecl& w : policy.policy().workloads) {
    if (w.pod_specs.empty()) continue;
    const size_t slash = w.api_version.find('/');
    NativeKind k{w.api_version, slash == std::string::npos ? "" : w.api_version.substr(0, slash),
                 w.kind, w.pod_specs};
    std::string why;
    for (const std::string& p : w.pod_specs) {
      if (why.empty()) why = unreadable(p);
    }
    if (why.empty()) {
      out.covered.push_back(std::move(k));
    } else {
      out.not_covered.emplace_back(std::move(k), std::move(why));
    }
  }
  std::vector<NativeKind> builtins;
  for (const WorkloadKind& k : workload_kinds()) {
    if (k.pod_specs.empty()) continue;  // a controller only: nothing to read
    builtins.push_back({"", std::string(k.group), std::string(k.kind), table_patterns(k)});
  }
  // Policy workloads first: the engine takes a policy's entry for its exact apiVersion over the
  // table's (pod_spec_patterns).
  out.covered.insert(out.covered.end(), builtins.begin(), builtins.end());
  return out;
}

Json model_variables(const CompiledPolicy& policy, CelLevel level) {
  const NativeKinds kinds = native_kinds(policy);
  Json vars = Json::array();
  vars.push_back(variable("av", string_field("object", "apiVersion")));
  vars.push_back(variable("kd", string_field("object", "kind")));
  vars.push_back(
      variable("gk",
               "(variables.av.contains('/') ? variables.av.substring(0, variables.av.indexOf('/')) "
               ": '') + '/' + variables.kd"));
  vars.push_back(variable("top", map_field("object", "metadata")));
  vars.push_back(variable("jo", judged_only()));
  // On UPDATE only the templates that changed from oldObject are read (engine/controllers.h
  // template_unchanged; PodSecurity admission's isSignificantPodUpdate likewise): an UPDATE
  // that changes no template (a scale, a label, the Deployment controller's own ReplicaSet
  // UPDATE) is neither mutated nor denied.
  // otpls: the old side (id and template), read once, so that the comparison is one filter and
  // not repeated per pattern (CEL's == on maps and lists is deep equality, as the engine's Json
  // ==). oldObject is null on CREATE ("The value is null for CREATE requests.", k8s.io/api
  // admissionregistration/v1 types.go, Validation.Expression): no old side there.
  vars.push_back(variable("otpls", "request.operation == 'UPDATE' ? (" +
                                       templates(kinds, level, "oldObject", true) + ") : []"));
  // A queue label changed where Kueue reads it for the whole workload (engine/pipeline.cc
  // queue_changed): every template is read, unchanged or not (GPU025 judges the UPDATE).
  // A controller's child detached (2), or its spec changed by someone else (3)
  // (engine/kueue.h child_update): every template is read too.
  vars.push_back(variable("bhc", cel::child_update(policy)));
  vars.push_back(variable("qch", "(" + cel::queue_changed(policy) + ") || variables.bhc >= 2"));
  vars.push_back(variable("tpls", "(" + templates(kinds, level, "object", false) +
                                      ").filter(x, variables.qch || !variables.otpls.exists(o, "
                                      "o.id == x.id && o.t == x.t))"));
  for (Json& v : tenant_variables(policy)) vars.push_back(std::move(v));
  vars.push_back(variable("ctx", context(policy)));
  return vars;
}

namespace cel {

std::vector<std::pair<std::string, std::string>> implicit_device_class_resources(
    const CompiledPolicy& policy) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const GpuClass& c : policy.policy().classes) {
    for (const DeviceClassMapping& m : c.device_classes) {
      std::string name = std::string(kImplicitDeviceClassResource) + m.name;
      // The first mapping of a DeviceClass wins, as in CompiledPolicy::find_device_class.
      if (std::none_of(out.begin(), out.end(), [&](const auto& e) { return e.first == name; })) {
        out.emplace_back(std::move(name), c.name);
      }
    }
  }
  return out;
}

std::string is_gpu_resource(const CompiledPolicy& policy, std::string_view name) {
  std::vector<std::string> names{"nvidia.com/gpu", "nvidia.com/gpu.shared"};
  for (const std::string& r : policy.policy().gpu_resources) {
    if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r);
  }
  for (const auto& [resource, gpu_class] : implicit_device_class_resources(policy)) {
    names.push_back(resource);
  }
  const std::string n(name);
  return "(" + n + " in " + string_list(names) + " || (" + n +
         ".startsWith('nvidia.com/mig-') && size(" + n + ") > 15))";
}

std::string valid_quantity(std::string_view value) {
  const std::string v(value);
  return "(" + v + " != null && (type(" + v + ") == string || type(" + v + ") == int || type(" + v +
         ") == uint || type(" + v + ") == double) && isQuantity(string(" + v + ")))";
}

std::string quantity_of(std::string_view value) {
  return "quantity(string(" + std::string(value) + "))";
}

std::string parses_as_int64(std::string_view s) {
  const std::string v(s);
  return "(" + v + ".matches('^[+-]?[0-9]+$') && " +
         let("d", v + ".find('[1-9][0-9]*$')",
             "size(d) < 19 || (size(d) == 19 && (d <= '9223372036854775807' || (" + v +
                 ".startsWith('-') && d == '9223372036854775808')))") +
         ")";
}

std::string tolerates(std::string_view toleration, const Taint& taint) {
  // Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go, engine/scheduling.cc), field
  // by field; absent, null and non-string fields read as "".
  const std::string t(toleration);
  const std::string effect = string_field(t, "effect");
  const std::string key = string_field(t, "key");
  const std::string op = string_field(t, "operator");
  const std::string value = string_field(t, "value");
  std::string numeric = "false";
  if (const std::optional<int64_t> v = parse_go_int64(taint.value)) {
    const std::string n = std::to_string(*v);
    numeric = "((tf[2] == 'Lt' || tf[2] == 'Gt') && " + parses_as_int64("tf[3]") +
              " && (tf[2] == 'Lt' ? " + n + " < int(tf[3]) : " + n + " > int(tf[3])))";
  }
  return "(type(" + t + ") == map && " +
         let("tf", "[" + effect + ", " + key + ", " + op + ", " + value + "]",
             "(tf[0] == '' || tf[0] == " + quote(taint.effect) +
                 ") && (tf[1] == '' || tf[1] == " + quote(taint.key) +
                 ") && ((tf[2] == '' || tf[2] == 'Equal') ? tf[3] == " + quote(taint.value) +
                 " : (tf[2] == 'Exists' || " + numeric + "))") +
         ")";
}

std::string tolerates_any(const CompiledPolicy& policy, std::string_view toleration) {
  std::vector<std::string> terms;
  for (const Taint& taint : pool_taints(policy)) terms.push_back(tolerates(toleration, taint));
  return any_of(terms);
}

std::string selects_pool_value(const CompiledPolicy& policy, std::string_view key,
                               std::string_view value) {
  const std::string labels = pool_labels(policy);
  if (labels == "{}") return "false";
  return "(" + std::string(key) + " in " + labels + " && " + std::string(value) + " in " + labels +
         "[" + std::string(key) + "])";
}

std::string is_pool_label(const CompiledPolicy& policy, std::string_view key) {
  const std::string labels = pool_labels(policy);
  if (labels == "{}") return "false";
  return "(" + std::string(key) + " in " + labels + ")";
}

std::string expression_selects_pool(const CompiledPolicy& policy, std::string_view expression) {
  const std::string labels = pool_labels(policy);
  if (labels == "{}") return "false";
  const std::string e(expression);
  const std::string key = string_field(e, "key");
  const std::string op = string_field(e, "operator");
  return "(type(" + e + ") == map && " + key + " in " + labels + " && (" + op +
         " == 'Exists' || (" + op + " == 'In' && " + list_field(e, "values") +
         ".exists(v, type(v) == string && v in " + labels + "[" + key + "]))))";
}

std::string targets_gpu_pool(const CompiledPolicy& policy, std::string_view spec) {
  const std::string s(spec);
  const std::string terms =
      list_field(map_field(map_field(map_field(s, "affinity"), "nodeAffinity"),
                           "requiredDuringSchedulingIgnoredDuringExecution"),
                 "nodeSelectorTerms");
  return "(" + list_field(s, "tolerations") + ".exists(t, " + tolerates_any(policy, "t") + ") || " +
         let("ns", map_field(s, "nodeSelector"),
             "ns.exists(nk, type(ns[nk]) == string && " +
                 selects_pool_value(policy, "nk", "ns[nk]") + ")") +
         " || " + terms + ".exists(nt, type(nt) == map && " + list_field("nt", "matchExpressions") +
         ".exists(ne, " + expression_selects_pool(policy, "ne") + ")))";
}

std::string known_class(const CompiledPolicy& policy, std::string_view cls) {
  std::vector<std::string> names;
  for (const GpuClass& c : policy.policy().classes) names.push_back(c.name);
  return "(" + std::string(cls) + " in " + string_list(names) + ")";
}

std::string container_units(std::string_view container) {
  return "([0] + " + std::string(container) + ".g.map(ge, int(ge.cu))).sum()";
}

std::string pod_gpu_total(const CompiledPolicy& policy, std::string_view c,
                          const NamePredicate& counts) {
  // k8s.io/component-helpers resource.PodRequests per resource name, summed over the names
  // (engine/resources.h pod_requests): app containers and sidecars add up; a non-restartable
  // init container counts with the sidecars started before it, and per name the larger of the
  // two wins; spec.overhead is added. Written as Σ(app) + Σ over names of max(0, init − app),
  // each name taken at its first init container (no flatten needed), + Σ(overhead). A
  // container's amount is its parsed request, else its parsed limit (`cu`).
  auto ok = [&](std::string_view name) { return counts ? counts(name) : std::string("true"); };
  auto units_named = [](std::string_view k, std::string_view var) {
    const std::string v(var);
    return "([0] + " + std::string(k) + ".g.filter(" + v + ", " + v + ".n == e1.n).map(" + v +
           ", int(" + v + ".cu))).sum()";
  };
  const std::string app_total =
      "([0] + ks.filter(a1, a1.k == 'app' || a1.r).map(a1, ([0] + a1.g.filter(x1, " + ok("x1.n") +
      ").map(x1, int(x1.cu))).sum())).sum()";
  const std::string app_named =
      "([0] + ks.filter(a2, a2.k == 'app' || a2.r).map(a2, " + units_named("a2", "x2") + ")).sum()";
  const std::string init_named =
      "([0] + ks.filter(i2, i2.k == 'init' && !i2.r).map(i2, " + units_named("i2", "x3") +
      " + ([0] + ks.filter(s2, s2.k == 'init' && s2.r && s2.o < i2.o).map(s2, " +
      units_named("s2", "x4") + ")).sum())).max()";
  const std::string first =
      "!ks.exists(p2, p2.k == 'init' && !p2.r && p2.o < k1.o && p2.g.exists(x5, x5.n == e1.n))";
  const std::string correction =
      "([0] + ks.filter(k1, k1.k == 'init' && !k1.r).map(k1, ([0] + k1.g.filter(e1, " + ok("e1.n") +
      " && " + first + ").map(e1, [0, " + init_named + " - " + app_named +
      "].max())).sum())).sum()";
  const std::string overhead =
      let("ov", map_field(std::string(c) + ".spec", "overhead"),
          "([0] + ov.filter(ok, " + is_gpu_resource(policy, "ok") + " && ov[ok] != null && " +
              ok("ok") + ").map(ok, " + value_units("ov[ok]") + ")).sum()");
  return let("ks", std::string(c) + ".cs.filter(k0, k0.k != 'eph')",
             "(" + app_total + " + " + correction + " + " + overhead + ")");
}

namespace {

// The controller ownerReferences of `metadata` (metav1.GetControllerOf reads the first).
std::string controller_owners_of(std::string_view metadata) {
  return list_field(metadata, "ownerReferences") +
         ".filter(o, type(o) == map && 'controller' in o && o.controller == true)";
}

// The object's controller ownerReferences.
std::string controller_owners() { return controller_owners_of("variables.top"); }

// The kinds whose children Kueue leaves to them (engine/kueue.cc kueue_unbelieved_owner): the
// table's kOwnLabels kinds, and ReplicaSet (Kueue looks through it), as "group/Kind".
std::vector<std::string> kueue_skipping_kinds() {
  std::vector<std::string> skipped{"apps/ReplicaSet"};
  for (const WorkloadKind& k : workload_kinds()) {
    if (k.kueue == KueueQueue::kOwnLabels) {
      skipped.push_back(std::string(k.group) + "/" + std::string(k.kind));
    }
  }
  return skipped;
}

// "group/Kind" of the ownerReference `owner` (a CEL map): "apps/ReplicaSet", "/Pod".
std::string owner_group_kind(std::string_view owner) {
  const std::string av = string_field(owner, "apiVersion");
  return "((" + av + ".contains('/') ? " + av + ".substring(0, " + av + ".indexOf('/')) : '') + " +
         "'/' + " + string_field(owner, "kind") + ")";
}

// {"group/Kind": [users]}: who is believed to send the objects a kind controls
// (engine/controllers.h sent_by_owner_controller: kube-controller-manager's controllers, then
// the policy's `controllers`).
std::string controller_users_map(const CompiledPolicy& policy) {
  std::vector<std::pair<std::string, std::vector<std::string>>> users;
  auto add = [&](const std::string& gk, const std::string& user) {
    auto it =
        std::find_if(users.begin(), users.end(), [&](const auto& u) { return u.first == gk; });
    if (it == users.end()) it = users.insert(users.end(), {gk, {}});
    if (std::find(it->second.begin(), it->second.end(), user) == it->second.end()) {
      it->second.push_back(user);
    }
  };
  for (const ControllerUser& c : kube_controller_users()) {
    const std::string gk = std::string(c.group) + "/" + std::string(c.kind);
    add(gk, std::string(c.username));
    add(gk, std::string(kKubeControllerManagerUser));
  }
  for (const ControllerIdentity& c : policy.policy().controllers) {
    for (const GroupKind& k : c.kinds) add(k.group + "/" + k.kind, c.username);
  }
  std::string out = "{";
  for (size_t i = 0; i < users.size(); ++i) {
    out += (i ? ", " : "") + quote(users[i].first) + ": " + string_list(users[i].second);
  }
  return out + "}";
}

// The request's sender is the controller of the kind of `owner` (an ownerReference).
std::string sender_is_owner_controller(const CompiledPolicy& policy, std::string_view owner) {
  return let("bm", controller_users_map(policy),
             let("bk", owner_group_kind(owner),
                 "request.userInfo.username != '' && bk in bm && request.userInfo.username in "
                 "bm[bk]"));
}

}  // namespace

std::string kueue_queue_place(const CompiledPolicy& policy) {
  // engine/kueue.cc kueue_queue_site, from the table's KueueQueue column: no site when the
  // controller is a kind gpuadmit knows (the table's, with or without templates, or a policy
  // `workloads` kind) and its controller sent the object: Kueue finds the queue on that ancestor.
  // Else a policy workload and a kPodTemplateLabels kind name it per pod template ('tpl'), a
  // kOwnLabels kind on its own metadata ('top'), a CronJob on spec.jobTemplate.metadata ('cron').
  std::vector<std::string> known, own, per_template, workloads;
  for (const WorkloadKind& k : workload_kinds()) {
    const std::string gk = std::string(k.group) + "/" + std::string(k.kind);
    known.push_back(gk);
    if (k.pod_specs.empty()) continue;
    if (k.kueue == KueueQueue::kOwnLabels) own.push_back(gk);
    if (k.kueue == KueueQueue::kPodTemplateLabels) per_template.push_back(gk);
  }
  for (const WorkloadDecl& w : policy.policy().workloads) {
    workloads.push_back(w.api_version + " " + w.kind);
  }
  const std::string owner_av = string_field("ow[0]", "apiVersion");
  const std::string owner_kind = string_field("ow[0]", "kind");
  const std::string known_owner = let(
      "ow", controller_owners(),
      "size(ow) > 0 && (" + owner_group_kind("ow[0]") + " in " + string_list(known) +
          (workloads.empty()
               ? ""
               : " || " + owner_av + " + ' ' + " + owner_kind + " in " + string_list(workloads)) +
          ") && " + sender_is_owner_controller(policy, "ow[0]"));
  const std::string policy_kind =
      workloads.empty() ? "false"
                        : "variables.av + ' ' + variables.kd in " + string_list(workloads);
  return "(" + known_owner + " ? '' : " + policy_kind +
         " ? 'tpl' : variables.gk == " + "'batch/CronJob' ? 'cron' : variables.gk in " +
         string_list(own) + " ? 'top' : variables.gk in " + string_list(per_template) +
         " ? 'tpl' : '')";
}

// kueue_queue_metadata's workload-wide site ('cron', else the object's own metadata) in
// oldObject, with `qp` bound to kueue_queue_place.
std::string old_queue_metadata() {
  return "(qp == 'cron' ? " +
         map_field(map_field(map_field("oldObject", "spec"), "jobTemplate"), "metadata") + " : " +
         map_field("oldObject", "metadata") + ")";
}

std::string queue_changed(const CompiledPolicy& policy) {
  return "request.operation == 'UPDATE' && variables.gk != '/Pod' && " +
         let("qp", kueue_queue_place(policy),
             "(qp == 'cron' || qp == 'top') && " + kueue_queue_name("qp") +
                 " != " + queue_named_in(old_queue_metadata()));
}

std::string queue_grandfathered(const CompiledPolicy& policy, std::string_view c) {
  // rules/queue_required.cc admitted_without_queue: the old template at the same place (o.id ==
  // c.id) was a GPU pod spec, asking for no fewer GPUs per pod than this one (pod_gpu_total of
  // an entry `oc` built like the ctx's, of the old template's containers and spec).
  const std::string cc(c);
  const std::string old_spec = map_field("o.t", "spec");
  const std::string not_grown =
      let("ocs", containers(policy, old_spec),
          "ocs.exists(k, k.g.exists(e, e.pa)) && " + list_field(cc + ".spec", "resourceClaims") +
              " == " + list_field(old_spec, "resourceClaims") + " && " +
              let("oc", "{'cs': dyn(ocs), 'spec': dyn(" + old_spec + ")}",
                  pod_gpu_total(policy, cc) + " <= " + pod_gpu_total(policy, "oc")));
  return "(request.operation == 'UPDATE' && (qp == 'tpl' || qp == '' || " +
         queue_named_in(old_queue_metadata()) +
         " == '') && variables.otpls.exists(o, o.id == " + cc + ".id && (qp != 'tpl' || " +
         queue_named_in(map_field("o.t", "metadata")) + " == '') && " + not_grown + "))";
}

std::string kueue_unbelieved_owner(const CompiledPolicy& policy) {
  // engine/kueue.cc kueue_unbelieved_owner: a controller of a kind Kueue integrates (the table's
  // kOwnLabels kinds), or a ReplicaSet (Kueue looks through it), that did not send the object.
  return let("ow", controller_owners(),
             "request.userInfo.username != '' && size(ow) > 0 && " + owner_group_kind("ow[0]") +
                 " in " + string_list(kueue_skipping_kinds()) + " && !(" +
                 sender_is_owner_controller(policy, "ow[0]") + ")");
}

std::string controller_released(std::string_view object, std::string_view old_object) {
  // engine/controllers.h controller_released: old_object has a controller entry and object's
  // first one is absent or differs in apiVersion, kind, name or uid.
  std::string differ;
  for (std::string_view field : {"apiVersion", "kind", "name", "uid"}) {
    differ += (differ.empty() ? "" : " || ") + string_field("cn[0]", field) +
              " != " + string_field("co[0]", field);
  }
  return let("cn", controller_owners_of(map_field(object, "metadata")),
             let("co", controller_owners_of(map_field(old_object, "metadata")),
                 "size(co) > 0 && (size(cn) == 0 || " + differ + ")"));
}

std::string child_update(const CompiledPolicy& policy) {
  // engine/kueue.cc child_update, over oldObject's controller: 2 when a controller was gained
  // (engine/controllers.h controller_gained) or a child detached (by anyone); 0 when the UPDATE
  // is not of such a child, or is its controller's own; else by someone else: 3 its spec changed
  // in anything but being suspended (never for a Pod), 1 not.
  auto is_suspended = [&](const std::string& spec) {
    return "('suspend' in " + spec + " && " + spec + ".suspend == true)";
  };
  const std::string spec_changed =
      "variables.gk != '/Pod' && " +
      let("ns", map_field("object", "spec"),
          let("os", map_field("oldObject", "spec"),
              "ns.exists(k, k != 'suspend' && (!(k in os) || ns[k] != os[k])) || os.exists(k, k "
              "!= 'suspend' && !(k in ns)) || (!" +
                  is_suspended("ns") + " && " + is_suspended("os") + ")"));
  const std::string child =
      "size(ow) > 0 && " + owner_group_kind("ow[0]") + " in " + string_list(kueue_skipping_kinds());
  return "(request.operation != 'UPDATE' || request.userInfo.username == '' ? 0 : (" +
         controller_released("oldObject", "object") + ") ? 2 : " +
         let("ow", controller_owners_of(map_field("oldObject", "metadata")),
             "!(" + child + ") ? 0 : (" + controller_released("object", "oldObject") + ") ? 2 : (" +
                 sender_is_owner_controller(policy, "ow[0]") + ") ? 0 : (" + spec_changed +
                 ") ? 3 : 1") +
         ")";
}

std::string kueue_queue_metadata(std::string_view place) {
  return "(" + std::string(place) + " == 'cron' ? " +
         map_field(map_field(map_field("object", "spec"), "jobTemplate"), "metadata") +
         " : variables.top)";
}

std::string kueue_queue_name(std::string_view place) {
  return queue_named_in(kueue_queue_metadata(place));
}

std::string queue_named_in(std::string_view metadata) {
  return string_field(map_field(std::string(metadata), "labels"), kQueueNameLabel);
}

std::string has_controller(std::string_view metadata) {
  // metav1.GetControllerOf: the ownerReferences entry with controller: true.
  return list_field(metadata, "ownerReferences") +
         ".exists(o, type(o) == map && 'controller' in o && o.controller == true)";
}

std::string runs_on_every_node(const CompiledPolicy& policy) {
  // engine/controllers.cc runs_on_every_node: a DaemonSet, or a Pod whose controller is one, in
  // a namespace of the policy's nodeAgents.namespaces.
  const std::vector<std::string>& namespaces = policy.policy().enforcement.node_agent_namespaces;
  if (namespaces.empty()) return "false";
  return "(" + namespace_in(namespaces) + " && (variables.kd == 'DaemonSet' || " +
         list_field("variables.top", "ownerReferences") + ".exists(o, type(o) == map && " +
         string_field("o", "kind") +
         " == 'DaemonSet' && 'controller' in o && o.controller == true)))";
}

}  // namespace cel
}  // namespace gpuadmit::render::native
