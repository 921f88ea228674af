// The policy fields that say whom gpuadmit believes (issue 34): enforcement.nodeAgents.namespaces
// (where a DaemonSet is a node agent) and spec.controllers (which user creates the children of
// which kinds): loading, errors with file:line:column, and the compiled lookups.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/compiled_policy.h"
#include "policies/loader.h"

namespace gpuadmit {
namespace owners_and_node_agents_test {
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  controllers:
    - username: system:serviceaccount:kubeflow:training-operator
      kinds: [kubeflow.org/PyTorchJob, kubeflow.org/TFJob]
    - username: system:serviceaccount:lws-system:lws-controller-manager
      kinds: [leaderworkerset.x-k8s.io/LeaderWorkerSet, Pod]
  enforcement:
    exempt: {namespaces: [kube-system]}
    nodeAgents: {namespaces: [nvidia-device-plugin, "gpu-monitoring-.*"]}
)YAML";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::vector<std::string> errors_of(const std::string& yaml) {
  PolicyLoadResult r = load_policy(yaml, "policy.yaml");
  std::vector<std::string> out;
  for (const PolicyError& e : r.errors) out.push_back(e.to_string());
  return out;
}

TEST_CASE("policy: nodeAgents namespaces and controllers load", "[policy][loader][owners]") {
  PolicyLoadResult r = load_policy(kPolicy, "policy.yaml");
  REQUIRE(r.ok());
  const Policy& p = *r.policy;
  CHECK(p.enforcement.node_agent_namespaces ==
        std::vector<std::string>{"nvidia-device-plugin", "gpu-monitoring-.*"});
  REQUIRE(p.controllers.size() == 2);
  CHECK(p.controllers[0].username == "system:serviceaccount:kubeflow:training-operator");
  REQUIRE(p.controllers[0].kinds.size() == 2);
  CHECK(p.controllers[0].kinds[0].group == "kubeflow.org");
  CHECK(p.controllers[0].kinds[0].kind == "PyTorchJob");
  REQUIRE(p.controllers[1].kinds.size() == 2);
  CHECK(p.controllers[1].kinds[1].group.empty());  // `Pod`: the core group
  CHECK(p.controllers[1].kinds[1].kind == "Pod");
}

TEST_CASE("policy: nodeAgents namespaces are full-match patterns", "[policy][compiled][owners]") {
  PolicyLoadResult r = load_policy(kPolicy, "policy.yaml");
  REQUIRE(r.ok());
  auto compiled = CompiledPolicy::compile(*r.policy);
  CHECK(compiled->is_node_agent_namespace("nvidia-device-plugin"));
  CHECK(compiled->is_node_agent_namespace("gpu-monitoring-a"));
  CHECK_FALSE(compiled->is_node_agent_namespace("nvidia-device-plugin-2"));
  CHECK_FALSE(compiled->is_node_agent_namespace("x-gpu-monitoring-a"));
  CHECK_FALSE(compiled->is_node_agent_namespace("kube-system"));  // exempt is another list
  CHECK_FALSE(compiled->is_node_agent_namespace("ml-team"));
  PolicyLoadResult none = load_policy(
      replace(kPolicy,
              "    nodeAgents: {namespaces: [nvidia-device-plugin, \"gpu-monitoring-.*\"]}\n", ""),
      "policy.yaml");
  REQUIRE(none.ok());
  CHECK_FALSE(
      CompiledPolicy::compile(*none.policy)->is_node_agent_namespace("nvidia-device-plugin"));
}

TEST_CASE("policy: names_controller matches user and group/Kind exactly",
          "[policy][compiled][owners]") {
  PolicyLoadResult r = load_policy(kPolicy, "policy.yaml");
  REQUIRE(r.ok());
  auto c = CompiledPolicy::compile(*r.policy);
  const std::string kubeflow = "system:serviceaccount:kubeflow:training-operator";
  CHECK(c->names_controller(kubeflow, "kubeflow.org", "PyTorchJob"));
  CHECK(c->names_controller(kubeflow, "kubeflow.org", "TFJob"));
  CHECK_FALSE(c->names_controller(kubeflow, "kubeflow.org", "MXJob"));  // not its kind
  CHECK_FALSE(c->names_controller(kubeflow, "", "PyTorchJob"));         // another group
  CHECK_FALSE(c->names_controller("alice", "kubeflow.org", "PyTorchJob"));
  CHECK_FALSE(c->names_controller("", "kubeflow.org", "PyTorchJob"));
  const std::string lws = "system:serviceaccount:lws-system:lws-controller-manager";
  CHECK(c->names_controller(lws, "", "Pod"));
  CHECK(c->names_controller(lws, "leaderworkerset.x-k8s.io", "LeaderWorkerSet"));
  CHECK_FALSE(c->names_controller(lws, "kubeflow.org", "PyTorchJob"));
}

