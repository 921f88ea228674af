#include "rules/config_documents.h"

#include "yaml/reader.h"

namespace gpuadmit::rule_support {
namespace {

// The first document of `text` as JSON; null when it does not parse or is not a mapping.
Json parse_mapping(const std::string& text) {
  yaml::DocumentStream stream{std::string_view(text)};
  yaml::SourceDocument source;
  if (!stream.next(source)) return nullptr;
  yaml::ParsedDocument parsed = yaml::parse_document(source, /*json_file=*/false);
  if (parsed.error || !parsed.value.is_object()) return nullptr;
  return std::move(parsed.value);
}

bool has_version_v1(const Json& value) {
  return value.is_object() && string_member(value, "version") == "v1";
}

}  // namespace

bool is_config_map(std::string_view api_version, std::string_view kind) {
  return api_version == "v1" && kind == "ConfigMap";
}

std::vector<EmbeddedConfig> config_documents(const Json& object) {
  std::vector<EmbeddedConfig> out;
  if (!is_config_map(string_member(object, "apiVersion"), string_member(object, "kind"))) {
    if (object.is_object()) out.push_back({"", "", object});
    return out;
  }
  const Json* data = find_member(object, "data");
  if (data == nullptr || !data->is_object()) return out;
  for (auto it = data->begin(); it != data->end(); ++it) {
    if (!it.value().is_string()) continue;
    Json value = parse_mapping(it.value().get_ref<const std::string&>());
    if (value.is_null()) continue;
    out.push_back({it.key(), "data[\"" + it.key() + "\"]", std::move(value)});
  }
  return out;
}

bool is_device_plugin_config(const Json& value) {
  return has_version_v1(value) &&
         (find_member(value, "flags") != nullptr || find_member(value, "sharing") != nullptr);
}

bool is_mig_parted_config(const Json& value) {
  return has_version_v1(value) && find_member(value, "mig-configs") != nullptr;
}

std::string member_path(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return std::string(prefix) + "." + std::string(key);
}

}  // namespace gpuadmit::rule_support
