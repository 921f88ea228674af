#include "rules/queue_required.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace queue_required_test {
namespace {

std::string policy_requiring_queue() {
  std::string yaml(kFleetPolicy);
  const std::string research = "      quota: {gpus: 3}\n";
  yaml.replace(yaml.find(research), research.size(), research + "      queue: {require: true}\n");
  const std::string ml = "        allowed: [gpu-batch, gpu-training]\n";
  yaml.replace(yaml.find(ml), ml.size(), ml + "      queue: {name: team-ml}\n");
  return yaml;
}

std::string gpu() { return container("trainer", "", R"({"nvidia.com/gpu":"1"})"); }

// The rule's findings on an UPDATE of `object` (in namespace research) from `old_object`, sent
// by `sender`.
std::vector<std::string> check_update(const Rule& rule, const PolicyPtr& policy,
                                      const std::string& object, const std::string& old_object,
                                      const std::string& sender) {
  PodFixture update(policy, object, "research");
  update.request.operation = Operation::kUpdate;
  update.request.username = sender;
  const Json old = Json::parse(old_object);
  update.request.old_object = &old;
  return check_rule(rule, update);
}

std::string job(std::string_view metadata_extra, std::string_view containers) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j")" +
         std::string(metadata_extra) + R"(},"spec":{"template":{"spec":{"containers":[)" +
         std::string(containers) + "]}}}}";
}

constexpr std::string_view kMessage =
    "tenant research runs GPU workloads through Kueue, but this one names no LocalQueue; set the "
    "label kueue.x-k8s.io/queue-name to one of the tenant's LocalQueues";

