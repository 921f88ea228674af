// The memoized evaluation (one pipeline run per distinct template) gives exactly the groups of
// one run per object: on the shared corpus and on pods that differ only in per-pod members.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/fleet/fleet_test_util.h"

namespace gpuadmit::fleet {
namespace memo_test {
namespace {

namespace fs = std::filesystem;

// Every field of every group, workloads included, as one comparable string per group.
std::vector<std::string> describe(const FleetInput& input) {
  std::vector<std::string> out;
  for (const PodGroup& g : input.groups) {
    const Workload& w = input.workloads[g.workload];
    std::string mig;
    for (const auto& [profile, n] : g.mig) mig += profile + "=" + std::to_string(n) + ",";
    out.push_back(input.files[w.file] + ":" + std::to_string(w.line) + " " + w.kind + " " + w.ns +
                  "/" + w.name + " " + w.tenant + " " + g.path + " pods=" + std::to_string(g.pods) +
                  " class=" + g.class_name + " blocked=" + std::string(reason_text(g.blocked)) +
                  " gpus=" + std::to_string(g.gpus) + " units=" + std::to_string(g.units) +
                  " mig=" + mig);
  }
  return out;
}

FleetInput collect_files(const std::vector<std::string>& files, bool memoize, size_t* evaluations,
                         std::string_view policy_yaml = testing::kPolicy) {
  static const Pipeline pipeline(default_mutators(), default_rules());
  const PolicyPtr policy = testing::test_policy(policy_yaml);
  Collector collector(*policy, pipeline, "default", memoize);
  std::vector<InputError> errors;
  for (const std::string& f : files) read_file(f, collector, errors);
  *evaluations = collector.evaluations();
  return collector.finish();
}

TEST_CASE("fleet memo: the shared corpus gives the same groups memoized and not") {
  std::vector<std::string> files;
  for (const auto& e :
       fs::recursive_directory_iterator(std::string(GPUADMIT_SHARED_DIR) + "/corpus")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 50);
  // Under the test policy and under the shipped default policy.
  const std::string default_policy(default_policy_text());
  for (std::string_view policy : {testing::kPolicy, std::string_view(default_policy)}) {
    size_t memo_evaluations = 0, direct_evaluations = 0;
    const FleetInput memo = collect_files(files, true, &memo_evaluations, policy);
    const FleetInput direct = collect_files(files, false, &direct_evaluations, policy);
    CHECK(describe(memo) == describe(direct));
    CHECK(memo.groups.size() > 20);
    CHECK(memo_evaluations <= direct_evaluations);
  }
}

TEST_CASE("fleet memo: pods of one template are evaluated once, whatever their per-pod members") {
  // 50 Pods of one template that differ in name, nodeName, hostname and their token volume;
  // 50 more with another class annotation. Two evaluations instead of 100, the same groups.
  std::string pods;
  for (int i = 0; i < 100; ++i) {
    const std::string n = std::to_string(i);
    pods += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p" + n +
            "\n  namespace: ml-a\n  annotations: {gpuadmit.io/class: " + (i < 50 ? "a100" : "l4") +
            "}\nspec:\n  nodeName: node-" + n + "\n  hostname: h" + n +
            "\n  volumes: [{name: kube-api-access-" + n +
            ", projected: {sources: []}}]\n  containers:\n  - name: c\n    image: i\n"
            "    volumeMounts: [{name: kube-api-access-" +
            n + ", mountPath: /var/run/secrets}]\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
  }
  const auto memo = testing::run_fleet(pods, true);
  const auto direct = testing::run_fleet(pods, false);
  CHECK(memo.evaluations == 2);
  CHECK(direct.evaluations == 100);
  CHECK(describe(memo.input) == describe(direct.input));
  CHECK(testing::class_report(memo, "a100").packing.placed == 32);  // 4 × 8, 18 left over
  CHECK(testing::class_report(memo, "l4").packing.placed == 32);    // 2 × 16 replicas
  CHECK(memo.report.unplaceable_pods == 18 + 18);
}

}  // namespace
}  // namespace memo_test
}  // namespace gpuadmit::fleet
