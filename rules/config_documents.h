#pragma once
// The GPU stack's configurations that the config rules (GPU028–GPU030) read, wherever platform
// teams keep them: as a document of their own (a device plugin config file, a mig-parted
// config, a KubeSchedulerConfiguration), or as values of a ConfigMap's `data` — the GPU
// Operator's `devicePlugin.config` ConfigMap (one key per node configuration, selected by the
// node label `nvidia.com/device-plugin.config`), its `default-mig-parted-config` (`config.yaml`),
// a scheduler's config mounted from a ConfigMap.
//
//   for (const EmbeddedConfig& c : config_documents(object))
//     if (is_device_plugin_config(c.value)) ...   // c.path: "data[\"any\"]", or "" for the
//     document

#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"

namespace gpuadmit::rule_support {

struct EmbeddedConfig {
  std::string key;   // the ConfigMap's data key; "" for the document itself
  std::string path;  // where it is: `data["<key>"]`, or "" for the document itself
  Json value;        // a JSON object (values that do not parse as one are left out)
};

// A ConfigMap (v1) gives each `data` value that parses as a YAML or JSON mapping, in key order;
// any other object gives itself.
std::vector<EmbeddedConfig> config_documents(const Json& object);

bool is_config_map(std::string_view api_version, std::string_view kind);

// The NVIDIA device plugin's config file (k8s-device-plugin api/config/v1: `version: v1` and
// `flags` or `sharing`).
bool is_device_plugin_config(const Json& value);

// A mig-parted config file (`version: v1` and `mig-configs`).
bool is_mig_parted_config(const Json& value);

// The member `path` (prefix + "." + key), for messages: "data[\"any\"].sharing" or "sharing".
std::string member_path(std::string_view prefix, std::string_view key);

}  // namespace gpuadmit::rule_support