TEST_CASE("rule GPU025: GPU workloads of a tenant requiring a queue name one", "[rules][GPU025]") {
  auto policy = policy_from_yaml(policy_requiring_queue());
  auto rule = make_queue_required_rule();
  REQUIRE(rule->id() == "GPU025");
  REQUIRE(rule->default_action() == Action::kDeny);
  const std::string label = "metadata.labels[\"kueue.x-k8s.io/queue-name\"] | ";
  run_cases(*rule, policy,
            {
                {"a GPU Job without a queue",
                 "research",
                 job("", gpu()),
                 {label + std::string(kMessage)}},
                {"a GPU Job with a queue",
                 "research",
                 job(R"(,"labels":{"kueue.x-k8s.io/queue-name":"q"})", gpu()),
                 {}},
                {"an empty queue label is no queue",
                 "research",
                 job(R"(,"labels":{"kueue.x-k8s.io/queue-name":""})", gpu()),
                 {label + std::string(kMessage)}},
                // Kueue v0.15.0 reads no annotation (kubernetes-sigs/kueue#7271).
                {"only the annotation Kueue stopped reading",
                 "research",
                 job(R"(,"annotations":{"kueue.x-k8s.io/queue-name":"q"})", gpu()),
                 {label + std::string(kMessage)}},
                {"a CPU Job", "research", job("", container("c", "", "")), {}},
                {"a tenant that names a queue without requiring it", "ml-a", job("", gpu()), {}},
                {"a CronJob: the jobTemplate's labels",
                 "research",
                 R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{
               "jobTemplate":{"spec":{"template":{"spec":{"containers":[)" +
                     gpu() + "]}}}}}}",
                 {"spec.jobTemplate.metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " +
                  std::string(kMessage)}},
                {"a bare ReplicaSet: Kueue's pod integration reads its pods' (template's) labels",
                 "research",
                 R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r",
               "labels":{"kueue.x-k8s.io/queue-name":"q"}},"spec":{
               "template":{"spec":{"containers":[)" +
                     gpu() + "]}}}}",
                 {"spec.template.metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " +
                  std::string(kMessage)}},
                {"a bare ReplicaSet whose template names the queue",
                 "research",
                 R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{
               "template":{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"q"}},
               "spec":{"containers":[)" +
                     gpu() + "]}}}}",
                 {}},
                {"a Pod of a controller gpuadmit does not know: Kueue's pod integration's",
                 "research",
                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[
               {"apiVersion":"tekton.dev/v1","kind":"TaskRun","name":"t","uid":"u",
               "controller":true}]},"spec":{"containers":[)" +
                     gpu() + "]}}",
                 {label + std::string(kMessage)}},
            });
}

// An owner is believed only from its kind's controller (engine/controllers.h
// sent_by_owner_controller): then Kueue reads the queue on the owner. From anyone else, the object
// names its own queue, and a controller Kueue integrates makes Kueue leave it alone whatever it
// names (engine/kueue.h kueue_unbelieved_owner). No sender (lint): as if it had no owner.
TEST_CASE("rule GPU025: owners are believed from their controllers only", "[rules][GPU025]") {
  std::string yaml = policy_requiring_queue();
  yaml +=
      "  controllers:\n"
      "    - username: system:serviceaccount:jobset-system:jobset-controller-manager\n"
      "      kinds: [jobset.x-k8s.io/JobSet]\n";
  auto policy = policy_from_yaml(yaml);
  auto rule = make_queue_required_rule();
  const std::string label = "metadata.labels[\"kueue.x-k8s.io/queue-name\"] | ";
  const std::string owned_by = R"(,"ownerReferences":[{"apiVersion":"OWNER_AV","kind":"OWNER",
      "name":"o","uid":"u","controller":true}])";
  auto owner = [&](std::string_view api_version, std::string_view kind) {
    std::string m = owned_by;
    m.replace(m.find("OWNER_AV"), 8, api_version);
    m.replace(m.find("OWNER"), 5, kind);
    return m;
  };
  auto pod = [&](const std::string& metadata_extra) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + metadata_extra +
           R"(},"spec":{"containers":[)" + gpu() + "]}}";
  };
  auto skipped = [](std::string_view kind, std::string_view api_version, std::string_view who) {
    return "metadata.ownerReferences | this object names " + std::string(kind) + " o (" +
           std::string(api_version) +
           ") as its controller, but that controller did not send it (the request came from " +
           std::string(who) +
           "): Kueue leaves an object whose controller is a kind it manages to that "
           "controller's workload, so this one would run outside the queues of tenant research; "
           "remove the ownerReference, or, if that user is the controller, name it in the "
           "policy's spec.controllers";
  };
  const std::string labelled = R"(,"labels":{"kueue.x-k8s.io/queue-name":"q"})";
  struct Case {
    std::string name;
    std::string object;
    std::string sender;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"a Job of a JobSet from the JobSet controller: queued through the JobSet",
       job(owner("jobset.x-k8s.io/v1alpha2", "JobSet"), gpu()),
       "system:serviceaccount:jobset-system:jobset-controller-manager",
       {}},
      {"a Job of a CronJob from the cronjob-controller: its jobTemplate was checked",
       job(owner("batch/v1", "CronJob"), gpu()),
       "system:serviceaccount:kube-system:cronjob-controller",
       {}},
      {"a Pod of a ReplicaSet from the replicaset-controller",
       pod(owner("apps/v1", "ReplicaSet")),
       "system:serviceaccount:kube-system:replicaset-controller",
       {}},
      {"a ReplicaSet of a Deployment from kube-controller-manager's own user",
       R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r")" +
           owner("apps/v1", "Deployment") + R"(},"spec":{"template":{"spec":{"containers":[)" +
           gpu() + "]}}}}",
       "system:kube-controller-manager",
       {}},
      {"a Pod claiming a Job owner: Kueue would skip it, named queue or not",
       pod(owner("batch/v1", "Job") + labelled),
       "alice",
       {skipped("Job", "batch/v1", "alice")}},
      {"a Pod claiming a ReplicaSet owner: Kueue looks through it",
       pod(owner("apps/v1", "ReplicaSet")),
       "alice",
       {skipped("ReplicaSet", "apps/v1", "alice")}},
      {"a Job claiming a JobSet owner, sent by the job-controller",
       job(owner("jobset.x-k8s.io/v1alpha2", "JobSet"), gpu()),
       "system:serviceaccount:kube-system:job-controller",
       {skipped("JobSet", "jobset.x-k8s.io/v1alpha2",
                "system:serviceaccount:kube-system:job-controller")}},
      {"a Pod claiming a ReplicationController owner: a bare pod to Kueue, labelled",
       pod(owner("v1", "ReplicationController") + labelled),
       "alice",
       {}},
      {"a Pod claiming a ReplicationController owner, unlabelled",
       pod(owner("v1", "ReplicationController")),
       "alice",
       {label + std::string(kMessage)}},
      {"a Deployment claiming an MXJob owner (no Kueue integration): its own labels",
       R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d")" +
           owner("kubeflow.org/v1", "MXJob") + R"(},"spec":{"template":{"spec":{"containers":[)" +
           gpu() + "]}}}}",
       "alice",
       {label + std::string(kMessage)}},
      {"lint (no sender): a Pod with a Job owner is judged as if it had none",
       pod(owner("batch/v1", "Job")),
       "",
       {label + std::string(kMessage)}},
      {"a CPU Pod claiming a Job owner: not a GPU workload",
       R"({"apiVersion":"v1","kind":"Pod",
           "metadata":{"name":"p")" +
           owner("batch/v1", "Job") + R"(},"spec":{"containers":[{"name":"c"}]}})",
       "alice",
       {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      INFO(c.object);
      PodFixture fixture(policy, c.object, "research");
      fixture.request.username = c.sender;
      CHECK(check_rule(*rule, fixture) == c.expected);
    }
  }
}

TEST_CASE("rule GPU025: reported once per workload, at its first GPU pod spec", "[rules][GPU025]") {
  auto policy = policy_from_yaml(policy_requiring_queue());
  auto rule = make_queue_required_rule();
  const std::string ray =
      R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r"},"spec":{
          "headGroupSpec":{"template":{"spec":{"containers":[{"name":"head"}]}}},
          "workerGroupSpecs":[{"template":{"spec":{"containers":[)" +
      gpu() + R"(]}}},{"template":{"spec":{"containers":[)" + gpu() + "]}}}]}}";
  std::vector<std::vector<std::string>> per_spec;
  for (size_t i = 0; i < 3; ++i) {
    PodFixture pod(policy, ray, "research", i);
    per_spec.push_back(check_rule(*rule, pod));
  }
  CHECK(per_spec[0].empty());
  CHECK(per_spec[1] ==
        std::vector<std::string>{"metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " +
                                 std::string(kMessage)});
  CHECK(per_spec[2].empty());
}

TEST_CASE("rule GPU025: an UPDATE is judged unless the workload was already GPU without a queue",
          "[rules][GPU025]") {
  auto policy = policy_from_yaml(policy_requiring_queue());
  auto rule = make_queue_required_rule();
  const std::string reported =
      "metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " + std::string(kMessage);
  struct Case {
    std::string name;
    std::string old_object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"admitted before the requirement: a GPU Job without a queue", job("", gpu()), {}},
      {"was a CPU Job", job("", container("c", "", "")), {reported}},
      {"named a queue before",
       job(R"(,"labels":{"kueue.x-k8s.io/queue-name":"q"})", gpu()),
       {reported}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(check_update(*rule, policy, job("", gpu()), c.old_object, "") == c.expected);
  }
}

TEST_CASE("rule GPU025: an UPDATE of a controller's child by someone else", "[rules][GPU025]") {
  auto policy = policy_from_yaml(policy_requiring_queue());
  auto rule = make_queue_required_rule();
  const std::string deployment =
      R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"u",)"
      R"("controller":true}])";
  const std::string statefulset =
      R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"s","uid":"u",)"
      R"("controller":true}])";
  auto replica_set = [](const std::string& metadata_extra, int replicas) {
    return R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r")" +
           metadata_extra + R"(},"spec":{"replicas":)" + std::to_string(replicas) +
           R"(,"template":{"spec":{"containers":[)" + gpu() + "]}}}}";
  };
  auto pod = [](const std::string& metadata_extra, const std::string& spec_extra) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + metadata_extra +
           R"(},"spec":{)" + spec_extra + R"("containers":[)" + gpu() + "]}}";
  };
  const std::string changed =
      "spec | only the controller of this object, Deployment d (apps/v1), may change its spec "
      "(the request came from alice): Kueue counts its GPUs in that controller's workload, so "
      "what this UPDATE adds would run outside the queues of tenant research; change the "
      "Deployment instead";
  const std::string no_queue =
      "spec.template.metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " + std::string(kMessage);
  const std::string gate = R"("schedulingGates":[{"name":"kueue.x-k8s.io/admission"}],)";
  auto job_set_child = [](bool suspend) {
    return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","ownerReferences":[)"
           R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","name":"js","uid":"u",)"
           R"("controller":true}]},"spec":{"suspend":)" +
           std::string(suspend ? "true" : "false") + R"(,"template":{"spec":{"containers":[)" +
           gpu() + "]}}}}";
  };
  const std::string gained =
      "metadata.ownerReferences | this object names Deployment d (apps/v1) as its controller, but "
      "that controller did not send it (the request came from alice): Kueue leaves an object "
      "whose controller is a kind it manages to that controller's workload, so this one would "
      "run outside the queues of tenant research; remove the ownerReference, or, if that user is "
      "the controller, name it in the policy's spec.controllers";
  const std::string unsuspended =
      "spec | only the controller of this object, JobSet js (jobset.x-k8s.io/v1alpha2), may "
      "change its spec (the request came from alice): Kueue counts its GPUs in that "
      "controller's workload, so what this UPDATE adds would run outside the queues of tenant "
      "research; change the JobSet instead";
  const std::string kueue = "system:serviceaccount:kueue-system:kueue-controller-manager";
  struct Case {
    std::string name;
    std::string sender;
    std::string object;
    std::string old_object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"a Deployment's ReplicaSet scaled by a tenant",
       "alice",
       replica_set(deployment, 8),
       replica_set(deployment, 1),
       {changed}},
      {"scaled by the deployment-controller",
       "system:serviceaccount:kube-system:deployment-controller",
       replica_set(deployment, 8),
       replica_set(deployment, 1),
       {}},
      {"its labels changed by a tenant, the spec not",
       "alice",
       replica_set(deployment + R"(,"labels":{"a":"b"})", 1),
       replica_set(deployment, 1),
       {}},
      {"detached by a tenant: judged as a standalone ReplicaSet's CREATE",
       "alice",
       replica_set("", 1),
       replica_set(deployment, 1),
       {no_queue}},
      {"a StatefulSet's pod ungated by Kueue",
       kueue,
       pod(statefulset, ""),
       pod(statefulset, gate),
       {}},
      {"no userInfo (a review without it): the old rules",
       "",
       replica_set(deployment, 8),
       replica_set(deployment, 1),
       {}},
      {"a controller gained: judged as the sender's CREATE",
       "alice",
       replica_set(deployment, 1),
       replica_set("", 1),
       {gained}},
      {"a JobSet's Job suspended by Kueue", kueue, job_set_child(true), job_set_child(false), {}},
      {"unsuspended by a tenant",
       "alice",
       job_set_child(false),
       job_set_child(true),
       {unsuspended}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(check_update(*rule, policy, c.object, c.old_object, c.sender) == c.expected);
  }
}

TEST_CASE("rule GPU025: a queued kind without pod specs names its own queue", "[rules][GPU025]") {
  auto policy = policy_from_yaml(policy_requiring_queue());
  auto rule = make_queue_required_rule();
  auto train_job = [](std::string_view labels) {
    return Json::parse(
        R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"t")" +
        std::string(labels) + R"(},"spec":{"runtimeRef":{"name":"torch"}}})");
  };
  const Json unlabelled = train_job("");
  const Json labelled = train_job(R"(,"labels":{"kueue.x-k8s.io/queue-name":"q"})");
  const std::string reported =
      "metadata.labels[\"kueue.x-k8s.io/queue-name\"] | tenant research runs GPU workloads "
      "through Kueue, but this TrainJob names no LocalQueue; set the label "
      "kueue.x-k8s.io/queue-name to one of the tenant's LocalQueues (its pods' GPUs are not "
      "read here, so every TrainJob of the tenant names one)";
  struct Case {
    std::string name;
    std::string ns;
    Operation operation;
    const Json& object;
    const Json* old_object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"CREATE without a queue", "research", Operation::kCreate, unlabelled, nullptr, {reported}},
      {"CREATE with one", "research", Operation::kCreate, labelled, nullptr, {}},
      {"UPDATE removing it", "research", Operation::kUpdate, unlabelled, &labelled, {reported}},
      {"UPDATE of one created before the requirement",
       "research",
       Operation::kUpdate,
       unlabelled,
       &unlabelled,
       {}},
      {"a tenant naming a queue without requiring it",
       "ml-a",
       Operation::kCreate,
       unlabelled,
       nullptr,
       {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    QueuedObjectContext ctx;
    ctx.policy = policy.get();
    ctx.tenant = policy->tenant_for(c.ns);
    REQUIRE(ctx.tenant != nullptr);
    ctx.operation = c.operation;
    ctx.old_object = c.old_object;
    std::vector<Violation> out;
    rule->check_queued_object(c.object, ctx, out);
    std::vector<std::string> got;
    for (const Violation& v : out) got.push_back(v.path + " | " + v.message);
    CHECK(got == c.expected);
  }
}

}  // namespace
}  // namespace queue_required_test
}  // namespace gpuadmit::testing
