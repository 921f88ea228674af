#include "render/native_static.h"

namespace gpuadmit::render::native {
namespace {

constexpr std::string_view kAdmissionApi = "admissionregistration.k8s.io/v1";
constexpr std::string_view kConfigApi = "apiserver.config.k8s.io/v1";

bool is_binding(const Json& object) { return object.value("kind", "").ends_with("Binding"); }

// The plugin's section of the AdmissionConfiguration (k8s.io/apiserver
// pkg/admission/plugin/policy/config/apis/policyconfig/v1 types.go).
Json plugin_configuration(std::string_view plugin, const std::string& dir) {
  return {{"name", plugin},
          {"configuration",
           {{"apiVersion", kConfigApi},
            {"kind", std::string(plugin) + "Configuration"},
            {"staticManifestsDir", dir}}}};
}

}  // namespace

Expected<StaticManifests, std::string> static_manifests(const std::vector<Json>& policies,
                                                        const std::string& root) {
  if (!root.starts_with("/")) {
    return Unexpected<std::string>(
        "the static manifests' directory must be an absolute path (the API "
        "server's staticManifestsDir), not \"" +
        root + "\"");
  }
  StaticManifests out;
  for (Json object : policies) {
    const std::string kind = object.value("kind", "");
    const bool mutating = kind.starts_with("Mutating");
    if (!mutating && !kind.starts_with("Validating")) continue;
    if (object.value("apiVersion", "") != kAdmissionApi) {
      return Unexpected<std::string>(
          "manifest-based admission loads only " + std::string(kAdmissionApi) + " objects, not " +
          kind + " " + object.value("apiVersion", "") + " (leave out --native-api v1beta1)");
    }
    object["metadata"]["name"] =
        object["metadata"]["name"].get<std::string>() + std::string(kStaticSuffix);
    if (is_binding(object)) {
      object["spec"]["policyName"] =
          object["spec"]["policyName"].get<std::string>() + std::string(kStaticSuffix);
    }
    (mutating ? out.mutating : out.validating).push_back(std::move(object));
  }
  const std::string base = root.ends_with("/") ? root : root + "/";
  Json plugins = Json::array();
  if (!out.validating.empty()) {
    plugins.push_back(plugin_configuration("ValidatingAdmissionPolicy",
                                           base + std::string(kStaticValidatingDir)));
  }
  if (!out.mutating.empty()) {
    plugins.push_back(
        plugin_configuration("MutatingAdmissionPolicy", base + std::string(kStaticMutatingDir)));
  }
  out.admission_configuration = {{"apiVersion", kConfigApi},
                                 {"kind", "AdmissionConfiguration"},
                                 {"plugins", std::move(plugins)}};
  return out;
}

}  // namespace gpuadmit::render::native
