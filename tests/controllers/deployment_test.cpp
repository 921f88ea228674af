// Issue 20's table, with the Deployment and ReplicaSet controllers mirrored
// (tests/controllers/kube_mirror.h) and gpuadmit registered as `gpuadmit render` registers it:
// Deployments that exist before the webhook, then the usual day-two commands, and a policy that
// changes between a Deployment and its ReplicaSet. What converges is what Kubernetes decides:
// the Deployment controller finds its new ReplicaSet by EqualIgnoreHash (FindNewReplicaSet) and
// bumps collisionCount when a ReplicaSet of its name has another template (getNewReplicaSet).

#include <catch2/catch.hpp>

#include <string>

#include "tests/controllers/kube_mirror.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit::testing {
namespace deployment_test {
namespace {

std::string default_policy_text() {
  return slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
}

PolicyPtr default_policy() { return policy_from_yaml(default_policy_text()); }

// The default policy with its one tenant covering `ml-.*` only: team-a is in no tenant.
PolicyPtr policy_without_team_a() {
  std::string text = default_policy_text();
  const std::string all = R"(namespaces: [".*"])";
  REQUIRE(text.find(all) != std::string::npos);
  text.replace(text.find(all), all.size(), R"(namespaces: ["ml-.*"])");
  return policy_from_yaml(text);
}

// The default policy after a platform change: the GPU pool gets a second taint and the tenant's
// CPU default request grows. Templates mutated under the old policy differ from the new one's.
PolicyPtr changed_policy() {
  std::string text = default_policy_text();
  const std::string taint = "        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
  REQUIRE(text.find(taint) != std::string::npos);
  text.replace(text.find(taint), taint.size(),
               taint + "        - {key: example.com/pool, value: gpu, effect: NoSchedule}\n");
  const std::string request = R"(request: {cpu: "1", memory: 4Gi})";
  REQUIRE(text.find(request) != std::string::npos);
  text.replace(text.find(request), request.size(), R"(request: {cpu: "2", memory: 8Gi})");
  return policy_from_yaml(text);
}

constexpr const char* kCpuContainers = R"([{"name":"web","image":"nginx:1.25"}])";
constexpr const char* kGpuContainers =
    R"([{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3",
         "resources":{"limits":{"nvidia.com/gpu":"1"}}}])";
constexpr const char* kGpuAndSidecar =
    R"([{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3",
         "resources":{"limits":{"nvidia.com/gpu":"1"}}},
        {"name":"log-shipper","image":"fluent/fluent-bit:2.2"}])";

Json deployment(const char* containers) {
  Json d = Json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},
    "spec":{"replicas":1,"selector":{"matchLabels":{"app":"app"}},
            "template":{"metadata":{"labels":{"app":"app"}},"spec":{}}}})");
  d["spec"]["template"]["spec"]["containers"] = Json::parse(containers);
  return d;
}

// kubectl rollout restart: a PATCH of the template's restartedAt annotation.
void rollout_restart(ApiServer& api) {
  Json d = api.get("Deployment", "app");
  d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
      "2024-05-01T10:00:00Z";
  REQUIRE(api.update(d).ok());
}

