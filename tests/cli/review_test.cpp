// `gpuadmit review` end to end: the Kubernetes API fixtures wrapped in AdmissionReviews, and
// malformed input.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace review_test {
namespace {

const std::string kBinary = GPUADMIT_BINARY;
const std::string kFixtures = std::string(GPUADMIT_SHARED_DIR) + "/corpus/api-fixtures/";

Json review_of(const Json& object, const std::string& operation = "CREATE") {
  Json request = {{"uid", "7f0b2c3e-1"},
                  {"kind", {{"group", ""}, {"version", "v1"}, {"kind", object.value("kind", "")}}},
                  {"operation", operation},
                  {"namespace", "ml-team"},
                  {"object", object}};
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

Json run_review(const Json& review, const std::string& endpoint = "mutate") {
  auto r = testing::run_command(kBinary + " review --endpoint " + endpoint, review.dump());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

TEST_CASE("review: API fixtures round-trip, the validating endpoint never patches") {
  for (const char* file :
       {"k8s-api__core.v1.Pod.json", "k8s-api__apps.v1.Deployment.json",
        "k8s-api__apps.v1.DaemonSet.json", "k8s-api__apps.v1.StatefulSet.json",
        "k8s-api__apps.v1.ReplicaSet.json", "k8s-api__batch.v1.Job.json",
        "k8s-api__batch.v1.CronJob.json", "k8s-api__core.v1.ReplicationController.json",
        "k8s-api__core.v1.PodTemplate.json", "k8s-api__core.v1.LimitRange.json",
        "k8s-api__core.v1.ResourceQuota.json", "k8s-api__core.v1.Node.json",
        "k8s-api__scheduling.k8s.io.v1.PriorityClass.json"}) {
    INFO(file);
    const Json object = Json::parse(testing::slurp(kFixtures + file));
    const Json answer = run_review(review_of(object));
    CHECK(answer["apiVersion"] == "admission.k8s.io/v1");
    CHECK(answer["kind"] == "AdmissionReview");
    const Json& response = answer["response"];
    CHECK(response["uid"] == "7f0b2c3e-1");
    REQUIRE(response["allowed"].is_boolean());
    if (response.contains("patch")) {
      CHECK(response["patchType"] == "JSONPatch");
      CHECK(response["allowed"] == true);
    }
    // The validating endpoint never patches.
    const Json validated = run_review(review_of(object), "validate");
    CHECK_FALSE(validated["response"].contains("patch"));
  }
}

// Standard base64 (RFC 4648) of AdmissionResponse.patch.
std::string base64_decode(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    REQUIRE(v != std::string::npos);
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

TEST_CASE("review: GPU versions of the API fixtures: the patch applies and is idempotent") {
  // Every field of the pod spec is set in these fixtures (tolerations, node affinity with
  // matchFields, priority, pod-level resources, ephemeral containers...): asking for one GPU in
  // the first container makes the mutators work on the fullest pod spec the API has.
  const std::vector<std::pair<std::string, std::string>> fixtures = {
      {"k8s-api__core.v1.Pod.json", "/spec"},
      {"k8s-api__apps.v1.Deployment.json", "/spec/template/spec"},
      {"k8s-api__apps.v1.DaemonSet.json", "/spec/template/spec"},
      {"k8s-api__apps.v1.StatefulSet.json", "/spec/template/spec"},
      {"k8s-api__apps.v1.ReplicaSet.json", "/spec/template/spec"},
      {"k8s-api__batch.v1.Job.json", "/spec/template/spec"},
      {"k8s-api__batch.v1.CronJob.json", "/spec/jobTemplate/spec/template/spec"},
      {"k8s-api__core.v1.ReplicationController.json", "/spec/template/spec"}};
  int patched = 0;
  for (const auto& [file, spec] : fixtures) {
    INFO(file);
    Json object = Json::parse(testing::slurp(kFixtures + file));
    object.at(JsonPointer(spec + "/containers/0/resources/limits"))["nvidia.com/gpu"] = "1";
    // The fixtures' containers are privileged (GPU026 denies them outside the policy's
    // nodeAgents namespaces, DaemonSets included): this test is about the patch.
    for (const char* list : {"/initContainers", "/containers", "/ephemeralContainers"}) {
      if (!object.contains(JsonPointer(spec + list))) continue;
      for (Json& c : object.at(JsonPointer(spec + list))) c.erase("securityContext");
    }
    if (spec != "/spec") {
      // The fixtures name a controller (ownerReferences kindValue, controller: true): a copy a
      // controller made is judged, never patched (docs/decisions.md, "Controllers converge").
      const Json copy = run_review(review_of(object));
      CHECK_FALSE(copy["response"].contains("patch"));
      object["metadata"].erase("ownerReferences");
    }
    const Json answer = run_review(review_of(object));
    const Json& response = answer["response"];
    CHECK(response["uid"] == "7f0b2c3e-1");
    if (!response["allowed"].get<bool>()) {
      CHECK(response["status"]["code"] == 403);
      CHECK_FALSE(response.contains("patch"));
      continue;
    }
    REQUIRE(response.contains("patch"));
    CHECK(response["patchType"] == "JSONPatch");
    const Json patch = Json::parse(base64_decode(response["patch"].get<std::string>()));
    const Json mutated = object.patch(patch);
    CHECK(mutated.at(JsonPointer(spec + "/containers/0/resources/requests"))["nvidia.com/gpu"] ==
          "1");
    const Json again = run_review(review_of(mutated));
    CHECK_FALSE(again["response"].contains("patch"));
    CHECK(again["response"]["allowed"] == true);
    ++patched;
  }
  CHECK(patched > 0);
}

TEST_CASE("review: deny findings answer 403 with every violation, warn findings are warnings") {
  // The golden fleet: class t4 (4 GPUs per node, whole GPUs) in default, tenant open (every class,
  // no limits, defaults or priority).
  const std::string policy = std::string(GPUADMIT_SOURCE_DIR) + "/tests/cases/policy.yaml";
  auto review = [&](const std::string& name, const std::string& containers) {
    Json object =
        Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                    R"(","namespace":"default","annotations":{"gpuadmit.io/class":"t4"}},)"
                    R"("spec":{"containers":)" +
                    containers + "}}");
    Json r = review_of(object);
    r["request"]["uid"] = name + "-uid";
    r["request"]["namespace"] = "default";
    auto result = testing::run_command(kBinary + " review --policy " + policy, r.dump());
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return Json::parse(result.out);
  };
  const std::string kWhole =
      "a GPU cannot be split by quantity: write a whole number such as 1, or use a MIG profile "
      "(gpuadmit.io/mig-profile) or a time-sliced class";
  // Two deny rules (three violations) and a warning at once: all in one answer, nothing patched.
  const Json denied = review(
      "mixed", R"([{"name":"trainer","image":"t","resources":{"requests":{"nvidia.com/gpu":"2"},
                    "limits":{"nvidia.com/gpu":"3"}}},
                   {"name":"helper","image":"h","resources":{"limits":{"nvidia.com/gpu":"500m"}}}])");
  CHECK(denied["response"] ==
        Json{{"uid", "mixed-uid"},
             {"allowed", false},
             {"warnings",
              Json::array({"GPU014: pod requests 3 GPUs (container trainer: 2, container helper: "
                           "1): 3 on a 4-GPU node of class t4 strands 1; request 1, 2 or 4 GPUs "
                           "per pod"})},
             {"status",
              {{"code", 403},
               {"reason", "Forbidden"},
               {"message",
                "gpuadmit denied Pod default/mixed: GPU001: container trainer: nvidia.com/gpu "
                "request 2 ≠ limit 3; set both to the same whole number; GPU002: container "
                "helper: nvidia.com/gpu request 500m is not a whole number; " +
                    kWhole +
                    "; GPU002: container helper: nvidia.com/gpu limit 500m is not a whole "
                    "number; " +
                    kWhole}}},
             // Nothing was patched, so the audit record names no mutations.
             {"auditAnnotations", {{"class", "t4"}}}});
  // A warning alone: admitted, patched, and the warning shown to kubectl.
  const Json warned = review(
      "three", R"([{"name":"trainer","image":"t","resources":{"limits":{"nvidia.com/gpu":"3"}}}])");
  Json response = warned["response"];
  REQUIRE(response.contains("patch"));
  const Json patch = Json::parse(base64_decode(response["patch"].get<std::string>()));
  response.erase("patch");
  CHECK(
      response ==
      Json{{"uid", "three-uid"},
           {"allowed", true},
           {"patchType", "JSONPatch"},
           {"warnings", Json::array({"GPU014: pod requests 3 GPUs (container trainer: 3): 3 on "
                                     "a 4-GPU node of class t4 strands 1; request 1, 2 or 4 "
                                     "GPUs per pod"})},
           {"auditAnnotations",
            {{"class", "t4"}, {"mutations", "requests-equal-limits,tolerations,node-affinity"}}}});
  CHECK(patch == Json::parse(R"([
    {"op":"add","path":"/spec/containers/0/resources/requests","value":{"nvidia.com/gpu":"3"}},
    {"op":"add","path":"/spec/tolerations","value":[{"key":"nvidia.com/gpu","operator":"Equal",
      "value":"present","effect":"NoSchedule"}]},
    {"op":"add","path":"/spec/affinity","value":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[
        {"key":"nvidia.com/gpu.product","operator":"In","values":["Tesla-T4"]},
        {"key":"cloud.example.com/pool","operator":"In","values":["t4-a","t4-b"]}]}]}}}}])"));
}

