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
  run_cases(
      *rule, policy,
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
          {"Kueue's deprecated annotation",
           "research",
           job(R"(,"annotations":{"kueue.x-k8s.io/queue-name":"q"})", gpu()),
           {}},
          {"a CPU Job", "research", job("", container("c", "", "")), {}},
          {"a tenant that names a queue without requiring it", "ml-a", job("", gpu()), {}},
          {"a CronJob: the jobTemplate's labels",
           "research",
           R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{
               "jobTemplate":{"spec":{"template":{"spec":{"containers":[)" +
               gpu() + "]}}}}}}",
           {"spec.jobTemplate.metadata.labels[\"kueue.x-k8s.io/queue-name\"] | " +
            std::string(kMessage)}},
          {"a Job of a JobSet is queued through the JobSet",
           "research",
           job(R"(,"ownerReferences":[{"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
               "name":"js","uid":"u","controller":true}])",
               gpu()),
           {}},
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
          {"a ReplicaSet of a Deployment: queued through the Deployment",
           "research",
           R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r",
               "ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"d",
               "uid":"u","controller":true}]},"spec":{"template":{"spec":{"containers":[)" +
               gpu() + "]}}}}",
           {}},
          {"a Pod of a ReplicaSet: its owners carry the queue",
           "research",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[
               {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u",
               "controller":true}]},"spec":{"containers":[)" +
               gpu() + "]}}",
           {}},
          {"a Pod of a controller gpuadmit does not know: Kueue's pod integration's",
           "research",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":[
               {"apiVersion":"tekton.dev/v1","kind":"TaskRun","name":"t","uid":"u",
               "controller":true}]},"spec":{"containers":[)" +
               gpu() + "]}}",
           {label + std::string(kMessage)}},
          {"a Job of a CronJob: the CronJob's jobTemplate was checked",
           "research",
           job(R"(,"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"c",
               "uid":"u","controller":true}])",
               gpu()),
           {}},
      });
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
  PodFixture update(policy, job("", gpu()), "research");
  update.request.operation = Operation::kUpdate;
  CHECK(check_rule(*rule, update).empty());
}

}  // namespace
}  // namespace queue_required_test
}  // namespace gpuadmit::testing
