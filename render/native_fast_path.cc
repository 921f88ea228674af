#include "render/native_fast_path.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "engine/gpu_visibility.h"
#include "engine/pod_update.h"
#include "engine/workload_kinds.h"
#include "render/native_cel.h"
#include "render/native_model.h"
#include "render/native_tenants.h"

namespace gpuadmit::render::native {
namespace {

// The prefix of the workload settings (gpuadmit.io/class, mig-profile, workload: engine/context.cc)
// and of gpuadmit's other annotations.
constexpr std::string_view kSettingsPrefix = "gpuadmit.io/";
// nvidia-container-toolkit's device-list root without its parent (engine/gpu_visibility.h
// kDeviceListMountRoot): filepath.Clean keeps path elements as written, so a mountPath that cleans
// to a path under the root holds this element's name.
constexpr std::string_view kDeviceListElement = "nvidia-container-devices";

// `m[f]` is absent or null, for a quoted key f (or a CEL string variable).
std::string absent(std::string_view m, std::string_view f) {
  const std::string mm(m), ff(f);
  return "(!(" + ff + " in " + mm + ") || " + mm + "[" + ff + "] == null)";
}

// An empty list, absent or null.
std::string no_items(std::string_view m, std::string_view f) {
  const std::string v = std::string(m) + "[" + std::string(f) + "]";
  return "(" + absent(m, f) + " || (type(" + v + ") == list && size(" + v + ") == 0))";
}

// A resource map naming only the resources no GPU rule reads (a GPU resource always has a domain
// prefix in the policy; these are Kubernetes' own names).
std::string plain_resource_names(std::string_view v) {
  const std::string vv(v);
  return "(type(" + vv + ") == map && " + vv +
         ".all(n, n in ['cpu', 'memory', 'ephemeral-storage'] || n.startsWith('hugepages-')))";
}

// A container (CEL variable k) no rule reads anything of but its name: see the header.
std::string plain_container() {
  const std::string resources = "(" + absent("k", "'resources'") +
                                " || (type(k.resources) == map && k.resources.all(rf, rf in "
                                "['requests', 'limits'] ? (k.resources[rf] == null || " +
                                plain_resource_names("k.resources[rf]") +
                                ") : (rf == 'claims' && " + no_items("k.resources", "rf") + "))))";
  const std::string visible = quote(kVisibleDevicesEnv);
  const std::string env =
      "(" + absent("k", "'env'") +
      " || (type(k.env) == list && k.env.all(v, type(v) == map && 'name' in v && type(v.name) == "
      "string && (v.name != " +
      visible + " || (size(v) == 2 && 'value' in v && type(v.value) == string && v.value == " +
      quote(kNoVisibleDevices) + ")))))";
  const std::string mounts = "(" + absent("k", "'volumeMounts'") +
                             " || (type(k.volumeMounts) == list && k.volumeMounts.all(m, type(m) "
                             "== map && 'mountPath' in m "
                             "&& type(m.mountPath) == string && !m.mountPath.contains(" +
                             quote(kDeviceListElement) + "))))";
  const std::string privileged =
      "(" + absent("k", "'securityContext'") + " || (type(k.securityContext) == map && (" +
      absent("k.securityContext", "'privileged'") +
      " || (type(k.securityContext.privileged) == bool && !k.securityContext.privileged))))";
  return "(type(k) == map && " + resources + " && " + env + " && " + no_items("k", "'envFrom'") +
         " && " + mounts + " && " + privileged + ")";
}

std::vector<std::string> taint_keys(const CompiledPolicy& policy) {
  std::vector<std::string> keys;
  for (const GpuClass& c : policy.policy().classes) {
    for (const Taint& t : c.taints) {
      if (std::find(keys.begin(), keys.end(), t.key) == keys.end()) keys.push_back(t.key);
    }
  }
  return keys;
}

std::vector<std::string> label_keys(const CompiledPolicy& policy) {
  std::vector<std::string> keys;
  for (const GpuClass& c : policy.policy().classes) {
    for (const auto& [key, values] : c.node_selector) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  return keys;
}

// The pod spec (CEL variable s) places the pod nowhere near a GPU pool and asks for nothing a
// rule reads.
std::string plain_spec(const CompiledPolicy& policy) {
  const std::string containers = "['initContainers', 'containers', 'ephemeralContainers'].all(f, " +
                                 absent("s", "f") + " || (type(s[f]) == list && s[f].all(k, " +
                                 plain_container() + ")))";
  const std::string tolerations =
      "(" + absent("s", "'tolerations'") +
      " || (type(s.tolerations) == list && s.tolerations.all(t, type(t) == map && 'key' in t && "
      "type(t.key) == string && t.key != '' && !(t.key in " +
      string_list(taint_keys(policy)) + "))))";
  const std::string selector =
      "(" + absent("s", "'nodeSelector'") +
      " || (type(s.nodeSelector) == map && !s.nodeSelector.exists(n, n in " +
      string_list(label_keys(policy)) + ")))";
  const std::string affinity = "(" + absent("s", "'affinity'") +
                               " || (type(s.affinity) == map && " +
                               absent("s.affinity", "'nodeAffinity'") + "))";
  const std::string runtime_class = "(" + absent("s", "'runtimeClassName'") +
                                    " || (type(s.runtimeClassName) == string && "
                                    "s.runtimeClassName == ''))";
  const std::string overhead =
      "(" + absent("s", "'overhead'") + " || " + plain_resource_names("s.overhead") + ")";
  // GPU024's hostPath device nodes (/dev/nvidia*, /dev/dri, /dev, /): a pod with no hostPath
  // volume mounts none.
  const std::string host_paths =
      "(" + absent("s", "'volumes'") +
      " || (type(s.volumes) == list && s.volumes.all(v, type(v) == map && " +
      absent("v", "'hostPath'") + ")))";
  return all_of({containers, host_paths, absent("s", "'resources'"), overhead,
                 no_items("s", "'resourceClaims'"), runtime_class, tolerations, selector,
                 affinity});
}

std::string plain_metadata() {
  const std::string settings = quote(kSettingsPrefix);
  const std::string annotations =
      "(" + absent("md", "'annotations'") +
      " || (type(md.annotations) == map && !md.annotations.exists(a, a.startsWith(" + settings +
      ") || a.startsWith(" + quote(kCdiAnnotationPrefix) + "))))";
  const std::string labels = "(" + absent("md", "'labels'") +
                             " || (type(md.labels) == map && !md.labels.exists(a, a.startsWith(" +
                             settings + "))))";
  return "(" + annotations + " && " + labels + ")";
}

// A built-in kind with one pod template at a fixed path (the workload table's apps and batch
// kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob).
struct TemplateSite {
  std::string group, kind, resource;
  std::vector<std::string> path;  // to the PodTemplateSpec: {"spec", "template"}
  bool immutable = false;         // TemplateUpdates::kImmutable: never patched on UPDATE
};

std::vector<TemplateSite> template_sites() {
  std::vector<TemplateSite> out;
  for (const WorkloadKind& k : workload_kinds()) {
    if ((k.group != "apps" && k.group != "batch") || k.pod_specs.size() != 1) continue;
    const std::string_view spec = k.pod_specs[0].spec;
    if (spec.find('*') != std::string_view::npos || !spec.ends_with(".spec")) continue;
    TemplateSite site{std::string(k.group),
                      std::string(k.kind),
                      std::string(k.resource),
                      {},
                      k.template_updates == TemplateUpdates::kImmutable};
    std::string_view rest = spec.substr(0, spec.size() - 5);
    for (size_t dot; (dot = rest.find('.')) != std::string_view::npos;
         rest.remove_prefix(dot + 1)) {
      site.path.emplace_back(rest.substr(0, dot));
    }
    site.path.emplace_back(rest);
    out.push_back(std::move(site));
  }
  return out;
}

// CEL: the member at `path` under `root`, {} where a step is absent or not an object.
std::string member_at(std::string_view root, const std::vector<std::string>& path) {
  std::string at(root);
  for (const std::string& step : path) at = map_field(at, step);
  return at;
}

std::string pointer_of(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& step : path) out += "/" + step;
  return out;
}

// `request.kind` is the site's (the Pod's when `site` is null).
std::string kind_is(const TemplateSite* site) {
  if (site == nullptr) return "(request.kind.group == '' && request.kind.kind == 'Pod')";
  return "(request.kind.group == " + quote(site->group) +
         " && request.kind.kind == " + quote(site->kind) + ")";
}

// The sites grouped by their template's path, each with the test of request.kind.
struct PathSites {
  std::vector<std::string> path;
  std::string kind_test;
};
std::vector<PathSites> sites_by_path() {
  std::vector<PathSites> out;
  for (const TemplateSite& site : template_sites()) {
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const PathSites& p) { return p.path == site.path; });
    if (same == out.end()) {
      out.push_back({site.path, kind_is(&site)});
    } else {
      same->kind_test += " || " + kind_is(&site);
    }
  }
  return out;
}

