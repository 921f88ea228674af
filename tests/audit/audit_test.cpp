// gpuadmit audit over a hand-made export (tests/audit/data/export.yaml) under a small policy
// (tests/audit/data/policy.yaml: class a100 of 8 GPUs a node, tenant ml in namespace ml with
// maxGPUsPerPod 2, requestsEqualLimits: deny). Every expected message is the one docs/rules.md
// gives for the rule (GPU001, GPU003, GPU005, GPU014 tables), filled in by hand; the mutation
// names are docs/mutations.md's (§2 class, §5 node-affinity, §9 gpu-visibility). Owners follow
// Kubernetes' ownerReferences (metav1.GetControllerOf: the entry with controller: true).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/report.h"
#include "tests/audit/audit_test_util.h"
#include "tests/audit/expected.h"
#include "tests/support/process.h"

namespace gpuadmit::audit {
namespace audit_test {
namespace {

using namespace expected;

using test_util::kData;
using test_util::pipeline;
using test_util::test_policy;

// The audit of texts, each read as its own input with its display name.
AuditResult audit_texts(const std::vector<std::pair<std::string, std::string>>& inputs,
                        bool pipelined = false) {
  Auditor auditor(test_policy(), pipeline(), nullptr, pipelined);
  for (const auto& [display, text] : inputs) auditor.read_text(text, display);
  return auditor.finish();
}

AuditResult audit_export() {
  return audit_texts({{"export.yaml", testing::slurp(kData + "export.yaml")}});
}

// Where each object is reported: "Pod ml/a: here" or "Pod ml/a: at Deployment ml/d".
std::vector<std::string> placements(const AuditResult& r) {
  std::vector<std::string> out;
  for (const AuditObject& o : r.objects) {
    std::string line = o.kind + " " + o.ns + "/" + o.name + ": ";
    if (o.reported()) {
      line += "here";
    } else {
      const AuditObject& at = r.objects[o.reported_at];
      line += "at " + at.kind + " " + at.ns + "/" + at.name;
    }
    out.push_back(line);
  }
  return out;
}

TEST_CASE("audit: each object of the export is reported once, at its top-level owner", "[audit]") {
  const AuditResult r = audit_export();
  CHECK(placements(r) == std::vector<std::string>{
                             "Deployment ml/train: here",
                             "ReplicaSet ml/train-7f9: at Deployment ml/train",
                             "Pod ml/train-7f9-a: at Deployment ml/train",
                             "Pod ml/train-7f9-b: at Deployment ml/train",
                             "Deployment ml/serve: here",
                             "ReplicaSet ml/serve-5d4: at Deployment ml/serve",
                             "Pod ml/serve-5d4-x: at Deployment ml/serve",
                             "Deployment ml/notebook: here",
                             "CronJob ml/nightly: here",
                             "Job ml/nightly-29000000: at CronJob ml/nightly",
                             "Pod ml/nightly-29000000-q: at CronJob ml/nightly",
                             // its ReplicaSet rs-gone is not in the export
                             "Pod ml/orphan-1: here",
                             "Deployment web/site: here",
                             "Pod web/render: here",
                             "ReplicaSet ml/notebook-6c8: at Deployment ml/notebook",
                             "Pod ml/notebook-6c8-z: at Deployment ml/notebook",
                         });
  CHECK(r.reported == 7);
  CHECK(r.folded == 9);
  CHECK(r.deny == 4);  // train, nightly, orphan-1 (GPU005); render (GPU003)
  CHECK(r.warn == 1);  // nightly's GPU014
  CHECK(r.error == 0);
  CHECK(r.would_change == 2);  // notebook (class, node-affinity), site (gpu-visibility)
  CHECK(r.errors.empty());
  CHECK(r.exit_code() == 1);
}

TEST_CASE("audit: text output, one line per finding and pending mutation", "[audit][text]") {
  CHECK(text_report(audit_export()) == expected::export_text("export.yaml"));
}

// Judged on a second thread (the CLI's mode on two cores): the same report, over two inputs
// read one after the other, and over 200 copies of the export (batches of 64 cross the queue).
TEST_CASE("audit: pipelined, the same report", "[audit][threads]") {
  const std::string text = testing::slurp(kData + "export.yaml");
  const AuditResult one = audit_texts({{"export.yaml", text}});
  const AuditResult two = audit_texts({{"export.yaml", text}}, /*pipelined=*/true);
  CHECK(text_report(two) == expected::export_text("export.yaml"));
  CHECK(json_report(two) == json_report(one));
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 200; ++i) many.emplace_back("e" + std::to_string(i) + ".yaml", text);
  CHECK(text_report(audit_texts(many, true)) == text_report(audit_texts(many, false)));
}

TEST_CASE("audit: JSON output", "[audit][json]") {
  const Json j = json_report(audit_export());
  // Objects with a finding or a pending mutation; clean ones (serve) are only counted.
  std::vector<std::string> listed;
  for (const Json& o : j["objects"]) {
    std::string rules;
    for (const Json& f : o["findings"]) rules += " " + f["rule"].get<std::string>();
    listed.push_back(o["kind"].get<std::string>() + " " + o["name"].get<std::string>() +
                     " owned=" + std::to_string(o["owned"].get<int>()) +
                     " wouldChange=" + (o["wouldChange"].get<bool>() ? "true" : "false") + rules);
  }
  CHECK(listed == std::vector<std::string>{
                      "Deployment train owned=3 wouldChange=false GPU005",
                      "Deployment notebook owned=2 wouldChange=true",
                      "CronJob nightly owned=2 wouldChange=false GPU005 GPU014",
                      "Pod orphan-1 owned=0 wouldChange=false GPU005",
                      "Deployment site owned=0 wouldChange=true",
                      "Pod render owned=0 wouldChange=false GPU003",
                  });
  const Json expected_orphan = Json::parse(std::string(R"({
    "file": "export.yaml", "line": 197, "apiVersion": "v1", "kind": "Pod", "namespace": "ml",
    "name": "orphan-1", "uid": "p-orphan", "owned": 0, "wouldChange": false, "mutations": [],
    "findings": [{"rule": "GPU005", "severity": "deny", "message": ")") +
                                           kGpu005Train + R"(", "path": "spec"}]})");
  CHECK(j["objects"][3] == expected_orphan);
  CHECK(j["objects"][1]["mutations"] == Json::parse(R"(["class", "node-affinity"])"));
  CHECK(j["errors"] == empty_array());
  CHECK(j["summary"] == Json::parse(R"({"objects": 16, "reported": 7, "owned": 9, "deny": 4,
      "warn": 1, "error": 0, "wouldChange": 2, "inputErrors": 0, "exitCode": 1})"));
}

TEST_CASE("audit: PolicyReports, one per namespace, bounded, exact summaries",
          "[audit][policyreport]") {
  PolicyReportOptions options;
  options.policy = "audit-test";
  options.timestamp_seconds = 1764370000;
  const Json list = policy_reports(audit_export(), options);
  CHECK(list["apiVersion"] == "v1");
  CHECK(list["kind"] == "List");
  REQUIRE(list["items"].size() == 2);  // ml, web; no cluster-scoped object

  // web: render fails GPU003, site has a pending mutation (warn), fail results first.
  Json expected_web = Json::parse(R"J({
    "apiVersion": "wgpolicyk8s.io/v1alpha2",
    "kind": "PolicyReport",
    "metadata": {"name": "gpuadmit-web", "namespace": "web",
                 "labels": {"app.kubernetes.io/managed-by": "gpuadmit"}},
    "scope": {"apiVersion": "v1", "kind": "Namespace", "name": "web"},
    "summary": {"pass": 0, "fail": 1, "warn": 1, "error": 0, "skip": 0},
    "results": [
      {"source": "gpuadmit", "policy": "audit-test", "rule": "GPU003",
       "category": "GPU workloads", "severity": "high",
       "timestamp": {"seconds": 1764370000, "nanos": 0}, "result": "fail", "scored": true,
       "resources": [{"apiVersion": "v1", "kind": "Pod", "namespace": "web", "name": "render",
                      "uid": "p-render"}],
       "message": "",
       "properties": {"file": "export.yaml:221", "path": "spec"}},
      {"source": "gpuadmit", "policy": "audit-test", "rule": "mutation",
       "category": "GPU workloads", "severity": "info",
       "timestamp": {"seconds": 1764370000, "nanos": 0}, "result": "warn", "scored": false,
       "resources": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "web",
                      "name": "site", "uid": "d-site"}],
       "message": "the mutating webhook would now change it: gpu-visibility (admitted before gpuadmit or before the policy changed)",
       "properties": {"file": "export.yaml:213", "mutations": "gpu-visibility"}}
    ]})J");
  expected_web["results"][0]["message"] = kGpu003Web;
  CHECK(list["items"][1] == expected_web);

  // ml: fail results (train, nightly, orphan-1: GPU005), then warn (notebook's mutation,
  // nightly's GPU014), then pass (serve, with its ReplicaSet and Pod).
  const Json& ml = list["items"][0];
  CHECK(ml["kind"] == "PolicyReport");
  CHECK(ml["metadata"]["name"] == "gpuadmit-ml");
  CHECK(ml["summary"] ==
        Json::parse(R"({"pass": 1, "fail": 3, "warn": 2, "error": 0, "skip": 0})"));
  std::vector<std::string> results;
  for (const Json& r : ml["results"]) {
    results.push_back(r["result"].get<std::string>() + " " + r["rule"].get<std::string>() + " " +
                      r["resources"][0]["name"].get<std::string>());
  }
  CHECK(results == std::vector<std::string>{"fail GPU005 train", "fail GPU005 nightly",
                                            "fail GPU005 orphan-1", "warn mutation notebook",
                                            "warn GPU014 nightly", "pass all-rules serve"});
  CHECK(ml["results"][0]["properties"] ==
        Json::parse(
            R"({"file": "export.yaml:8", "ownedObjects": "3", "path": "spec.template.spec"})"));

  SECTION("results bounded per report, the summary still exact") {
    options.max_results = 2;
    const Json bounded = policy_reports(audit_export(), options);
    const Json& b = bounded["items"][0];
    CHECK(b["results"].size() == 2);
    CHECK(b["results"][1]["resources"][0]["name"] == "nightly");
    CHECK(b["metadata"]["annotations"] == Json::parse(R"({"gpuadmit.io/results-omitted": "4"})"));
    CHECK(b["summary"] == ml["summary"]);
  }
}

