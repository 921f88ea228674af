// Pod UPDATE (SPEC §7.1, issue 34 point 6): judged, never patched, where it changes what decides
// placement or devices — the tolerations (additions allowed at any time), nodeSelector and node
// affinity (while the pod has scheduling gates: KEP-3838), the scheduling gates, a cdi.k8s.io/
// annotation — and allowed untouched otherwise, so that a Pod admitted before a stricter policy
// keeps its label, annotation and finalizer updates. And spec.nodeName onto a GPU pool's node
// (point 5), known from the cluster's Nodes (engine/node_source.h).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/admission.h"
#include "engine/controllers.h"
#include "engine/node_source.h"
#include "engine/pod_update.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace pod_update_test {
namespace {

using testing::policy_from_yaml;

PolicyPtr golden_policy() {
  return policy_from_yaml(
      testing::slurp(std::string(GPUADMIT_SOURCE_DIR) + "/tests/cases/policy.yaml"));
}

// A CPU pod of tenant ml-team as stored after its CREATE, held by a scheduling gate.
Json gated_cpu_pod() {
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"squatter","namespace":"ml-vision","uid":"u-1","labels":{"app":"x"}},
    "spec":{"schedulingGates":[{"name":"example.com/hold"}],
      "containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
}

Json update_review(const Json& object, const Json& old_object, const std::string& user = "alice") {
  Json request = {{"uid", "u-update"},
                  {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                  {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                  {"name", object["metadata"]["name"]},
                  {"namespace", "ml-vision"},
                  {"operation", "UPDATE"},
                  {"userInfo", {{"username", user}, {"groups", {"system:authenticated"}}}},
                  {"object", object},
                  {"oldObject", old_object}};
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

struct Answer {
  bool evaluated = false;
  bool allowed = false;
  bool patched = false;
  std::string message;
};

Answer answer(const Json& review, Endpoint endpoint, const CompiledPolicy& policy,
              const NodeSource* nodes = nullptr) {
  static const Pipeline pipeline(default_mutators(), default_rules());
  const AdmissionResult r = handle_admission_review_text(
      review.dump(), endpoint, pipeline, policy, nullptr, TemplateMode::kMutate, nullptr, nodes);
  REQUIRE(r.outcome);
  const Json& response = r.outcome->response["response"];
  Answer a;
  a.evaluated = r.outcome->evaluated;
  a.allowed = response["allowed"].get<bool>();
  a.patched = response.contains("patch");
  if (response.contains("status")) a.message = response["status"]["message"];
  return a;
}

}  // namespace

TEST_CASE("pod update: what counts as a change of placement or devices") {
  const Json old = gated_cpu_pod();
  Json labelled = old;
  labelled["metadata"]["labels"]["team"] = "vision";
  labelled["metadata"]["annotations"] = {{"note", "x"}};
  labelled["metadata"]["finalizers"] = {"example.com/keep"};
  labelled["spec"]["containers"][0]["image"] = "busybox:1.37";  // an image decides no device
  CHECK_FALSE(pod_placement_changed(labelled, old));

  for (const char* field : {"tolerations", "nodeSelector", "affinity", "schedulingGates"}) {
    Json changed = old;
    changed["spec"][field] = field == std::string("nodeSelector") ? Json{{"a", "b"}}
                             : field == std::string("affinity")   ? Json{{"nodeAffinity", {}}}
                                                                  : Json::array();
    CHECK(pod_placement_changed(changed, old));
    CHECK(pod_placement_changed(old, changed));
  }
  Json cdi = old;
  cdi["metadata"]["annotations"] = {{"cdi.k8s.io/gpus", "nvidia.com/gpu=all"}};
  CHECK(pod_placement_changed(cdi, old));
  CHECK(pod_placement_changed(old, cdi));
  Json cdi_other = cdi;
  cdi_other["metadata"]["annotations"]["cdi.k8s.io/gpus"] = "nvidia.com/gpu=0";
  CHECK(pod_placement_changed(cdi_other, cdi));
  // The labels Kueue reads for the Pod's workload: added, changed or removed.
  for (const char* label : {"kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"}) {
    INFO(label);
    Json relabeled = old;
    relabeled["metadata"]["labels"][label] = "a";
    CHECK(pod_placement_changed(relabeled, old));
    CHECK(pod_placement_changed(old, relabeled));
    Json other = relabeled;
    other["metadata"]["labels"][label] = "b";
    CHECK(pod_placement_changed(other, relabeled));
    CHECK_FALSE(pod_placement_changed(relabeled, relabeled));
  }
  // Not a Pod shape at all: both read as empty.
  CHECK_FALSE(pod_placement_changed(Json::array(), Json()));
}

TEST_CASE("pod update: releasing the controller ownerReference is judged, adopting is not") {
  const Json job = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job","name":"train",
    "uid":"j-1","controller":true,"blockOwnerDeletion":true})");
  Json orphan = gated_cpu_pod();
  Json owned = orphan;
  owned["metadata"]["ownerReferences"] = Json::array({job});
  Json other_uid = owned;
  other_uid["metadata"]["ownerReferences"][0]["uid"] = "j-2";
  Json not_controller = owned;
  not_controller["metadata"]["ownerReferences"][0]["controller"] = false;
  Json unblocked = owned;
  unblocked["metadata"]["ownerReferences"][0].erase("blockOwnerDeletion");
  struct Case {
    const char* name;
    const Json& object;
    const Json& old_object;
    bool released;
  };
  const std::vector<Case> cases = {
      {"removed", orphan, owned, true},
      {"replaced by another uid", other_uid, owned, true},
      {"no longer the controller", not_controller, owned, true},
      {"adopted (none before)", owned, orphan, false},
      {"kept, blockOwnerDeletion dropped", unblocked, owned, false},
      {"none either side", orphan, orphan, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(controller_released(c.object, c.old_object) == c.released);
    CHECK_FALSE(pod_placement_changed(c.object, c.old_object));
    // Judged (evaluated) exactly when released; a CPU pod is then allowed, unpatched.
    const Answer a =
        answer(update_review(c.object, c.old_object), Endpoint::kValidate, *golden_policy());
    CHECK(a.evaluated == c.released);
    CHECK(a.allowed);
    CHECK_FALSE(a.patched);
  }
}

TEST_CASE("pod update: a gated CPU pod moved onto a GPU pool is denied, on both endpoints") {
  const PolicyPtr policy = golden_policy();
  const Json old = gated_cpu_pod();
  Json moved = old;
  // What Kubernetes lets a gated pod gain (ValidatePodUpdate: tolerations added, nodeSelector
  // added while gated) — the A100 pool's taint and label.
  moved["spec"]["tolerations"] = Json::parse(
      R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
          {"key":"pool.example.com/a100","operator":"Equal","value":"true","effect":"NoSchedule"}])");
  moved["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};
  moved["spec"].erase("schedulingGates");
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Answer a = answer(update_review(moved, old), endpoint, *policy);
    CHECK(a.evaluated);
    CHECK_FALSE(a.allowed);
    CHECK_FALSE(a.patched);
    CHECK(a.message ==
          "gpuadmit denied Pod ml-vision/squatter: "
          "GPU009: toleration {\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":"
          "\"NoSchedule\"} tolerates the taint nvidia.com/gpu:NoSchedule of GPU pools a100, h100, "
          "l4, t4, but the pod asks for no GPU; remove it, or request a GPU if the pod needs one; "
          "GPU009: toleration {\"key\":\"pool.example.com/a100\",\"operator\":\"Equal\","
          "\"value\":\"true\",\"effect\":\"NoSchedule\"} tolerates the taint "
          "pool.example.com/a100=true:NoSchedule of GPU pool a100, but the pod asks for no GPU; "
          "remove it, or request a GPU if the pod needs one; "
          "GPU009: nodeSelector nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB selects GPU pool "
          "a100, but the pod asks for no GPU; remove it, or request a GPU if the pod needs one");
  }
}

TEST_CASE("pod update: judged as is, not as the strip would leave it") {
  // With nonGpuOnGpuPool: strip the mutation removes a GPU toleration at CREATE; on UPDATE the
  // API server would refuse the removal (tolerations: additions only), and judging the stripped
  // copy would admit the very toleration the UPDATE adds.
  std::string text = testing::slurp(std::string(GPUADMIT_SOURCE_DIR) + "/tests/cases/policy.yaml");
  text.replace(text.find("nonGpuOnGpuPool: deny"), 21, "nonGpuOnGpuPool: strip");
  const PolicyPtr policy = policy_from_yaml(text);
  const Json old = gated_cpu_pod();
  Json moved = old;
  moved["spec"]["tolerations"] =
      Json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])");
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Answer a = answer(update_review(moved, old), endpoint, *policy);
    CHECK_FALSE(a.allowed);
    CHECK_FALSE(a.patched);
    CHECK(a.message.find("GPU009: toleration") != std::string::npos);
  }
}