// One CEL value per kind: the Pod's for a Pod, each path's for its kinds, `otherwise` for the
// rest; `of(path)` makes a path's ({} for the Pod).
std::string per_kind(const std::function<std::string(const std::vector<std::string>&)>& of,
                     const std::string& otherwise) {
  std::string out = otherwise;
  const std::vector<PathSites> sites = sites_by_path();
  for (auto s = sites.rbegin(); s != sites.rend(); ++s) {
    out = "(" + s->kind_test + ") ? " + of(s->path) + " : (" + out + ")";
  }
  return kind_is(nullptr) + " ? " + of({}) + " : (" + out + ")";
}

// The object's own metadata and every metadata on the way to its template, as a CEL list (a
// setting may be read from the object's metadata or a template's).
std::string metadata_along(const std::vector<std::string>& path) {
  std::vector<std::string> items = {map_field("object", "metadata")};
  for (size_t n = 1; n <= path.size(); ++n) {
    const std::vector<std::string> prefix(path.begin(), path.begin() + static_cast<long>(n));
    items.push_back(map_field(member_at("object", prefix), "metadata"));
  }
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return "[" + out + "]";
}

// JSON Patch adds of NVIDIA_VISIBLE_DEVICES=void to the containers of `list` of the plain pod
// spec `sp` (its containers are maps whose env is absent, null or a list of named maps) at JSON
// pointer `pp` (a CEL string), to those that do not name it.
std::string hide_in(std::string_view list) {
  const std::string f(list);
  const std::string entry =
      "{'name': " + quote(kVisibleDevicesEnv) + ", 'value': " + quote(kNoVisibleDevices) + "}";
  const std::string has_env = "('env' in k && k.env != null)";
  const std::string path = "pp + '/" + f + "/' + string(i) + '/env'";
  return "(('" + f + "' in sp && type(sp." + f + ") == list) ? sp." + f +
         ".transformList(i, k, !(" + has_env +
         " && k.env.exists(v, v.name == " + quote(kVisibleDevicesEnv) + ")), " + has_env +
         " ? JSONPatch{op: 'add', path: " + path + " + '/-', value: " + entry +
         "} : JSONPatch{op: 'add', path: " + path + ", value: [" + entry + "]}) : [])";
}

}  // namespace

