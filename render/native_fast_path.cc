#include "render/native_fast_path.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/gpu_visibility.h"
#include "engine/pod_update.h"
#include "render/native_cel.h"
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

// JSON Patch adds of NVIDIA_VISIBLE_DEVICES=void to the containers of `list` (a plain Pod's:
// maps whose env is absent, null or a list of named maps) that do not name it.
std::string hide_in(std::string_view list) {
  const std::string f(list);
  const std::string items = "object.spec." + f;
  const std::string entry =
      "{'name': " + quote(kVisibleDevicesEnv) + ", 'value': " + quote(kNoVisibleDevices) + "}";
  const std::string has_env = "('env' in k && k.env != null)";
  const std::string path = "'/spec/" + f + "/' + string(i) + '/env'";
  return "(('" + f + "' in object.spec && type(" + items + ") == list) ? " + items +
         ".transformList(i, k, !(" + has_env +
         " && k.env.exists(v, v.name == " + quote(kVisibleDevicesEnv) + ")), " + has_env +
         " ? JSONPatch{op: 'add', path: " + path + " + '/-', value: " + entry +
         "} : JSONPatch{op: 'add', path: " + path + ", value: [" + entry + "]}) : [])";
}

}  // namespace

// Exemption native-plain-pod (docs/security.md): a plain Pod skips the full native policies.
std::string plain_pod(const CompiledPolicy& policy) {
  std::string pod = "request.kind.group == '' && request.kind.kind == 'Pod'";
  const std::vector<std::string>& agents = policy.policy().enforcement.node_agent_namespaces;
  if (!agents.empty()) pod += " && !(" + namespace_in(agents) + ")";
  return "(" + pod + " && type(object) == map && 'spec' in object && type(object.spec) == map && " +
         let("s", "object.spec", plain_spec(policy)) + " && " +
         let("md", map_field("object", "metadata"), plain_metadata()) + ")";
}

std::optional<Json> plain_pod_mutation(const CompiledPolicy& policy) {
  if (policy.policy().enforcement.gpu_visibility != Action::kFix) return std::nullopt;
  std::string ops = hide_in("initContainers") + " + " + hide_in("containers") + " + " +
                    hide_in("ephemeralContainers");
  const std::vector<Tenant>& ts = policy.policy().tenants;
  if (std::any_of(ts.begin(), ts.end(), [](const Tenant& t) { return !t.enforcement.mutate; })) {
    ops = "'nm' in variables.t ? [] : (" + ops + ")";
  }
  return Json{{"patchType", "JSONPatch"}, {"jsonPatch", {{"expression", ops}}}};
}

}  // namespace gpuadmit::render::native
