#pragma once
// Test-only: every document of a YAML file as Json (via yaml-cpp), for tests that need real
// manifests but not lint's reader. Scalars: quoted stay strings; plain ones become null, bool,
// integer or float by YAML 1.2 core rules, else strings.

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/json.h"

namespace gpuadmit::testing {

inline Json yaml_node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_node_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(yaml_node_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted
      if (s == "null" || s == "~" || s.empty()) return nullptr;
      if (s == "true") return true;
      if (s == "false") return false;
      Json number = Json::parse(s, nullptr, false);
      if (!number.is_discarded() && number.is_number()) return number;
      return s;
    }
    default:
      return nullptr;
  }
}

inline std::vector<Json> yaml_file_documents(const std::string& path) {
  std::vector<Json> docs;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(path)) {
    if (doc.IsNull()) continue;
    docs.push_back(yaml_node_to_json(doc));
  }
  return docs;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpuadmit::testing
