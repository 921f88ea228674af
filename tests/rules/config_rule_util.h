#pragma once
// For the config rules' tests (GPU028–GPU030): objects written as YAML, as platform teams keep
// them, and the shared corpus' real configurations.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/rules/rule_test_util.h"
#include "yaml/reader.h"

namespace gpuadmit::testing {

// The first document of `text` as JSON (the test fails when it does not parse).
inline Json yaml_object(const std::string& text) {
  yaml::DocumentStream stream{std::string_view(text)};
  yaml::SourceDocument source;
  REQUIRE(stream.next(source));
  yaml::ParsedDocument parsed = yaml::parse_document(source, false);
  INFO(text);
  REQUIRE_FALSE(parsed.error);
  return parsed.value;
}

// A file of the shared corpus (corpus/SOURCES.md), as its first document's JSON.
inline Json corpus_object(const std::string& relative) {
  std::ifstream in(std::string(GPUADMIT_SHARED_DIR) + "/corpus/" + relative, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return yaml_object(text.str());
}

// Every violation as "<path> | <message>".
inline std::vector<std::string> check_config(const DocumentRule& rule, const PolicyPtr& policy,
                                             const Json& object) {
  std::vector<Violation> violations;
  rule.check(object, DocumentContext{policy.get(), "gpu-operator"}, violations);
  std::vector<std::string> out;
  for (const Violation& v : violations) out.push_back(v.path + " | " + v.message);
  return out;
}

// A ConfigMap named `name` whose data holds `entries` (key, YAML text) pairs.
inline Json config_map(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& entries) {
  Json data = Json::object();
  for (const auto& [key, text] : entries) data[key] = text;
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}}},
              {"data", std::move(data)}};
}

}  // namespace gpuadmit::testing