// Exemption native-plain-object (docs/security.md): a plain object skips the full native
// policies.
std::string plain_object(const CompiledPolicy& policy) {
  // The Pod, or the kind's PodTemplateSpec; null for any other kind.
  const std::string parent = per_kind(
      [](const std::vector<std::string>& path) { return member_at("object", path); }, "null");
  const std::string metadata = per_kind(metadata_along, "[]");
  std::string out = "type(object) == map && " +
                    let("ps", parent,
                        "(type(ps) == map && 'spec' in ps && type(ps.spec) == map && " +
                            let("s", "ps.spec", plain_spec(policy)) + ")") +
                    " && (" + metadata + ").all(md, " + plain_metadata() + ")";
  const std::vector<std::string>& agents = policy.policy().enforcement.node_agent_namespaces;
  if (!agents.empty()) out = "!(" + namespace_in(agents) + ") && " + out;
  return "(" + out + ")";
}

std::string mutated_now() {
  // docs/decisions.md, "Controllers converge": a Pod always; a workload's template never in a
  // copy (an object with a controller), on UPDATE only when it changed, and never an immutable
  // one (the policy's rules admit those kinds on CREATE only).
  std::vector<std::string> changed;
  for (const PathSites& p : sites_by_path()) {
    std::vector<std::string> mutable_kinds;
    for (const TemplateSite& site : template_sites()) {
      if (site.path == p.path && !site.immutable) mutable_kinds.push_back(kind_is(&site));
    }
    if (mutable_kinds.empty()) continue;
    changed.push_back("(" + any_of(mutable_kinds) + " && " + member_at("object", p.path) +
                      " != " + member_at("oldObject", p.path) + ")");
  }
  return kind_is(nullptr) + " || (!" + cel::has_controller(map_field("object", "metadata")) +
         " && (request.operation == 'CREATE' || " + any_of(changed) + "))";
}

Json plain_object_rules() {
  Json rules = Json::array({{{"apiGroups", {""}},
                             {"apiVersions", {"v1"}},
                             {"operations", {"CREATE"}},
                             {"resources", {"pods"}},
                             {"scope", "Namespaced"}}});
  for (const TemplateSite& site : template_sites()) {
    Json operations = site.immutable ? Json::array({"CREATE"}) : Json::array({"CREATE", "UPDATE"});
    rules.push_back({{"apiGroups", {site.group}},
                     {"apiVersions", {"v1"}},
                     {"operations", operations},
                     {"resources", {site.resource}},
                     {"scope", "Namespaced"}});
  }
  return rules;
}

std::optional<Json> plain_object_mutation(const CompiledPolicy& policy) {
  if (policy.policy().enforcement.gpu_visibility != Action::kFix) return std::nullopt;
  // The pod spec and its JSON pointer, by kind; the object is plain, so it has one.
  const std::string spec = per_kind(
      [](const std::vector<std::string>& path) {
        return path.empty() ? std::string("object.spec") : member_at("object", path) + ".spec";
      },
      "{}");
  const std::string pointer = per_kind(
      [](const std::vector<std::string>& path) { return quote(pointer_of(path) + "/spec"); }, "''");
  std::string ops = let("sp", spec,
                        let("pp", pointer,
                            hide_in("initContainers") + " + " + hide_in("containers") + " + " +
                                hide_in("ephemeralContainers")));
  const std::vector<Tenant>& ts = policy.policy().tenants;
  if (std::any_of(ts.begin(), ts.end(), [](const Tenant& t) { return !t.enforcement.mutate; })) {
    ops = "'nm' in variables.t ? [] : (" + ops + ")";
  }
  return Json{{"patchType", "JSONPatch"}, {"jsonPatch", {{"expression", ops}}}};
}

}  // namespace gpuadmit::render::native
