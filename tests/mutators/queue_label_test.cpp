#include "mutators/queue_label.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace queue_label_test {
namespace {

// The fleet policy with tenant ml queued on team-ml (and bare requiring a queue, naming none).
std::string queued_policy() {
  std::string yaml = fleet_policy();
  const std::string ml = "        byWorkload: {training: gpu-training, inference: gpu-inference}\n";
  yaml.replace(yaml.find(ml), ml.size(), ml + "      queue: {name: team-ml}\n");
  const std::string bare = "      defaultClass: l4\n";
  yaml.replace(yaml.find(bare), bare.size(), bare + "      queue: {require: true}\n");
  return yaml;
}

constexpr std::string_view kGpu = R"({"name":"t","resources":{"limits":{"nvidia.com/gpu":1}}})";

std::string job(std::string_view metadata_extra, std::string_view containers = kGpu) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j")" +
         std::string(metadata_extra) + R"(},"spec":{"template":{"spec":{"containers":[)" +
         std::string(containers) + "]}}}}";
}

constexpr std::string_view kLabel = R"("labels":{"kueue.x-k8s.io/queue-name":"team-ml"})";

TEST_CASE("mutator queue: GPU workloads of a queued tenant get the Kueue queue label",
          "[mutators][queue]") {
  auto policy = policy_from_yaml(queued_policy());
  auto mutator = make_queue_label_mutator();
  CHECK(mutator->name() == "queue");
  run_mutation_cases(
      *mutator, policy,
      {
          {"a Job: labels created on the Job itself", "ml-a", job(""),
           job("," + std::string(kLabel))},
          {"appended to the Job's labels", "ml-a", job(R"(,"labels":{"app":"x"})"),
           job(R"(,"labels":{"app":"x","kueue.x-k8s.io/queue-name":"team-ml"})")},
          {"a queue the workload names is kept", "ml-a",
           job(R"(,"labels":{"kueue.x-k8s.io/queue-name":"other"})"), ""},
          // Kueue v0.15.0 reads no annotation (kubernetes-sigs/kueue#7271): the label is added.
          {"the annotation Kueue stopped reading names no queue", "ml-a",
           job(R"(,"annotations":{"kueue.x-k8s.io/queue-name":"other"})"),
           job(R"(,"annotations":{"kueue.x-k8s.io/queue-name":"other"},)" + std::string(kLabel))},
          {"a CPU-only Job is not queued", "ml-a", job("", R"({"name":"c"})"), ""},
          {"a tenant without a queue name", "bare", job(""), ""},
          {"a namespace of no tenant", "default", job(""), ""},
          {"a Job of a controller gpuadmit does not know: Kueue manages it as a Job", "ml-a",
           job(R"(,"ownerReferences":[{"apiVersion":"example.com/v1","kind":"Pipeline",
               "name":"p","uid":"u","controller":true}])"),
           job(R"(,"ownerReferences":[{"apiVersion":"example.com/v1","kind":"Pipeline",
               "name":"p","uid":"u","controller":true}],)" +
               std::string(kLabel))},
          {"a CronJob: on its jobTemplate, whose metadata is created", "ml-a",
           R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":
               {"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}}}}",
           R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":
               {"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}},\"metadata\":{" + std::string(kLabel) + "}}}}"},
          {"a plain Pod", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[)" +
               std::string(kGpu) + "]}}",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)" + std::string(kLabel) +
               R"(},"spec":{"containers":[)" + std::string(kGpu) + "]}}"},
          {"a Pod of a controller gpuadmit does not know: Kueue's pod integration reads its own "
           "labels",
           "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[
               {"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","name":"w","uid":"u",
               "controller":true}]},"spec":{"containers":[)" +
               std::string(kGpu) + "]}}",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[
               {"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","name":"w","uid":"u",
               "controller":true}],)" +
               std::string(kLabel) + R"(},"spec":{"containers":[)" + std::string(kGpu) + "]}}"},
          {"a kind Kueue does not integrate (DaemonSet): on the pod template, for its pods", "ml-a",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},
               "spec":{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}}",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},
               "spec":{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]},\"metadata\":{" + std::string(kLabel) + "}}}}"},
          {"a Volcano Job: each GPU task's template, not the CPU one's", "ml-a",
           R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"v"},
               "spec":{"tasks":[{"template":{"spec":{"containers":[{"name":"cpu"}]}}},
               {"template":{"metadata":{"labels":{"role":"w"}},"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}]}}",
           R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"v"},
               "spec":{"tasks":[{"template":{"spec":{"containers":[{"name":"cpu"}]}}},
               {"template":{"metadata":{"labels":{"role":"w","kueue.x-k8s.io/queue-name":
               "team-ml"}},"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}]}}"},
          {"a RayCluster with a CPU head and GPU workers: labelled once", "ml-a",
           R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r"},"spec":{
               "headGroupSpec":{"template":{"spec":{"containers":[{"name":"head"}]}}},
               "workerGroupSpecs":[{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}]}}",
           R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r",)" +
               std::string(kLabel) + R"(},"spec":{
               "headGroupSpec":{"template":{"spec":{"containers":[{"name":"head"}]}}},
               "workerGroupSpecs":[{"template":{"spec":{"containers":[)" +
               std::string(kGpu) + "]}}}]}}"},
      });
  run_mutation_cases(*mutator, policy, {{"UPDATE: never relabelled", "ml-a", job(""), ""}},
                     [](RequestContext& r) { r.operation = Operation::kUpdate; });
  run_mutation_cases(
      *mutator, policy,
      {{"judged only (a copy, --templates validate): its Pods get no label", "ml-a", job(""), ""}},
      [](RequestContext& r) { r.judge_only = true; });
}

// An owner is believed from its kind's controller only (engine/controllers.h
// sent_by_owner_controller): then the owner carries the queue; from anyone else (or from no one:
// lint) the object is labelled as if it had no owner.
TEST_CASE("mutator queue: an owner carries the queue only when its controller sent the object",
          "[mutators][queue]") {
  std::string yaml = queued_policy();
  yaml +=
      "  controllers:\n"
      "    - username: system:serviceaccount:jobset-system:jobset-controller-manager\n"
      "      kinds: [jobset.x-k8s.io/JobSet]\n";
  auto policy = policy_from_yaml(yaml);
  auto mutator = make_queue_label_mutator();
  auto sent_by = [](std::string user) { return [user](RequestContext& r) { r.username = user; }; };
  const std::string jobset_owner =
      R"(,"ownerReferences":[{"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
          "name":"js","uid":"u","controller":true}])";
  const std::string cronjob_owner =
      R"(,"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"c","uid":"u",
          "controller":true}])";
  auto pod = [](const std::string& metadata) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p")" + metadata +
           R"(},"spec":{"containers":[)" + std::string(kGpu) + "]}}";
  };
  const std::string rs_owner =
      R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u",
          "controller":true}])";
  run_mutation_cases(
      *mutator, policy,
      {{"a Job of a JobSet: the JobSet carries the queue", "ml-a", job(jobset_owner), ""}},
      sent_by("system:serviceaccount:jobset-system:jobset-controller-manager"));
  run_mutation_cases(*mutator, policy,
                     {{"a Job of a CronJob: the CronJob's jobTemplate carries the queue (its "
                       "labels are the Job's)",
                       "ml-a", job(cronjob_owner), ""}},
                     sent_by("system:serviceaccount:kube-system:cronjob-controller"));
  run_mutation_cases(
      *mutator, policy,
      {{"a Pod of a ReplicaSet from the replicaset-controller", "ml-a", pod(rs_owner), ""}},
      sent_by("system:serviceaccount:kube-system:replicaset-controller"));
  run_mutation_cases(*mutator, policy,
                     {{"a tenant's Job claiming a JobSet owner: labelled as a bare Job", "ml-a",
                       job(jobset_owner), job(jobset_owner + "," + std::string(kLabel))},
                      {"a tenant's Pod claiming a ReplicaSet owner: labelled as a bare Pod", "ml-a",
                       pod(rs_owner), pod(rs_owner + "," + std::string(kLabel))}},
                     sent_by("alice"));
  run_mutation_cases(*mutator, policy,
                     {{"lint (no sender): a CronJob's Job labelled as if it had no owner", "ml-a",
                       job(cronjob_owner), job(cronjob_owner + "," + std::string(kLabel))}});
}

}  // namespace
}  // namespace queue_label_test
}  // namespace gpuadmit::testing