TEST_CASE(
    "review: the upstream AdmissionReview fixture passes untouched (unknown operation, "
    "subresource)") {
  const Json review =
      Json::parse(testing::slurp(kFixtures + "k8s-api__admission.k8s.io.v1.AdmissionReview.json"));
  const Json answer = run_review(review);
  CHECK(answer == Json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                                  "response":{"uid":"uidValue","allowed":true}})"));
}

TEST_CASE("review: --templates validate judges a workload's template without patching it") {
  const Json deployment = Json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[
      {"name":"c","image":"cuda","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}})");
  auto r =
      testing::run_command(kBinary + " review --templates validate", review_of(deployment).dump());
  CHECK(r.exit_code == 0);
  CHECK(Json::parse(r.out)["response"] ==
        Json::parse(R"({"uid":"7f0b2c3e-1","allowed":true,"auditAnnotations":{"class":"gpu"}})"));
  auto bad =
      testing::run_command(kBinary + " review --templates never", review_of(deployment).dump());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "gpuadmit review: --templates must be mutate or validate, not \"never\"\n");
}

TEST_CASE("review: DELETE, CONNECT, Pod UPDATE and subresources are allowed untouched") {
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
    "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  for (const std::string op : {"DELETE", "CONNECT", "UPDATE"}) {
    INFO(op);
    Json review = review_of(pod, op);
    // A Pod UPDATE that changes no placement (docs/decisions.md, "Pod UPDATE"): a label.
    review["request"]["oldObject"] = pod;
    review["request"]["object"]["metadata"]["labels"] = {{"team", "a"}};
    const Json answer = run_review(review);
    CHECK(answer["response"] == Json{{"uid", "7f0b2c3e-1"}, {"allowed", true}});
  }
  Json status_update = review_of(pod);
  status_update["request"]["subResource"] = "status";
  CHECK(run_review(status_update)["response"] == Json{{"uid", "7f0b2c3e-1"}, {"allowed", true}});
}