// kubectl set image deployment/app CONTAINER=IMAGE.
void set_image(ApiServer& api, const std::string& container, const std::string& image) {
  Json d = api.get("Deployment", "app");
  for (Json& c : d["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == container) c["image"] = image;
  }
  REQUIRE(api.update(d).ok());
}

// What issue 20 measured, and whether the rollout finished.
struct Outcome {
  size_t replica_sets = 0;
  int64_t collision_count = 0;
  bool settled = false;
  bool complete = false;  // the new ReplicaSet holds every replica, available; the old ones none
  Json new_rs;
};

Outcome outcome_of(ApiServer& api, int rounds, int max_rounds = 40) {
  Outcome o;
  const Json d = api.get("Deployment", "app");
  const std::vector<Json> sets = api.list("ReplicaSet");
  o.replica_sets = sets.size();
  if (d.contains("status")) o.collision_count = d["status"].value("collisionCount", int64_t{0});
  o.settled = rounds <= max_rounds;
  o.complete = true;
  bool found = false;
  for (const Json& rs : sets) {  // FindNewReplicaSet: the oldest equal one
    if (!found && equal_ignore_hash(rs["spec"]["template"], d["spec"]["template"])) {
      found = true;
      o.new_rs = rs;
      o.complete = o.complete && spec_replicas(rs) == spec_replicas(d) &&
                   available_replicas(rs) == spec_replicas(d);
    } else {
      o.complete = o.complete && spec_replicas(rs) == 0;
    }
  }
  o.complete = o.complete && found;
  return o;
}

// The env of a pod's container, by name, as a name → value map.
Json env_of(const Json& pod, const std::string& container) {
  Json env = Json::object();
  for (const Json& c : pod["spec"]["containers"]) {
    if (c["name"] != container) continue;
    for (const Json& e : c.value("env", Json::array()))
      env[e["name"].get<std::string>()] = e.value("value", "");
  }
  return env;
}

// The pods of the ReplicaSet, as admitted.
std::vector<Json> pods_of(ApiServer& api, const Json& rs) {
  std::vector<Json> out;
  for (Json& p : api.list("Pod")) {
    if (controller_uid(p) == rs["metadata"]["uid"]) out.push_back(std::move(p));
  }
  return out;
}

// A Deployment created while gpuadmit is not registered, rolled out by the controllers.
ApiServer cluster_with_existing(const char* containers, PolicyPtr policy = default_policy()) {
  ApiServer api(std::move(policy));
  api.set_webhook(false);
  REQUIRE(api.create(deployment(containers)).ok());
  REQUIRE(run_controllers(api) <= 40);
  REQUIRE(api.list("ReplicaSet").size() == 1);
  api.set_webhook(true);
  return api;
}

TEST_CASE("deployment: CPU-only, created before the webhook, then kubectl rollout restart") {
  ApiServer api = cluster_with_existing(kCpuContainers);
  rollout_restart(api);
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 2);  // the old one, scaled to 0, and the restarted one
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  CHECK(api.refusals().empty());
  // The restart changed the template, so gpuadmit mutated it (the Deployment's UPDATE); the
  // ReplicaSet is its copy, and its pods carry the mutation.
  const Json d = api.get("Deployment", "app");
  CHECK(d["spec"]["template"]["spec"]["containers"][0]["env"] ==
        Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])"));
  for (const Json& pod : pods_of(api, o.new_rs)) {
    CHECK(env_of(pod, "web") == Json{{"NVIDIA_VISIBLE_DEVICES", "void"}});
  }
}

TEST_CASE("deployment: the same in a namespace no tenant covers") {
  ApiServer api = cluster_with_existing(kCpuContainers, policy_without_team_a());
  rollout_restart(api);
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 2);
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  for (const Json& pod : pods_of(api, o.new_rs)) {
    CHECK(env_of(pod, "web") == Json{{"NVIDIA_VISIBLE_DEVICES", "void"}});
  }
}

TEST_CASE("deployment: GPU + CPU sidecar, created before the webhook, then kubectl set image") {
  ApiServer api = cluster_with_existing(kGpuAndSidecar);
  set_image(api, "log-shipper", "fluent/fluent-bit:3.0");
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 2);
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  for (const Json& pod : pods_of(api, o.new_rs)) {
    CHECK(env_of(pod, "log-shipper") == Json{{"NVIDIA_VISIBLE_DEVICES", "void"}});
    CHECK(env_of(pod, "trainer") == Json::object());
    CHECK(pod["spec"]["tolerations"] ==
          Json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])"));
  }
}

TEST_CASE("deployment: GPU, created before the webhook, then kubectl scale --replicas=2") {
  ApiServer api = cluster_with_existing(kGpuContainers);
  const int patches = api.webhook_patches();
  // The scale subresource is not in the webhook rules: the API server does not call gpuadmit.
  REQUIRE(api.scale("Deployment", "app", 2).ok());
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 1);  // scaling creates no ReplicaSet
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  CHECK(spec_replicas(o.new_rs) == 2);
  // The controller's ReplicaSet UPDATE (replicas and annotations) was sent and not patched;
  // only the new Pod was.
  CHECK(api.webhook_patches() == patches + 1);
  // The ReplicaSet's template is still the Deployment's, unmutated as it was written.
  CHECK(equal_ignore_hash(o.new_rs["spec"]["template"],
                          api.get("Deployment", "app")["spec"]["template"]));
}

// kubectl edit / apply of spec.replicas: an UPDATE of the Deployment itself, template unchanged.
TEST_CASE("deployment: GPU, created before the webhook, then its replicas edited") {
  ApiServer api = cluster_with_existing(kGpuContainers);
  Json d = api.get("Deployment", "app");
  d["spec"]["replicas"] = 3;
  const Written edited = api.update(d);
  REQUIRE(edited.ok());
  CHECK(edited.sent);
  CHECK(edited.mutating_patch == Json::array());  // no template changed: nothing to do
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 1);
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  CHECK(spec_replicas(o.new_rs) == 3);
}