TEST_CASE("pod update: a change of no placement passes untouched, violations or not") {
  const PolicyPtr policy = golden_policy();
  // A pod admitted before the policy denied it (here: a CPU pod that tolerates the A100 pool).
  Json old = gated_cpu_pod();
  old["spec"].erase("schedulingGates");
  old["spec"]["tolerations"] =
      Json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])");
  Json relabelled = old;
  relabelled["metadata"]["labels"]["pod-template-hash"] = "5d4f8";
  relabelled["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Answer a = answer(update_review(relabelled, old, "system:serviceaccount:kube-system:x"),
                            endpoint, *policy);
    CHECK_FALSE(a.evaluated);
    CHECK(a.allowed);
    CHECK_FALSE(a.patched);
  }
  // The same pod given one more toleration is judged as a whole: its CREATE would be denied.
  Json more = old;
  more["spec"]["tolerations"].push_back(
      Json::parse(R"({"key":"example.com/spot","operator":"Exists"})"));
  const Answer a = answer(update_review(more, old), Endpoint::kValidate, *policy);
  CHECK(a.evaluated);
  CHECK_FALSE(a.allowed);
}

TEST_CASE("pod update: a GPU pod whose UPDATE its CREATE would allow is allowed, unpatched") {
  const PolicyPtr policy = golden_policy();
  // A GPU pod as stored after its CREATE (the a100 class's tolerations and affinity), gated by
  // Kueue; Kueue's admission adds its ResourceFlavor's nodeSelector and removes the gate.
  Json old = Json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"trainer","namespace":"ml-vision","uid":"u-2",
      "annotations":{"gpuadmit.io/class":"a100"}},
    "spec":{"schedulingGates":[{"name":"kueue.x-k8s.io/admission"}],
      "priorityClassName":"gpu-batch","priority":1000,"preemptionPolicy":"Never",
      "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
        {"key":"pool.example.com/a100","operator":"Equal","value":"true","effect":"NoSchedule"}],
      "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product",
          "operator":"In","values":["NVIDIA-A100-SXM4-80GB"]}]}]}}},
      "containers":[{"name":"train","image":"nvcr.io/nvidia/pytorch:24.01-py3",
        "resources":{"requests":{"nvidia.com/gpu":"1","cpu":"8","memory":"48Gi"},
                     "limits":{"nvidia.com/gpu":"1","memory":"64Gi"}},
        "env":[]}]}})");
  Json admitted = old;
  admitted["spec"].erase("schedulingGates");
  admitted["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Answer a =
        answer(update_review(admitted, old, "system:serviceaccount:kueue-system:kueue"), endpoint,
               *policy);
    CHECK(a.evaluated);
    CHECK(a.allowed);
    CHECK(a.message.empty());
    CHECK_FALSE(a.patched);
  }
  // The H100 pool's taint and label instead: what its CREATE would get. The class's required
  // affinity (A100, from its CREATE) still holds, so the pod can land on no node at all — no
  // GPU pool gained (GPU011 reports a contradiction only where the pod as written could run).
  Json elsewhere = admitted;
  elsewhere["spec"]["tolerations"].push_back(
      Json::parse(R"({"key":"pool.example.com/h100","operator":"Exists"})"));
  elsewhere["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  const Answer updated = answer(update_review(elsewhere, old), Endpoint::kValidate, *policy);
  CHECK(updated.evaluated);
  Json created = update_review(elsewhere, Json());
  created["request"]["operation"] = "CREATE";
  created["request"].erase("oldObject");
  const Answer create = answer(created, Endpoint::kValidate, *policy);
  CHECK(updated.allowed == create.allowed);
  CHECK(updated.message == create.message);
  CHECK(updated.allowed);
}