// --nodes: the cluster's Nodes, as `serve --node-watch` holds them, for GPU009's nodeName check
// (docs/rules.md); without it nodeName is not judged.
TEST_CASE("review: --nodes lets GPU009 judge spec.nodeName") {
  char dir_template[] = "/tmp/gpuadmit-nodes-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  {
    std::ofstream nodes(dir + "/nodes.yaml");
    nodes << R"(apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: gpu-1
      labels: {nvidia.com/gpu.present: "true"}
  - apiVersion: v1
    kind: Node
    metadata: {name: cpu-1}
)";
  }
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
    "spec":{"nodeName":"gpu-1","containers":[{"name":"c","image":"busybox"}]}})");
  const std::string policy = std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml";
  auto with = testing::run_command(kBinary + " review --endpoint validate --policy " + policy +
                                       " --nodes " + dir + "/nodes.yaml",
                                   review_of(pod).dump());
  REQUIRE(with.exit_code == 0);
  const Json denied = Json::parse(with.out)["response"];
  CHECK(denied["allowed"] == false);
  CHECK(denied["status"]["message"].get<std::string>().find(
            "GPU009: nodeName gpu-1 binds the pod to a node of GPU pool") != std::string::npos);
  auto without = testing::run_command(kBinary + " review --endpoint validate --policy " + policy,
                                      review_of(pod).dump());
  REQUIRE(without.exit_code == 0);
  CHECK(Json::parse(without.out)["response"]["allowed"] == true);
  auto missing = testing::run_command(kBinary + " review --nodes " + dir + "/none.yaml", "{}");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "gpuadmit review: --nodes " + dir +
                           "/none.yaml: cannot read the file as YAML or JSON manifests\n");
}

