// `gpuadmit review` end to end: the Kubernetes API fixtures wrapped in AdmissionReviews, and
// malformed input.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/support/process.h"

namespace gpuadmit {
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

TEST_CASE("review: API fixtures round-trip; any patch applies and is idempotent") {
  for (const char* file : {"k8s-api__core.v1.Pod.json", "k8s-api__apps.v1.Deployment.json",
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

TEST_CASE("review: the upstream AdmissionReview fixture passes untouched (unknown operation, subresource)") {
  const Json review = Json::parse(testing::slurp(kFixtures + "k8s-api__admission.k8s.io.v1.AdmissionReview.json"));
  const Json answer = run_review(review);
  CHECK(answer == Json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                                  "response":{"uid":"uidValue","allowed":true}})"));
}

TEST_CASE("review: DELETE, CONNECT, Pod UPDATE and subresources are allowed untouched") {
  const Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
    "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  for (const std::string op : {"DELETE", "CONNECT", "UPDATE"}) {
    INFO(op);
    const Json answer = run_review(review_of(pod, op));
    CHECK(answer["response"] == Json{{"uid", "7f0b2c3e-1"}, {"allowed", true}});
  }
  Json status_update = review_of(pod);
  status_update["request"]["subResource"] = "status";
  CHECK(run_review(status_update)["response"] == Json{{"uid", "7f0b2c3e-1"}, {"allowed", true}});
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
       "\"admission.k8s.io/v1beta1\" (set admissionReviewVersions: [v1] in the webhook configuration)\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod"})",
       "gpuadmit review: <stdin>: kind must be \"AdmissionReview\", got \"Pod\"\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "gpuadmit review: <stdin>: request is missing\n"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""}})",
       "gpuadmit review: <stdin>: request.uid is missing\n"},
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
}

}  // namespace
}  // namespace gpuadmit