TEST_CASE("policy: nodeAgents and controllers errors are located", "[policy][loader][owners]") {
  struct Case {
    const char* name;
    const char* from;
    const char* to;
    std::vector<std::string> errors;
  };
  const std::vector<Case> cases = {
      {"invalid nodeAgents regex",
       "[nvidia-device-plugin, \"gpu-monitoring-.*\"]",
       "[nvidia-device-plugin, \"gpu-[\"]",
       {"spec.enforcement.nodeAgents.namespaces[1]: invalid regular expression \"gpu-[\": "
        "missing ]: [ (policy.yaml:12:53)"}},
      {"nodeAgents unknown field",
       "nodeAgents: {namespaces:",
       "nodeAgents: {names:",
       {"spec.enforcement.nodeAgents.names: unknown field \"names\" (policy.yaml:12:18)"}},
      {"nodeAgents namespaces not a list",
       "[nvidia-device-plugin, \"gpu-monitoring-.*\"]",
       "nvidia-device-plugin",
       {"spec.enforcement.nodeAgents.namespaces: must be a list, got \"nvidia-device-plugin\" "
        "(policy.yaml:12:30)"}},
      {"controller without username",
       "    - username: system:serviceaccount:kubeflow:training-operator\n      kinds:",
       "    - kinds:",
       {"spec.controllers[0].username: required field is missing (policy.yaml:6:7)"}},
      {"controller with an empty username",
       "username: system:serviceaccount:kubeflow:training-operator",
       "username: \"\"",
       {"spec.controllers[0].username: must not be empty (policy.yaml:6:17)"}},
      {"controller without kinds",
       "      kinds: [kubeflow.org/PyTorchJob, kubeflow.org/TFJob]\n",
       "",
       {"spec.controllers[0].kinds: required field is missing (policy.yaml:6:7)"}},
      {"controller with no kinds",
       "[kubeflow.org/PyTorchJob, kubeflow.org/TFJob]",
       "[]",
       {"spec.controllers[0].kinds: must list at least one kind (group/Kind) (policy.yaml:7:14)"}},
      {"a version where the group belongs",
       "[kubeflow.org/PyTorchJob, kubeflow.org/TFJob]",
       "[kubeflow.org/PyTorchJob, v1/Pod]",
       {"spec.controllers[0].kinds[1]: invalid kind \"v1/Pod\": write group/Kind "
        "(kubeflow.org/PyTorchJob), or Kind alone for the core group (Pod) (policy.yaml:7:40)"}},
      {"apiVersion instead of group",
       "[kubeflow.org/PyTorchJob, kubeflow.org/TFJob]",
       "[kubeflow.org/v1/PyTorchJob]",
       {"spec.controllers[0].kinds[0]: invalid kind \"kubeflow.org/v1/PyTorchJob\": write "
        "group/Kind (kubeflow.org/PyTorchJob), or Kind alone for the core group (Pod) "
        "(policy.yaml:7:15)"}},
      {"a lowercase kind",
       "[kubeflow.org/PyTorchJob, kubeflow.org/TFJob]",
       "[kubeflow.org/pytorchjobs]",
       {"spec.controllers[0].kinds[0]: invalid kind \"kubeflow.org/pytorchjobs\": write "
        "group/Kind (kubeflow.org/PyTorchJob), or Kind alone for the core group (Pod) "
        "(policy.yaml:7:15)"}},
      {"a duplicate kind",
       "[kubeflow.org/PyTorchJob, kubeflow.org/TFJob]",
       "[kubeflow.org/PyTorchJob, kubeflow.org/PyTorchJob]",
       {"spec.controllers[0].kinds[1]: duplicate kind \"kubeflow.org/PyTorchJob\" "
        "(policy.yaml:7:40)"}},
      {"controller unknown field",
       "      kinds: [kubeflow.org/PyTorchJob, kubeflow.org/TFJob]\n",
       "      kinds: [kubeflow.org/PyTorchJob]\n      groups: [system:masters]\n",
       {"spec.controllers[0].groups: unknown field \"groups\" (policy.yaml:8:7)"}},
      {"controllers not a list",
       "    - username: system:serviceaccount:kubeflow:training-operator\n"
       "      kinds: [kubeflow.org/PyTorchJob, kubeflow.org/TFJob]\n"
       "    - username: system:serviceaccount:lws-system:lws-controller-manager\n"
       "      kinds: [leaderworkerset.x-k8s.io/LeaderWorkerSet, Pod]\n",
       "    username: system:serviceaccount:kubeflow:training-operator\n",
       {"spec.controllers: must be a list, got a map (policy.yaml:6:5)"}},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(errors_of(replace(kPolicy, c.from, c.to)) == c.errors); }
  }
}

}  // namespace
}  // namespace owners_and_node_agents_test
}  // namespace gpuadmit
