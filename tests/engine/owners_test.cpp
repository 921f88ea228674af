// Whom an ownerReference is believed from (issue 34, points 1 and 2): a node agent only in the
// policy's nodeAgents namespaces (engine/controllers.h runs_on_every_node), an owner only from
// its kind's controller (sent_by_owner_controller), and Kueue's queue site and skip decided from
// that (engine/kueue.h kueue_queue_site, kueue_unbelieved_owner).

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "engine/controllers.h"
#include "engine/kueue.h"
#include "tests/support/fixtures.h"

namespace gpuadmit::testing {
namespace owners_test {
namespace {

constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: owners}
spec:
  classes:
    gpu:
      nodeSelector: {nvidia.com/gpu.present: ["true"]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  tenants:
    - name: ml
      namespaces: ["ml-.*", nvidia-device-plugin]
  controllers:
    - username: system:serviceaccount:kubeflow:training-operator
      kinds: [kubeflow.org/PyTorchJob]
  enforcement:
    nodeAgents: {namespaces: [nvidia-device-plugin, "gpu-monitoring"]}
)YAML";

constexpr std::string_view kJobController = "system:serviceaccount:kube-system:job-controller";
constexpr std::string_view kReplicaSetController =
    "system:serviceaccount:kube-system:replicaset-controller";
constexpr std::string_view kTrainingOperator = "system:serviceaccount:kubeflow:training-operator";

OwnerReference owner(std::string_view api_version, std::string_view kind) {
  return OwnerReference{api_version, kind, "o", "u"};
}

TEST_CASE("owners: an owner is believed only from its kind's controller", "[engine][owners]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  struct Case {
    std::string name;
    OwnerReference owner;
    std::string_view sender;
    bool believed;
  };
  const std::vector<Case> cases = {
      {"a ReplicaSet's pod from the replicaset-controller", owner("apps/v1", "ReplicaSet"),
       kReplicaSetController, true},
      {"kube-controller-manager without service-account credentials",
       owner("apps/v1", "ReplicaSet"), kKubeControllerManagerUser, true},
      {"a Job's pod from the job-controller", owner("batch/v1", "Job"), kJobController, true},
      {"a CronJob's Job from the cronjob-controller", owner("batch/v1", "CronJob"),
       "system:serviceaccount:kube-system:cronjob-controller", true},
      {"a Deployment's ReplicaSet from the deployment-controller", owner("apps/v1", "Deployment"),
       "system:serviceaccount:kube-system:deployment-controller", true},
      {"a DaemonSet's pod from the daemon-set-controller", owner("apps/v1", "DaemonSet"),
       "system:serviceaccount:kube-system:daemon-set-controller", true},
      {"a StatefulSet's pod from the statefulset-controller", owner("apps/v1", "StatefulSet"),
       "system:serviceaccount:kube-system:statefulset-controller", true},
      {"a ReplicationController's pod from the replication-controller",
       owner("v1", "ReplicationController"),
       "system:serviceaccount:kube-system:replication-controller", true},
      {"a Job owner claimed by a tenant", owner("batch/v1", "Job"), "alice", false},
      {"a Job owner sent by another controller", owner("batch/v1", "Job"), kReplicaSetController,
       false},
      {"no sender (lint)", owner("batch/v1", "Job"), "", false},
      {"the kind in another group", owner("example.com/v1", "Job"), kJobController, false},
      {"an operator kind of the policy's controllers", owner("kubeflow.org/v1", "PyTorchJob"),
       kTrainingOperator, true},
      {"an operator kind from a built-in controller", owner("kubeflow.org/v1", "PyTorchJob"),
       kJobController, false},
      {"an operator kind the policy names for another kind", owner("kubeflow.org/v1", "MXJob"),
       kTrainingOperator, false},
      {"kube-controller-manager for an operator kind", owner("kubeflow.org/v1", "PyTorchJob"),
       kKubeControllerManagerUser, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(sent_by_owner_controller(c.owner, c.sender, *policy) == c.believed);
  }
}

std::string gpu_pod(std::string_view owner_api_version, std::string_view owner_kind) {
  std::string owners;
  if (!owner_kind.empty()) {
    owners = R"(,"ownerReferences":[{"apiVersion":")" + std::string(owner_api_version) +
             R"(","kind":")" + std::string(owner_kind) +
             R"(","name":"o","uid":"u","controller":true}])";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + owners +
         R"(},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
}

