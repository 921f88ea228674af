#pragma once
// Test-only: the live fleet of tests/fleet/data (live-fleet.yaml, live-policy.yaml, the corpus's
// MIG node) and a way to run exports through `gpuadmit fleet --live`'s reading and report.

#include <string>
#include <string_view>
#include <vector>

#include "fleet/live_collect.h"
#include "fleet/live_read.h"
#include "fleet/live_report.h"
#include "policies/compiled_policy.h"
#include "policies/loader.h"
#include "tests/support/process.h"
#include "yaml/reader.h"

namespace gpuadmit::fleet::testing {

inline const std::string kData = std::string(GPUADMIT_SOURCE_DIR) + "/tests/fleet/data/";
inline const std::string kCorpus = std::string(GPUADMIT_SHARED_DIR) + "/corpus/";

inline PolicyPtr live_policy(std::string_view yaml = {}) {
  const std::string text =
      yaml.empty() ? gpuadmit::testing::slurp(kData + "live-policy.yaml") : std::string(yaml);
  PolicyLoadResult loaded = load_policy(text, "live-policy.yaml");
  if (!loaded.ok()) throw std::runtime_error("live policy: " + loaded.errors[0].to_string());
  return CompiledPolicy::compile(std::move(*loaded.policy));
}

// The hand-computed fleet: the List and the corpus's real MIG mixed node after it.
inline std::string live_fleet_yaml() {
  return gpuadmit::testing::slurp(kData + "live-fleet.yaml") + "---\n" +
         gpuadmit::testing::slurp(kCorpus + "configs/fake-gpu-operator__4_instances.yaml");
}

// The same objects as one JSON List with kubectl's indentation (json.MarshalIndent, 4 spaces).
inline std::string as_json_list(const std::string& yaml) {
  Json items = Json::array();
  yaml::DocumentStream stream{std::string_view(yaml)};
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, false);
    if (doc.empty) continue;
    if (doc.error) throw std::runtime_error("test YAML: " + doc.error->message);
    if (string_member(doc.value, "kind") == "List") {
      for (Json& item : doc.value["items"]) items.push_back(std::move(item));
    } else {
      items.push_back(std::move(doc.value));
    }
  }
  Json list = {{"apiVersion", "v1"},
               {"items", std::move(items)},
               {"kind", "List"},
               {"metadata", {{"resourceVersion", ""}}}};
  return list.dump(4) + "\n";
}

struct LiveRun {
  PolicyPtr policy;
  LiveInput input;
  LiveReport report;
  std::vector<InputError> errors;
};

inline LiveRun run_live(const std::string& text, PolicyPtr policy = live_policy()) {
  LiveRun r;
  r.policy = std::move(policy);
  LiveCollector collector(*r.policy);
  read_live_text(text, "export", collector, r.errors);
  r.errors.insert(r.errors.end(), collector.errors().begin(), collector.errors().end());
  r.input = collector.finish();
  r.report = build_live_report(r.input, *r.policy);
  return r;
}

inline const LiveClassReport& live_class(const LiveRun& r, std::string_view name) {
  for (const LiveClassReport& c : r.report.classes) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no class " + std::string(name));
}

inline const LiveNodeReport& live_node(const LiveRun& r, std::string_view name) {
  for (const LiveNodeReport& n : r.report.nodes) {
    if (r.input.nodes[n.node].name == name) return n;
  }
  throw std::runtime_error("no node " + std::string(name));
}

inline const PendingEntry& pending(const LiveRun& r, std::string_view name) {
  for (const PendingEntry& e : r.report.pending) {
    if (r.input.pods[e.pod].name == name) return e;
  }
  throw std::runtime_error("no pending pod " + std::string(name));
}

}  // namespace gpuadmit::fleet::testing