TEST_CASE("deployment: created with the webhook, then kubectl rollout restart") {
  for (const char* containers : {kCpuContainers, kGpuContainers}) {
    ApiServer api(default_policy());
    REQUIRE(api.create(deployment(containers)).ok());
    REQUIRE(run_controllers(api) <= 40);
    CHECK(api.list("ReplicaSet").size() == 1);
    rollout_restart(api);
    const Outcome o = outcome_of(api, run_controllers(api));
    CHECK(o.settled);
    CHECK(o.replica_sets == 2);
    CHECK(o.collision_count == 0);
    CHECK(o.complete);
  }
}

TEST_CASE("deployment: without the webhook (the reference)") {
  ApiServer api(default_policy());
  api.set_webhook(false);
  REQUIRE(api.create(deployment(kGpuAndSidecar)).ok());
  REQUIRE(run_controllers(api) <= 40);
  rollout_restart(api);
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 2);
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
}

TEST_CASE("deployment: a policy change between the Deployment and its ReplicaSets") {
  ApiServer api(default_policy());
  REQUIRE(api.create(deployment(kGpuAndSidecar)).ok());
  REQUIRE(run_controllers(api) <= 40);
  const Json first = api.list("ReplicaSet").at(0);
  api.set_policy(changed_policy());

  SECTION("resync, scale and a recreated ReplicaSet: no new ReplicaSet") {
    REQUIRE(run_controllers(api) <= 40);
    REQUIRE(api.scale("Deployment", "app", 3).ok());
    REQUIRE(run_controllers(api) <= 40);
    // The ReplicaSet deleted (kubectl delete rs): the controller makes it again from the
    // Deployment's template, mutated under the old policy, and gpuadmit leaves the copy alone.
    api.remove("ReplicaSet", first["metadata"]["name"].get<std::string>());
    const Outcome o = outcome_of(api, run_controllers(api));
    CHECK(o.settled);
    CHECK(o.replica_sets == 1);
    CHECK(o.collision_count == 0);
    CHECK(o.complete);
    CHECK(o.new_rs["metadata"]["name"] == first["metadata"]["name"]);  // the same hash
    // Its new pods get the new policy: they are the leaves.
    for (const Json& pod : pods_of(api, o.new_rs)) {
      CHECK(pod["spec"]["tolerations"].size() == 2);
    }
  }
  SECTION("rollout restart: the template is mutated under the new policy, once") {
    rollout_restart(api);
    const Outcome o = outcome_of(api, run_controllers(api));
    CHECK(o.settled);
    CHECK(o.replica_sets == 2);
    CHECK(o.collision_count == 0);
    CHECK(o.complete);
    CHECK(o.new_rs["spec"]["template"]["spec"]["tolerations"].size() == 2);
  }
  CHECK(api.refusals().empty());
}

TEST_CASE("deployment: GitOps mode (--templates validate): nothing but Pods is patched") {
  ApiServer api(default_policy());
  api.set_webhook(true, TemplateMode::kValidate);
  REQUIRE(api.create(deployment(kGpuAndSidecar)).ok());
  REQUIRE(run_controllers(api) <= 40);
  // The Deployment's template is stored as written.
  CHECK(semantic_equal(api.get("Deployment", "app")["spec"]["template"],
                       deployment(kGpuAndSidecar)["spec"]["template"]));
  rollout_restart(api);
  const Outcome o = outcome_of(api, run_controllers(api));
  CHECK(o.settled);
  CHECK(o.replica_sets == 2);
  CHECK(o.collision_count == 0);
  CHECK(o.complete);
  // Every patch went to a Pod: 1 before the restart, 1 after.
  CHECK(api.webhook_patches() == 2);
  for (const Json& pod : pods_of(api, o.new_rs)) {
    CHECK(env_of(pod, "log-shipper") == Json{{"NVIDIA_VISIBLE_DEVICES", "void"}});
  }
}

// The mirror can fail: a webhook that mutates the ReplicaSets the controller creates (what
// gpuadmit did before) makes the Deployment controller create ReplicaSet after ReplicaSet, as
// issue 20 measured with the real controllers.
TEST_CASE("deployment: the control — mutating the controller's copies loops") {
  ApiServer api = cluster_with_existing(kCpuContainers);
  api.child_mutation = [](Json& rs) {
    rs["spec"]["template"]["spec"]["containers"][0]["env"] =
        Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])");
  };
  api.set_webhook(true);
  // As before the fix: the restart's Deployment UPDATE left unmutated (CREATE-only env).
  api.set_webhook(false);
  rollout_restart(api);
  api.set_webhook(true);
  const Outcome o = outcome_of(api, run_controllers(api, 20), 20);
  CHECK_FALSE(o.settled);
  CHECK(o.replica_sets > 5);
  CHECK(o.collision_count > 5);
  CHECK_FALSE(o.complete);
}

}  // namespace
}  // namespace deployment_test
}  // namespace gpuadmit::testing
