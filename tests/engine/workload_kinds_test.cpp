// The one table of workload kinds (engine/workload_kinds.h) against what reads it and what it
// mirrors: the replica counts the engine multiplies, the controllers it names, Kueue's
// integrations, and the generated table of docs/workloads.md (render's rules and the chart's are
// held to it by tests/render/render_test.cpp and tests/k8s/chart_test.mjs).

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/workload.h"
#include "engine/workload_kinds.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace workload_kinds_test {
namespace {

PolicyPtr no_workloads() { return testing::amd_gpu_policy(); }

std::vector<std::string> split(std::string_view pattern) {
  std::vector<std::string> tokens;
  while (!pattern.empty()) {
    const size_t dot = pattern.find('.');
    tokens.emplace_back(pattern.substr(0, dot));
    pattern = dot == std::string_view::npos ? "" : pattern.substr(dot + 1);
  }
  return tokens;
}

// Builds the object path by path: a list gets one element, a map of roles the key "r".
Json& at_pattern(Json& root, std::string_view pattern) {
  Json* node = &root;
  for (std::string token : split(pattern)) {
    const bool list = token.size() > 3 && token.substr(token.size() - 3) == "[*]";
    if (list) token.resize(token.size() - 3);
    if (token == "*") token = "r";
    node = &(*node)[token];
    if (list) {
      if (!node->is_array()) *node = Json::array({Json::object()});
      node = &(*node)[0];
    }
  }
  return *node;
}

// Each kind's counts set to distinct primes: the replicas of each pod template are the product
// the table names, so a count path that resolves to the wrong place (or a wildcard outside the
// pod template's path) shows.
TEST_CASE(
    "workload kinds: each pod template's replicas are the product of the counts the table "
    "names") {
  const PolicyPtr policy = no_workloads();
  const int64_t primes[] = {3, 5, 7, 11};
  for (const WorkloadKind& kind : workload_kinds()) {
    for (const PodTemplatePath& path : kind.pod_specs) {
      INFO(kind.kind << " " << path.spec);
      Json object = {{"apiVersion", kind.group.empty() ? "v1" : std::string(kind.group) + "/v1"},
                     {"kind", kind.kind}};
      at_pattern(object, path.spec) = {{"containers", Json::array()}};
      int64_t expected = 1;
      size_t i = 0;
      for (const ReplicaCount& count : path.counts) {
        const int64_t n = primes[i++];
        switch (count.rule) {
          case CountRule::kValue:
            at_pattern(object, count.path) = n;
            expected *= n;
            break;
          case CountRule::kJobSpec: {  // parallelism n, completions n + 2: n pods at once
            Json& spec = at_pattern(object, count.path);
            spec["parallelism"] = n;
            spec["completions"] = n + 2;
            expected *= n;
            break;
          }
          case CountRule::kRayGroup: {  // n groups of 2 hosts
            Json& group = at_pattern(object, count.path);
            group["replicas"] = n;
            group["numOfHosts"] = 2;
            expected *= n * 2;
            break;
          }
          case CountRule::kLwsGroup:  // groups of n pods, one the leader
            at_pattern(object, count.path) = n;
            expected *= n - 1;
            break;
        }
      }
      // The pointer at_pattern built for the pod template.
      JsonPointer where;
      for (std::string t : split(path.spec)) {
        const bool list = t.size() > 3 && t.substr(t.size() - 3) == "[*]";
        if (list) t.resize(t.size() - 3);
        where /= t == "*" ? std::string("r") : t;
        if (list) where /= std::string("0");
      }
      bool seen = false;
      for (const PodSpecLocation& loc : find_pod_specs(object, *policy)) {
        if (loc.spec != where) continue;
        seen = true;
        CHECK(loc.replicas == expected);
      }
      CHECK(seen);
    }
  }
}

TEST_CASE("workload kinds: one row per group and kind, and controllers are kinds of the table") {
  std::set<std::pair<std::string_view, std::string_view>> rows;
  for (const WorkloadKind& kind : workload_kinds()) {
    INFO(kind.group << " " << kind.kind);
    CHECK(rows.emplace(kind.group, kind.kind).second);
    CHECK(find_workload_kind(kind.group.empty() ? "v1" : std::string(kind.group) + "/v1beta9",
                             kind.kind) == &kind);  // any version
    CHECK(known_kind_name(kind.kind) == kind.kind);
    for (const KindRef& parent : kind.controllers) {
      INFO("controller " << parent.group << " " << parent.kind);
      CHECK(find_workload_kind(parent.group.empty() ? "v1" : std::string(parent.group) + "/v1",
                               parent.kind) != nullptr);
    }
  }
  CHECK(known_kind_name("TrainingRun").empty());
}

// kueue pkg/controller/jobs/*: the integrations Kueue registers (RegisterIntegration, each with
// its GVK), which read the queue from the object's own labels; everything else's pods are its
// pod integration's, but for the CronJob's Jobs.
TEST_CASE("workload kinds: Kueue's integrations read their own labels") {
  const std::set<std::pair<std::string_view, std::string_view>> integrations = {
      {"", "Pod"},
      {"apps", "Deployment"},
      {"apps", "StatefulSet"},
      {"batch", "Job"},
      {"jobset.x-k8s.io", "JobSet"},
      {"kubeflow.org", "JAXJob"},
      {"kubeflow.org", "PaddleJob"},
      {"kubeflow.org", "PyTorchJob"},
      {"kubeflow.org", "TFJob"},
      {"kubeflow.org", "XGBoostJob"},
      {"kubeflow.org", "MPIJob"},
      {"leaderworkerset.x-k8s.io", "LeaderWorkerSet"},
      {"ray.io", "RayCluster"},
      {"ray.io", "RayJob"},
      {"ray.io", "RayService"},
      {"trainer.kubeflow.org", "TrainJob"},
      {"workload.codeflare.dev", "AppWrapper"},
      {"sparkoperator.k8s.io", "SparkApplication"}};
  for (const WorkloadKind& kind : workload_kinds()) {
    INFO(kind.group << " " << kind.kind);
    const bool integrated = integrations.count({kind.group, kind.kind}) != 0;
    if (kind.kind == "CronJob") {
      CHECK(kind.kueue == KueueQueue::kJobTemplateLabels);
    } else {
      CHECK((kind.kueue == KueueQueue::kOwnLabels) == integrated);
      CHECK((kind.kueue == KueueQueue::kPodTemplateLabels) == !integrated);
    }
  }
}

// --- docs/workloads.md: the table, generated -----------------------------------------------

std::string code(std::string_view s) { return "`" + std::string(s) + "`"; }

std::string counts_text(const PodTemplatePath& path) {
  if (path.counts.empty()) return "1";
  std::string out;
  for (const ReplicaCount& count : path.counts) {
    if (!out.empty()) out += " × ";
    const std::string p(count.path);
    switch (count.rule) {
      case CountRule::kValue:
        out += code(p);
        break;
      case CountRule::kJobSpec:
        out += code(p + ".parallelism") + " (at most " + code(p + ".completions") + ")";
        break;
      case CountRule::kRayGroup:
        out += "(" + code(p + ".replicas") + ", else " + code("minReplicas") + ") × " +
               code("numOfHosts");
        break;
      case CountRule::kLwsGroup:
        out += "(" + code(p) + " − 1)";
        break;
    }
  }
  return out;
}

std::string markdown_table() {
  std::string out =
      "| kind | API group | resource | pod templates | pods each stands for | UPDATE of a "
      "template | Kueue reads the queue from | created by |\n|---|---|---|---|---|---|---|---|\n";
  for (const WorkloadKind& kind : workload_kinds()) {
    const bool pod = kind.group.empty() && kind.kind == "Pod";
    std::string resource = code(kind.resource);
    for (std::string_view sub : kind.subresources) {
      resource += ", " + code(std::string(kind.resource) + "/" + std::string(sub));
    }
    std::string templates, counts;
    for (const PodTemplatePath& path : kind.pod_specs) {
      templates += (templates.empty() ? "" : "<br>") + code(path.spec);
      counts += (counts.empty() ? "" : "<br>") + counts_text(path);
    }
    if (kind.pod_specs.empty()) templates = counts = "— (admitted for its queue only)";
    std::string update = pod                      ? "not evaluated"
                         : kind.pod_specs.empty() ? "queue label judged"
                         : kind.template_updates == TemplateUpdates::kMutable
                             ? "mutated where changed"
                             : "judged, never patched (immutable)";
    std::string kueue;
    switch (kind.kueue) {
      case KueueQueue::kOwnLabels:
        kueue = code("metadata.labels");
        break;
      case KueueQueue::kJobTemplateLabels:
        kueue = code("spec.jobTemplate.metadata.labels");
        break;
      case KueueQueue::kPodTemplateLabels:
        kueue = "each pod template's labels";
        break;
    }
    std::string parents;
    for (const KindRef& parent : kind.controllers) {
      // A kind name two groups share (Job) is followed by its group.
      size_t same_name = 0;
      for (const WorkloadKind& k : workload_kinds()) same_name += k.kind == parent.kind;
      parents += (parents.empty() ? "" : ", ") + std::string(parent.kind);
      if (same_name > 1) parents += " (" + code(parent.group) + ")";
    }
    if (parents.empty()) parents = "—";
    out += "| " + std::string(kind.kind) + " | " +
           (kind.group.empty() ? std::string("core") : code(kind.group)) + " | " + resource +
           " | " + templates + " | " + counts + " | " + update + " | " + kueue + " | " + parents +
           " |\n";
  }
  return out;
}

// GPUADMIT_UPDATE_DOCS=1 writes the generated table into docs/workloads.md (then read the diff).
TEST_CASE("workload kinds: docs/workloads.md holds the table as generated") {
  const std::string path = std::string(GPUADMIT_SOURCE_DIR) + "/docs/workloads.md";
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const std::string begin =
      "<!-- BEGIN workload table: generated, tests/engine/workload_kinds_test.cpp -->\n";
  const std::string end = "<!-- END workload table -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string expected = markdown_table();
  if (std::getenv("GPUADMIT_UPDATE_DOCS") != nullptr) {
    doc.replace(b + begin.size(), e - b - begin.size(), expected);
    std::ofstream(path) << doc;
    return;
  }
  INFO("replace the table of docs/workloads.md with:\n" << expected);
  CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == expected);
}

}  // namespace
}  // namespace workload_kinds_test
}  // namespace gpuadmit
