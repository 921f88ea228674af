// `kubectl debug`: ephemeral containers added through the pods/ephemeralcontainers subresource.
// The API server sends the whole Pod (kind Pod, operation UPDATE, subResource
// "ephemeralcontainers", the Pod before as oldObject) and keeps only the ephemeralContainers of
// what the webhooks return (pkg/registry/core/pod strategy.go dropNonEphemeralContainerUpdates),
// refusing any change to one that already exists (ValidatePodEphemeralContainersUpdate). gpuadmit
// gives the new ones NVIDIA_VISIBLE_DEVICES=void and judges them by GPU024, nothing else.

#include <catch2/catch.hpp>

#include <string>

#include "tests/controllers/kube_mirror.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit::testing {
namespace ephemeral_containers_test {
namespace {

PolicyPtr default_policy() {
  return policy_from_yaml(slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml"));
}

// What `kubectl debug -it trainer --image=nvidia/cuda:12.4.0-base-ubuntu22.04 --target=trainer`
// adds (k8s.io/kubectl/pkg/cmd/debug generateDebugContainer), defaulted by the API server.
Json debug_container(const std::string& name, const Json& env = Json()) {
  Json c = {{"name", name},
            {"image", "nvidia/cuda:12.4.0-base-ubuntu22.04"},
            {"resources", Json::object()},
            {"terminationMessagePath", "/dev/termination-log"},
            {"terminationMessagePolicy", "File"},
            {"imagePullPolicy", "IfNotPresent"},
            {"stdin", true},
            {"tty", true},
            {"targetContainerName", "trainer"}};
  if (!env.is_null()) c["env"] = env;
  return c;
}

constexpr const char* kVoid = R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])";

Json gpu_pod(const Json& owner = Json()) {
  Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer"},
    "spec":{"containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3",
      "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  if (!owner.is_null()) pod["metadata"]["ownerReferences"] = owner;
  return pod;
}

TEST_CASE("ephemeral containers: kubectl debug gets NVIDIA_VISIBLE_DEVICES=void, once") {
  ApiServer api(default_policy());
  REQUIRE(api.create(gpu_pod()).ok());
  const Json before = api.get("Pod", "trainer");

  const Written first = api.add_ephemeral_container("trainer", debug_container("debugger-a"));
  REQUIRE(first.ok());
  CHECK(first.sent);
  // Exactly the new container's env, nothing else of the Pod.
  CHECK(first.mutating_patch == Json::parse(R"([{"op":"add",
    "path":"/spec/ephemeralContainers/0/env","value":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]}])"));
  Json pod = api.get("Pod", "trainer");
  CHECK(pod["spec"]["ephemeralContainers"][0]["env"] == Json::parse(kVoid));
  Json rest = pod;
  rest["spec"].erase("ephemeralContainers");
  CHECK(rest == before);

  // A second session: the first container is left as it is (the API server would refuse a
  // change to it), the new one gets the variable.
  const Written second = api.add_ephemeral_container("trainer", debug_container("debugger-b"));
  REQUIRE(second.ok());
  CHECK(second.mutating_patch == Json::parse(R"([{"op":"add",
    "path":"/spec/ephemeralContainers/1/env","value":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]}])"));
  pod = api.get("Pod", "trainer");
  CHECK(pod["spec"]["ephemeralContainers"][1]["env"] == Json::parse(kVoid));
  CHECK(api.refusals().empty());
}

TEST_CASE("ephemeral containers: GPU024 refuses a debug container that asks for every GPU") {
  ApiServer api(default_policy());
  REQUIRE(api.create(gpu_pod()).ok());
  const Written w = api.add_ephemeral_container(
      "trainer",
      debug_container("debugger-a",
                      Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"all"}])")));
  REQUIRE_FALSE(w.ok());
  CHECK(*w.error ==
        "admission webhook \"mutate.gpuadmit.io\" denied: gpuadmit denied Pod team-a/trainer: "
        "GPU024: ephemeral container debugger-a requests no GPU (the pod's GPUs go to container "
        "trainer, not to it) but sets NVIDIA_VISIBLE_DEVICES to \"all\"; NVIDIA's container "
        "runtime exposes the GPUs it names: request the GPUs it needs "
        "(resources.limits[\"nvidia.com/gpu\"]) instead, or set it to void");
  CHECK_FALSE(api.get("Pod", "trainer")["spec"].contains("ephemeralContainers"));
}