// A cluster-scoped object (no metadata.namespace) goes to the ClusterPolicyReport.
TEST_CASE("audit: cluster-scoped objects in a ClusterPolicyReport", "[audit][policyreport]") {
  const AuditResult r = audit_texts(
      {{"in.json",
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","uid":"u1"},"spec":{"containers":[{"name":"c","env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]}]}})"}});
  const Json list = policy_reports(r, {});
  REQUIRE(list["items"].size() == 1);
  const Json& c = list["items"][0];
  CHECK(c["kind"] == "ClusterPolicyReport");
  CHECK(
      c["metadata"] ==
      Json::parse(
          R"({"name": "gpuadmit-cluster", "labels": {"app.kubernetes.io/managed-by": "gpuadmit"}})"));
  CHECK(c.find("scope") == c.end());
  CHECK(c["summary"] == Json::parse(R"({"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0})"));
  CHECK(c["results"][0]["resources"][0] ==
        Json::parse(R"({"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": "u1"})"));
  CHECK(c["results"][0]["policy"] == "gpuadmit");
}

// An exempt namespace (policy.yaml: kube-system) is left alone: no finding, no mutation, even
// for a GPU request without a limit; the PolicyReport says `skip` ("the policy was not selected",
// the v1alpha2 types).
TEST_CASE("audit: objects of exempt namespaces are skipped", "[audit][policyreport]") {
  const AuditResult r = audit_texts(
      {{"in.json",
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"agent","namespace":"kube-system","uid":"u2"},"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":1}}}]}})"}});
  REQUIRE(r.objects.size() == 1);
  CHECK(r.objects[0].exempt);
  CHECK(r.objects[0].findings.empty());
  CHECK_FALSE(r.objects[0].would_change);
  CHECK(r.exit_code() == 0);
  PolicyReportOptions options;
  options.timestamp_seconds = 5;
  const Json list = policy_reports(r, options);
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["summary"] ==
        Json::parse(R"({"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 1})"));
  CHECK(list["items"][0]["results"][0] == Json::parse(R"J({"source": "gpuadmit",
      "policy": "gpuadmit", "rule": "all-rules", "category": "GPU workloads", "severity": "info",
      "timestamp": {"seconds": 5, "nanos": 0}, "result": "skip", "scored": false,
      "resources": [{"apiVersion": "v1", "kind": "Pod", "namespace": "kube-system",
                     "name": "agent", "uid": "u2"}],
      "message": "namespace kube-system is exempt from gpuadmit (enforcement.exempt.namespaces)",
      "properties": {"file": "in.json:1"}})J"));
}