TEST_CASE("pod update: without oldObject the update is judged") {
  const PolicyPtr policy = golden_policy();
  Json review = update_review(gated_cpu_pod(), Json());
  review["request"].erase("oldObject");
  review["request"]["object"]["spec"]["tolerations"] =
      Json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])");
  const Answer a = answer(review, Endpoint::kValidate, *policy);
  CHECK(a.evaluated);
  CHECK_FALSE(a.allowed);
}

TEST_CASE("node source: which GPU pools a Node belongs to") {
  const PolicyPtr policy = golden_policy();
  auto node = [](const std::string& labels, const std::string& taints) {
    return *parse_node(Json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n",
      "labels":)" + labels + R"(},"spec":{"taints":)" +
                                   taints + "}}"));
  };
  CHECK(gpu_pools_of_node(node(R"({"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"})", "[]"),
                          *policy) == std::vector<std::string>{"a100"});
  // MIG strategy single: GPU Feature Discovery suffixes the product with the profile.
  CHECK(gpu_pools_of_node(
            node(R"({"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"})", "[]"),
            *policy) == std::vector<std::string>{"h100"});
  // t4 needs both of its labels.
  CHECK(gpu_pools_of_node(node(R"({"nvidia.com/gpu.product":"Tesla-T4"})", "[]"), *policy).empty());
  CHECK(gpu_pools_of_node(
            node(R"({"nvidia.com/gpu.product":"Tesla-T4","cloud.example.com/pool":"t4-b"})", "[]"),
            *policy) == std::vector<std::string>{"t4"});
  // By taint alone: a node carrying a pool's taint is that pool's, whatever its labels say.
  CHECK(gpu_pools_of_node(
            node("{}", R"([{"key":"pool.example.com/a100","value":"true","effect":"NoSchedule"}])"),
            *policy) == std::vector<std::string>{"a100"});
  // A taint several pools share: each of them (t4's names a value, "present").
  CHECK(gpu_pools_of_node(node("{}", R"([{"key":"nvidia.com/gpu","effect":"NoSchedule"}])"),
                          *policy) == std::vector<std::string>{"a100", "h100", "l4"});
  // Labels decide first: an A100 node carrying the shared taint is the a100 pool's.
  CHECK(gpu_pools_of_node(node(R"({"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"})",
                               R"([{"key":"nvidia.com/gpu","effect":"NoSchedule"}])"),
                          *policy) == std::vector<std::string>{"a100"});
  // Another effect, another value where the class names one: not the pool's taint.
  CHECK(gpu_pools_of_node(node("{}", R"([{"key":"nvidia.com/gpu","effect":"NoExecute"},
      {"key":"pool.example.com/a100","value":"false","effect":"NoSchedule"}])"),
                          *policy)
            .empty());
  CHECK(gpu_pools_of_node(node(R"({"kubernetes.io/os":"linux"})", "[]"), *policy).empty());
  CHECK_FALSE(parse_node(Json::parse(R"({"kind":"Node","metadata":{}})")).has_value());
  CHECK_FALSE(parse_node(Json::array()).has_value());
}