struct QueueCase {
  std::string name;
  std::string object;
  std::string_view sender;
  std::string site;        // the site's metadata pointer, "none" for nullopt
  std::string unbelieved;  // the unbelieved owner's kind, "" for none
};

TEST_CASE("owners: Kueue's queue site and skip follow the believed owner", "[engine][owners]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  const std::string deployment_of_mxjob =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","ownerReferences":[
          {"apiVersion":"kubeflow.org/v1","kind":"MXJob","name":"m","uid":"u","controller":true}]},
          "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})";
  const std::vector<QueueCase> cases = {
      {"a bare GPU pod: its own labels", gpu_pod("", ""), "alice", "/metadata", ""},
      {"a Job's pod from the job-controller: queued through its Job", gpu_pod("batch/v1", "Job"),
       kJobController, "none", ""},
      {"a forged Job owner: its own labels, and Kueue would skip it", gpu_pod("batch/v1", "Job"),
       "alice", "/metadata", "Job"},
      {"lint (no sender): judged as if it had no owner", gpu_pod("batch/v1", "Job"), "",
       "/metadata", ""},
      {"a forged ReplicaSet owner: Kueue looks through it", gpu_pod("apps/v1", "ReplicaSet"),
       "alice", "/metadata", "ReplicaSet"},
      {"a forged ReplicationController owner: Kueue's pod integration takes the pod",
       gpu_pod("v1", "ReplicationController"), "alice", "/metadata", ""},
      {"a forged MXJob owner: no Kueue integration", gpu_pod("kubeflow.org/v1", "MXJob"), "alice",
       "/metadata", ""},
      {"a PyTorchJob's pod from the declared operator", gpu_pod("kubeflow.org/v1", "PyTorchJob"),
       kTrainingOperator, "none", ""},
      {"a PyTorchJob's pod from anyone else", gpu_pod("kubeflow.org/v1", "PyTorchJob"), "alice",
       "/metadata", "PyTorchJob"},
      {"an unknown controller (Tekton): Kueue's pod integration",
       gpu_pod("tekton.dev/v1", "TaskRun"), "alice", "/metadata", ""},
      {"a Deployment claiming an MXJob owner: its own labels", deployment_of_mxjob, "alice",
       "/metadata", ""},
  };
  for (const QueueCase& c : cases) {
    INFO(c.name);
    PodFixture pod(policy, c.object, "ml-a");
    const std::optional<QueueSite> site =
        kueue_queue_site(pod.object, pod.view().location(), *policy, c.sender);
    CHECK((site ? site->metadata.to_string() : std::string("none")) == c.site);
    const std::optional<OwnerReference> skip =
        kueue_unbelieved_owner(pod.object, *policy, c.sender);
    CHECK((skip ? std::string(skip->kind) : std::string()) == c.unbelieved);
  }
}

TEST_CASE("owners: a node agent is a DaemonSet (or its pod) in a nodeAgents namespace",
          "[engine][owners]") {
  const PolicyPtr policy = policy_from_yaml(kPolicy);
  const std::string daemonset =
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dp"},"spec":{
          "template":{"spec":{"containers":[{"name":"c"}]}}}})";
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c"}]}})";
  struct Case {
    std::string name;
    std::string object;
    std::string ns;
    bool daemonset_owned;
    bool node_agent;
  };
  const std::vector<Case> cases = {
      {"a DaemonSet in a nodeAgents namespace", daemonset, "nvidia-device-plugin", false, true},
      {"its pod", pod, "nvidia-device-plugin", true, true},
      {"a nodeAgents pattern", pod, "gpu-monitoring", true, true},
      {"a DaemonSet in a tenant namespace", daemonset, "ml-a", false, false},
      {"a DaemonSet-owned pod in a tenant namespace", pod, "ml-a", true, false},
      {"a pod of no DaemonSet in a nodeAgents namespace", pod, "nvidia-device-plugin", false,
       false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    PodFixture fixture(policy, c.object, c.ns);
    fixture.request.daemonset_owned = c.daemonset_owned;
    CHECK(runs_on_every_node(fixture.ctx) == c.node_agent);
  }
}

}  // namespace
}  // namespace owners_test
}  // namespace gpuadmit::testing