TEST_CASE("ephemeral containers: nothing else of the Pod is judged again") {
  // A Pod admitted before a stricter policy (here: before gpuadmit) stays debuggable: its own
  // containers were judged at its CREATE and cannot change.
  ApiServer api(default_policy());
  api.set_webhook(false);
  Json pod = gpu_pod();
  pod["spec"]["containers"][0]["resources"] =
      Json::parse(R"({"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"2"}})");
  REQUIRE(api.create(pod).ok());
  api.set_webhook(true);
  const Written w = api.add_ephemeral_container("trainer", debug_container("debugger-a"));
  REQUIRE(w.ok());
  CHECK(w.mutating_patch.size() == 1);
}

// A node agent is a DaemonSet's pod in a namespace of the policy's nodeAgents (docs/decisions.md,
// "Whom gpuadmit believes"): the mirror's namespace, team-a, made one here.
TEST_CASE("ephemeral containers: a DaemonSet's pod (a node agent) is left alone") {
  std::string text = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  const std::string agents = R"(namespaces: ["nvidia-device-plugin", "node-feature-discovery"])";
  REQUIRE(text.find(agents) != std::string::npos);
  text.replace(text.find(agents), agents.size(),
               R"(namespaces: [")" + std::string(kNamespace) + R"("])");
  const Json owner = Json::parse(R"([{"apiVersion":"apps/v1","kind":"DaemonSet",
    "name":"dcgm-exporter","uid":"ds","controller":true}])");
  Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer"},
    "spec":{"containers":[{"name":"exporter","image":"nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5"}]}})");
  pod["metadata"]["ownerReferences"] = owner;
  ApiServer agents_here(policy_from_yaml(text));
  REQUIRE(agents_here.create(pod).ok());
  const Written w = agents_here.add_ephemeral_container("trainer", debug_container("debugger-a"));
  REQUIRE(w.ok());
  CHECK(w.mutating_patch == Json::array());
  // Where the policy names no node agents, the same pod's debugger is blinded like any other.
  ApiServer tenant(default_policy());
  REQUIRE(tenant.create(pod).ok());
  const Written judged = tenant.add_ephemeral_container("trainer", debug_container("debugger-a"));
  REQUIRE(judged.ok());
  CHECK(judged.mutating_patch.size() == 1);
}

TEST_CASE("ephemeral containers: the review as the API server sends it, through the codec") {
  const PolicyPtr policy = default_policy();
  const Pipeline pipeline(default_mutators(), default_rules());
  Json old = gpu_pod();
  old["metadata"]["namespace"] = "team-a";
  old["metadata"]["uid"] = "9d1b3c6e-0000-4000-8000-000000000001";
  Json object = old;
  object["spec"]["ephemeralContainers"] = Json::array({debug_container("debugger-xk2q9")});
  const Json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
        {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
        {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
        {"subResource", "ephemeralcontainers"},
        {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
        {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
        {"requestSubResource", "ephemeralcontainers"},
        {"name", "trainer"},
        {"namespace", "team-a"},
        {"operation", "UPDATE"},
        {"userInfo", {{"username", "alice"}, {"groups", {"system:authenticated"}}}},
        {"object", object},
        {"oldObject", old},
        {"dryRun", false},
        {"options",
         {{"apiVersion", "meta.k8s.io/v1"},
          {"kind", "PatchOptions"},
          {"fieldManager", "kubectl-debug"}}}}}};
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const AdmissionResult r =
        handle_admission_review_text(review.dump(), endpoint, pipeline, *policy);
    REQUIRE(r.outcome);
    CHECK(r.outcome->evaluated);
    const Json& response = r.outcome->response["response"];
    CHECK(response["allowed"] == true);
    if (endpoint == Endpoint::kMutate) {
      CHECK(
          base64_decode(response["patch"].get<std::string>()) ==
          R"([{"op":"add","path":"/spec/ephemeralContainers/0/env","value":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]}])");
      CHECK(response["auditAnnotations"] ==
            Json{{"class", "gpu"}, {"mutations", "gpu-visibility"}});
    } else {
      CHECK_FALSE(response.contains("patch"));
    }
  }
  // Another subresource of a Pod (status) still passes untouched.
  Json status = review;
  status["request"]["subResource"] = "status";
  const AdmissionResult r =
      handle_admission_review_text(status.dump(), Endpoint::kMutate, pipeline, *policy);
  REQUIRE(r.outcome);
  CHECK_FALSE(r.outcome->evaluated);
}

}  // namespace
}  // namespace ephemeral_containers_test
}  // namespace gpuadmit::testing