TEST_CASE("review: malformed input exits 2 with a clear message") {
  struct Case {
    std::string input;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"not json", "gpuadmit review: <stdin>: request body is not valid JSON\n"},
      {"[]", "gpuadmit review: <stdin>: request body is not a JSON object\n"},
      {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}})",
       "gpuadmit review: <stdin>: apiVersion must be \"admission.k8s.io/v1\", got "
       "\"admission.k8s.io/v1beta1\" (set admissionReviewVersions: [v1] in the webhook "
       "configuration)\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod"})",
       "gpuadmit review: <stdin>: kind must be \"AdmissionReview\", got \"Pod\"\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "gpuadmit review: <stdin>: request is missing\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""}})",
       "gpuadmit review: <stdin>: request.uid is missing\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"z"}})",
       "gpuadmit review: <stdin>: request.operation is missing\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"z",)"
       R"("operation":"CREATE","object":[1]}})",
       "gpuadmit review: <stdin>: request.object must be an object\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"z",)"
       R"("operation":"UPDATE"}})",
       "gpuadmit review: <stdin>: request.object is missing (required for UPDATE)\n"},
      {std::string(10000, '[') + std::string(10000, ']'),
       "gpuadmit review: <stdin>: request body nests deeper than 100 levels\n"},
  };
  for (const Case& c : cases) {
    INFO(c.input.substr(0, 80));
    auto r = testing::run_command(kBinary + " review", c.input);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == c.message);
  }
  auto usage = testing::run_command(kBinary + " review --endpoint both", "{}");
  CHECK(usage.exit_code == 2);
  CHECK(usage.err == "gpuadmit review: --endpoint must be mutate or validate, not \"both\"\n");
  auto claims = testing::run_command(kBinary + " review --claims /nonexistent/claims.yaml", "{}");
  CHECK(claims.exit_code == 2);
  CHECK(claims.err == "gpuadmit review: --claims /nonexistent/claims.yaml: cannot open the file\n");
}

// --claims: the pod's DRA claim resolves to a template of the given manifests (docs/dra.md).
TEST_CASE("review: --claims resolves a pod's claim template") {
  const std::string dir = std::string(GPUADMIT_SOURCE_DIR) +
                          "/tests/cases/099-dra-gpu005-claim-pod-exceeds-max-per-pod/";
  const std::string policy = std::string(GPUADMIT_SOURCE_DIR) + "/tests/cases/policy.yaml";
  const Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "l4-serve", "namespace": "web-shop"},
      "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": "three-l4"}],
               "containers": [{"name": "server", "resources": {"claims": [{"name": "gpus"}]}}]}})");
  const Json review = {{"apiVersion", "admission.k8s.io/v1"},
                       {"kind", "AdmissionReview"},
                       {"request",
                        {{"uid", "u"},
                         {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                         {"operation", "CREATE"},
                         {"namespace", "web-shop"},
                         {"object", pod}}}};
  auto with = testing::run_command(
      kBinary + " review --policy " + policy + " --claims " + dir + "claims.yaml", review.dump());
  REQUIRE(with.exit_code == 0);
  const Json denied = Json::parse(with.out)["response"];
  CHECK_FALSE(denied["allowed"].get<bool>());
  CHECK(denied["status"]["message"] ==
        "gpuadmit denied Pod web-shop/l4-serve: GPU005: pod requests 3 GPUs (claim gpus "
        "(l4.gpu.example.com): 3), more than maxGPUsPerPod 2 of tenant web; request at most 2 per "
        "pod, or split the work across pods");
  // Without it nothing resolves (the webhook without the API lookup): the claim's GPUs cannot be
  // counted, so the Pod is denied (GPU023) rather than admitted as asking 0 GPUs (issue 34).
  auto without = testing::run_command(kBinary + " review --policy " + policy, review.dump());
  REQUIRE(without.exit_code == 0);
  const Json refused = Json::parse(without.out)["response"];
  CHECK_FALSE(refused["allowed"].get<bool>());
  CHECK(refused["status"]["message"] ==
        "gpuadmit denied Pod web-shop/l4-serve: GPU023: claim gpus names ResourceClaim three-l4 "
        "in namespace web-shop, which gpuadmit could not read (claim lookup is off); its GPUs "
        "cannot be counted against the tenant's limits and quota: create the Pod again once the "
        "webhook can read it (serve --dra-lookup, with get on resourceclaims and "
        "resourceclaimtemplates: docs/dra.md)");
}

}  // namespace
}  // namespace review_test
}  // namespace gpuadmit