// DRA (docs/dra.md): a ResourceClaim is judged by the claim rules, as lint judges it, and
// resolves for the pods after it: golden case 099 (tests/cases/099-*: its pod's expected finding,
// findings.json) read as one export, the claim first; the claim's GPU019 message is
// docs/rules.md's (case 094's) for these values.
TEST_CASE("audit: DRA claims judged, and resolved for the pods after them", "[audit][dra]") {
  CompiledLoadResult loaded =
      load_compiled_policy(std::string(GPUADMIT_SOURCE_DIR) + "/tests/cases/policy.yaml");
  REQUIRE(loaded.policy);
  const std::string dir = std::string(GPUADMIT_SOURCE_DIR) +
                          "/tests/cases/099-dra-gpu005-claim-pod-exceeds-max-per-pod/";
  lint::ManifestClaims claims("default");
  Auditor auditor(loaded.policy, pipeline(), &claims);
  auditor.read_text(
      testing::slurp(dir + "claims.yaml") + "---\n" + testing::slurp(dir + "input.yaml"),
      "in.yaml");
  const AuditResult r = auditor.finish();
  REQUIRE(r.objects.size() == 2);
  CHECK(r.objects[0].kind == "ResourceClaim");
  REQUIRE(r.objects[0].findings.size() == 1);
  CHECK(r.objects[0].findings[0].rule == "GPU019");
  CHECK(r.objects[0].findings[0].message ==
        "ResourceClaim asks for 3 GPUs, more than maxGPUsPerPod 2 of tenant web; a pod using it "
        "could never be admitted: ask for at most 2");
  const Json expected = Json::parse(testing::slurp(dir + "findings.json"));
  REQUIRE(r.objects[1].findings.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(r.objects[1].findings[i].rule == expected[i]["rule"]);
    CHECK(r.objects[1].findings[i].message == expected[i]["message"]);
    CHECK(r.objects[1].findings[i].path == expected[i]["path"]);
  }
}

}  // namespace
}  // namespace audit_test
}  // namespace gpuadmit::audit