TEST_CASE("pod create: spec.nodeName onto a GPU pool's node, with the cluster's Nodes") {
  const PolicyPtr policy = golden_policy();
  const StaticNodeSource nodes(
      {Json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-a100-7",
         "labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},
         "spec":{"taints":[{"key":"nvidia.com/gpu","effect":"NoSchedule"}]}})"),
       Json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"cpu-3",
         "labels":{"kubernetes.io/os":"linux"}}})")});
  auto create = [](const std::string& node_name) {
    Json pod = gated_cpu_pod();
    pod["spec"].erase("schedulingGates");
    pod["spec"]["nodeName"] = node_name;
    Json review = update_review(pod, Json());
    review["request"]["operation"] = "CREATE";
    review["request"].erase("oldObject");
    return review;
  };
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Answer squat = answer(create("gpu-a100-7"), endpoint, *policy, &nodes);
    CHECK_FALSE(squat.allowed);
    CHECK(squat.message ==
          "gpuadmit denied Pod ml-vision/squatter: GPU009: nodeName gpu-a100-7 binds the pod to a "
          "node of GPU pool a100, but the pod asks for no GPU; remove it, or request a GPU if "
          "the pod needs one");
    CHECK(answer(create("cpu-3"), endpoint, *policy, &nodes).allowed);
    // A node the source does not hold: the pod garbage collector deletes such a pod.
    CHECK(answer(create("gpu-a100-99"), endpoint, *policy, &nodes).allowed);
    // Without the cluster's Nodes (lint, the native policies, serve without --node-watch).
    CHECK(answer(create("gpu-a100-7"), endpoint, *policy).allowed);
  }
}

}  // namespace pod_update_test
}  // namespace gpuadmit
