// render/: the objects `gpuadmit render` makes, asserted whole; the webhook rules against the
// engine's own workload table (every kind it evaluates is covered, nothing else is).

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/workload.h"
#include "engine/workload_kinds.h"
#include "render/cluster_objects.h"
#include "render/webhook_configuration.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace render_test {
namespace {

using testing::policy_from_yaml;

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: test
spec:
  classes:
    h100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
    a100-mig:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      mig: {strategy: mixed, profiles: [1g.10gb, 1g.10gb+me]}
    a100-single:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-PCIE-40GB]}
      mig: {strategy: single, profiles: [3g.20gb]}
    l4-shared:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      timeSlicing: {replicas: 4, renameByDefault: true}
  priorityClasses:
    gpu-serving: {value: 100000}
    gpu-batch: {value: 1000, preemptionPolicy: Never, globalDefault: true}
  tenants:
    - name: ml
      namespaces: ["ml", "ml-.*", "research"]
      allowedClasses: [h100, a100-mig, a100-single]
      quota: {gpus: 12}
    - name: students
      namespaces: ["course-[0-9]+", "teaching"]
      allowedClasses: [l4-shared]
      quota: {gpus: 4}
    - name: everyone
      namespaces: ["team-a"]
    - name: all-classes
      namespaces: ["lab"]
      quota: {gpus: 2}
  enforcement:
    exempt:
      namespaces: ["kube-system", "gpu-.*", "monitoring"]
  workloads:
    - apiVersion: example.com/v1
      kind: TrainingRun
      podSpecs: ["spec.workers[*].template.spec"]
    - apiVersion: apps/v1
      kind: Deployment
      podSpecs: ["spec.template.spec"]
    - apiVersion: batch.example.com/v2
      kind: BatchPolicy
      podSpecs: ["spec.template.spec"]
)YAML";

TEST_CASE("render: plural_resource follows the CRD generators' convention") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Pod", "pods"},
      {"TFJob", "tfjobs"},
      {"RayService", "rayservices"},
      {"LeaderWorkerSet", "leaderworkersets"},
      {"ResourceClaimTemplate", "resourceclaimtemplates"},
      {"BatchPolicy", "batchpolicies"},
      {"Gateway", "gateways"},
      {"Mesh", "meshes"},
      {"Ingress", "ingresses"},
      {"Box", "boxes"},
      {"Batch", "batches"},
  };
  for (const auto& [kind, plural] : cases) {
    INFO(kind);
    CHECK(render::plural_resource(kind) == plural);
  }
}

TEST_CASE("render: is_literal_namespace accepts only DNS labels") {
  for (const char* literal : {"ml", "kube-system", "a", "team-01"}) {
    INFO(literal);
    CHECK(render::is_literal_namespace(literal));
  }
  for (const char* pattern :
       {"", "ml-.*", "course-[0-9]+", "-ml", "ml-", "ML", "a|b", "a.b", "kube_system"}) {
    INFO(pattern);
    CHECK_FALSE(render::is_literal_namespace(pattern));
  }
  CHECK_FALSE(render::is_literal_namespace(std::string(64, 'a')));
  CHECK(render::is_literal_namespace(std::string(63, 'a')));
}

TEST_CASE("render: PriorityClasses, exactly") {
  auto policy = policy_from_yaml(kPolicy);
  const std::vector<Json> objects = render::priority_classes(*policy);
  REQUIRE(objects.size() == 2);
  CHECK(objects[0] == Json::parse(R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
      "metadata": {"name": "gpu-serving", "labels": {"app.kubernetes.io/managed-by": "gpuadmit"}},
      "value": 100000, "preemptionPolicy": "PreemptLowerPriority", "globalDefault": false,
      "description": "GPU priority class of gpuadmit policy test"})"));
  CHECK(objects[1] == Json::parse(R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
      "metadata": {"name": "gpu-batch", "labels": {"app.kubernetes.io/managed-by": "gpuadmit"}},
      "value": 1000, "preemptionPolicy": "Never", "globalDefault": true,
      "description": "GPU priority class of gpuadmit policy test"})"));
}

TEST_CASE("render: a ResourceQuota per literal namespace of a tenant with quota.gpus") {
  auto policy = policy_from_yaml(kPolicy);
  const std::vector<Json> objects = render::resource_quotas(*policy);
  auto quota = [](const char* ns, const char* tenant, const char* hard) {
    Json q = Json::parse(R"({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {
        "name": "gpuadmit-gpus", "namespace": "", "labels": {"app.kubernetes.io/managed-by": "gpuadmit"},
        "annotations": {"gpuadmit.io/tenant": ""}}, "spec": {"hard": {}}})");
    q["metadata"]["namespace"] = ns;
    q["metadata"]["annotations"]["gpuadmit.io/tenant"] = tenant;
    q["spec"]["hard"] = Json::parse(hard);
    return q;
  };
  // ml: whole GPUs and the mixed-strategy MIG names (single strategy stays nvidia.com/gpu);
  // students: the shared name of its time-sliced class; everyone: no quota; all-classes: every
  // class's names. "ml-.*" and "course-[0-9]+" are patterns: no object.
  const char* ml_hard =
      R"({"requests.nvidia.com/gpu": "12", "requests.nvidia.com/mig-1g.10gb": "12",
                            "requests.nvidia.com/mig-1g.10gb.me": "12"})";
  const std::vector<Json> expected = {
      quota("ml", "ml", ml_hard),
      quota("research", "ml", ml_hard),
      quota("teaching", "students",
            R"({"requests.nvidia.com/gpu": "4", "requests.nvidia.com/gpu.shared": "4"})"),
      quota("lab", "all-classes",
            R"({"requests.nvidia.com/gpu": "2", "requests.nvidia.com/mig-1g.10gb": "2",
                "requests.nvidia.com/mig-1g.10gb.me": "2", "requests.nvidia.com/gpu.shared": "2"})"),
  };
  REQUIRE(objects.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(i);
    CHECK(objects[i] == expected[i]);
  }
}

// DRA (issue 34, point 8): Kubernetes' quota admission plugin charges a ResourceClaim its devices
// per DeviceClass under `<DeviceClass>.deviceclass.resource.k8s.io/devices` (k8s
// pkg/quota/v1/evaluator/core/resource_claims.go, KEP-4381). quota.gpus counts GPU units, so a
// DeviceClass of devicesPerGPU 7 gets 7 × quota.gpus devices; only the DeviceClasses of classes the
// tenant may use (GPU018 denies claims for the others).
TEST_CASE("render: a tenant's ResourceQuota caps its DRA DeviceClasses' devices") {
  auto policy = policy_from_yaml(R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: dra}
spec:
  classes:
    a100:
      mig: {strategy: mixed, profiles: [1g.10gb]}
      deviceClasses:
        gpu.nvidia.com: {}
        mig.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7, migProfile: 1g.10gb}
    l4:
      deviceClasses: {l4.gpu.example.com: {}}
  tenants:
    - name: ml
      namespaces: [ml]
      allowedClasses: [a100]
      quota: {gpus: 3}
    - name: web
      namespaces: ["web", "web-.*"]
      quota: {gpus: 2}
)YAML");
  const std::vector<Json> objects = render::resource_quotas(*policy);
  REQUIRE(objects.size() == 2);
  CHECK(objects[0]["metadata"]["namespace"] == "ml");
  CHECK(objects[0]["spec"]["hard"] == Json::parse(R"({
      "requests.nvidia.com/gpu": "3", "requests.nvidia.com/mig-1g.10gb": "3",
      "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "3",
      "mig.nvidia.com.deviceclass.resource.k8s.io/devices": "3",
      "mig-1g.10gb.gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "21"})"));
  CHECK(objects[1]["metadata"]["namespace"] == "web");
  CHECK(objects[1]["spec"]["hard"] == Json::parse(R"({
      "requests.nvidia.com/gpu": "2", "requests.nvidia.com/mig-1g.10gb": "2",
      "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "2",
      "mig.nvidia.com.deviceclass.resource.k8s.io/devices": "2",
      "mig-1g.10gb.gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "14",
      "l4.gpu.example.com.deviceclass.resource.k8s.io/devices": "2"})"));
  CHECK(render::resource_quota_notes(*policy) ==
        std::vector<std::string>{
            "tenant web: no ResourceQuota for namespace pattern \"web-.*\" (a ResourceQuota lives "
            "in one named namespace): create one in each namespace it matches (its keys: "
            "docs/install.md, \"What render makes\"); without it the webhook's GPU013 checks each "
            "pod against quota.gpus 2, but nothing caps the namespace's total"});
}

TEST_CASE("render: the notes of the test policy name its two pattern namespaces") {
  auto policy = policy_from_yaml(kPolicy);
  const std::vector<std::string> notes = render::resource_quota_notes(*policy);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].rfind("tenant ml: no ResourceQuota for namespace pattern \"ml-.*\"", 0) == 0);
  CHECK(notes[1].rfind("tenant students: no ResourceQuota for namespace pattern "
                       "\"course-[0-9]+\"",
                       0) == 0);
}
// The validating webhook's matchCondition: every request but a Pod UPDATE that changes none of
// engine/pod_update.h's fields (tests/native runs it through Kubernetes' own CEL).
const char* const kPodUpdateCondition =
    "request.operation != 'UPDATE' || request.resource.group != '' || "
    "request.resource.resource != 'pods' || "
    "(has(request.subResource) && request.subResource != '') || "
    "[((type(object) == map && 'spec' in object && type(object['spec']) == map) ? object['spec'] : "
    "{})]"
    ".map(s, [((type(oldObject) == map && 'spec' in oldObject && type(oldObject['spec']) == map) ? "
    "oldObject['spec'] : {})].map(o, "
    "[[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) ? "
    "object['metadata'] : {})].map(mv, ((type(mv) == map && 'annotations' in mv && "
    "type(mv['annotations']) == map) ? mv['annotations'] : {}))[0]].map(a, "
    "[[((type(oldObject) == map && 'metadata' in oldObject && type(oldObject['metadata']) == map) "
    "? "
    "oldObject['metadata'] : {})].map(mv, ((type(mv) == map && 'annotations' in mv && "
    "type(mv['annotations']) == map) ? mv['annotations'] : {}))[0]].map(b, "
    "['tolerations', 'nodeSelector', 'affinity', 'schedulingGates']"
    ".exists(f, (f in s) != (f in o) || (f in s && s[f] != o[f])) || "
    "a.exists(k, k.startsWith('cdi.k8s.io/') && (!(k in b) || a[k] != b[k])) || "
    "b.exists(k, k.startsWith('cdi.k8s.io/') && !(k in a)))[0])[0])[0])[0]"
    // ... or it changes a label Kueue reads for the Pod's workload (kPodKueueLabels)
    " || [[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) ? "
    "object['metadata'] : {})].map(mv, ((type(mv) == map && 'labels' in mv && "
    "type(mv['labels']) == map) ? mv['labels'] : {}))[0]].map(l, "
    "[[((type(oldObject) == map && 'metadata' in oldObject && type(oldObject['metadata']) == map) "
    "? oldObject['metadata'] : {})].map(mv, ((type(mv) == map && 'labels' in mv && "
    "type(mv['labels']) == map) ? mv['labels'] : {}))[0]].map(m, "
    "['kueue.x-k8s.io/queue-name', 'kueue.x-k8s.io/priority-class']"
    ".exists(k, (k in l) != (k in m) || (k in l && l[k] != m[k])))[0])[0]"
    // ... or the UPDATE releases the Pod's controller (engine/controllers.h controller_released)
    " || [[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) "
    "? object['metadata'] : {})].map(mv, ((type(mv) == map && 'ownerReferences' in mv && type"
    "(mv['ownerReferences']) == list) ? mv['ownerReferences'] : []))[0].filter(o, type(o) == "
    "map && 'controller' in o && o.controller == true)].map(cn, [[((type(oldObject) == map &&"
    " 'metadata' in oldObject && type(oldObject['metadata']) == map) ? oldObject['metadata'] "
    ": {})].map(mv, ((type(mv) == map && 'ownerReferences' in mv && type(mv['ownerReferences'"
    "]) == list) ? mv['ownerReferences'] : []))[0].filter(o, type(o) == map && 'controller' i"
    "n o && o.controller == true)].map(co, size(co) > 0 && (size(cn) == 0 || (('apiVersion' i"
    "n cn[0] && type(cn[0]['apiVersion']) == string) ? cn[0]['apiVersion'] : '') != (('apiVer"
    "sion' in co[0] && type(co[0]['apiVersion']) == string) ? co[0]['apiVersion'] : '') || (("
    "'kind' in cn[0] && type(cn[0]['kind']) == string) ? cn[0]['kind'] : '') != (('kind' in c"
    "o[0] && type(co[0]['kind']) == string) ? co[0]['kind'] : '') || (('name' in cn[0] && typ"
    "e(cn[0]['name']) == string) ? cn[0]['name'] : '') != (('name' in co[0] && type(co[0]['na"
    "me']) == string) ? co[0]['name'] : '') || (('uid' in cn[0] && type(cn[0]['uid']) == stri"
    "ng) ? cn[0]['uid'] : '') != (('uid' in co[0] && type(co[0]['uid']) == string) ? co[0]['u"
    "id'] : '')))[0])[0]";

TEST_CASE("render: the webhook configurations, exactly") {
  auto policy = policy_from_yaml(kPolicy);
  render::WebhookTarget target;
  target.ns = "gpu-admission";
  target.service = "gpuadmit-webhook";
  target.ca_bundle = "Q0E=";
  const Json mutating = render::mutating_webhook_configuration(*policy, target);
  const Json rules = Json::parse(R"([
    {"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["pods"], "scope": "Namespaced"},
    {"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["pods/ephemeralcontainers"], "scope": "Namespaced"},
    {"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["replicationcontrollers"], "scope": "Namespaced"},
    {"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"], "scope": "Namespaced"},
    {"apiGroups": ["batch"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["jobs", "cronjobs"], "scope": "Namespaced"},
    {"apiGroups": ["jobset.x-k8s.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["jobsets"], "scope": "Namespaced"},
    {"apiGroups": ["ray.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["rayclusters", "rayjobs", "rayservices"], "scope": "Namespaced"},
    {"apiGroups": ["batch.volcano.sh"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["jobs"], "scope": "Namespaced"},
    {"apiGroups": ["leaderworkerset.x-k8s.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["leaderworkersets"], "scope": "Namespaced"},
    {"apiGroups": ["kubeflow.org"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["tfjobs", "pytorchjobs", "mpijobs", "xgboostjobs", "paddlejobs", "mxjobs", "jaxjobs"], "scope": "Namespaced"},
    {"apiGroups": ["trainer.kubeflow.org"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["trainjobs"], "scope": "Namespaced"},
    {"apiGroups": ["workload.codeflare.dev"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["appwrappers"], "scope": "Namespaced"},
    {"apiGroups": ["sparkoperator.k8s.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["sparkapplications"], "scope": "Namespaced"},
    {"apiGroups": ["resource.k8s.io"], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["resourceclaims", "resourceclaimtemplates"], "scope": "Namespaced"},
    {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["trainingruns"], "scope": "Namespaced"},
    {"apiGroups": ["batch.example.com"], "apiVersions": ["v2"], "operations": ["CREATE", "UPDATE"], "resources": ["batchpolicies"], "scope": "Namespaced"}
  ])");
  Json expected = Json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "gpuadmit-webhook", "labels": {"app.kubernetes.io/name": "gpuadmit"}},
    "webhooks": [{
      "name": "mutate.gpuadmit.io", "admissionReviewVersions": ["v1"],
      "clientConfig": {"service": {"namespace": "gpu-admission", "name": "gpuadmit-webhook", "path": "/mutate", "port": 443}, "caBundle": "Q0E="},
      "rules": null, "failurePolicy": "Fail", "matchPolicy": "Equivalent",
      "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["gpu-admission", "kube-node-lease", "kube-system", "monitoring"]}]},
      "sideEffects": "None", "timeoutSeconds": 2, "reinvocationPolicy": "IfNeeded"}]})");
  expected["webhooks"][0]["rules"] = rules;
  CHECK(mutating == expected);

  target.ca_bundle.clear();
  target.failure_policy = "Ignore";
  const Json validating = render::validating_webhook_configuration(*policy, target);
  Json webhook = expected["webhooks"][0];
  webhook["name"] = "validate.gpuadmit.io";
  webhook["clientConfig"] = Json::parse(
      R"({"service": {"namespace": "gpu-admission", "name": "gpuadmit-webhook", "path": "/validate", "port": 443}})");
  webhook["failurePolicy"] = "Ignore";
  webhook["timeoutSeconds"] = 3;
  webhook.erase("reinvocationPolicy");
  // Pod UPDATE, for the validating webhook only, and only when it changes placement or CDI
  // devices (engine/pod_update.h; docs/decisions.md, "Pod UPDATE").
  webhook["rules"].push_back(Json::parse(
      R"({"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["pods"], "scope": "Namespaced"})"));
  webhook["matchConditions"] = Json::array(
      {{{"name", "gpuadmit-pod-update-changes-placement"}, {"expression", kPodUpdateCondition}}});
  CHECK(validating == Json({{"apiVersion", "admissionregistration.k8s.io/v1"},
                            {"kind", "ValidatingWebhookConfiguration"},
                            {"metadata", expected["metadata"]},
                            {"webhooks", Json::array({webhook})}}));

  // The opt-out label only when asked for (a bypass: whoever can label a pod switches the
  // policy off for it); timeouts and further excluded namespaces from the target.
  target.opt_out_label = true;
  target.mutating_timeout = 5;
  target.excluded = {"batch-system"};
  const Json with_label = render::mutating_webhook_configuration(*policy, target)["webhooks"][0];
  CHECK(
      with_label["objectSelector"] ==
      Json::parse(
          R"({"matchExpressions": [{"key": "gpuadmit.io/ignore", "operator": "NotIn", "values": ["true"]}]})"));
  CHECK(with_label["timeoutSeconds"] == 5);
  CHECK(with_label["namespaceSelector"]["matchExpressions"][0]["values"] ==
        Json::array(
            {"batch-system", "gpu-admission", "kube-node-lease", "kube-system", "monitoring"}));
}

TEST_CASE("render: cluster_objects in apply order") {
  auto policy = policy_from_yaml(kPolicy);
  std::vector<std::string> kinds;
  for (const Json& o : render::cluster_objects(*policy, {})) kinds.push_back(o["kind"]);
  CHECK(kinds == std::vector<std::string>{"PriorityClass", "PriorityClass", "ResourceQuota",
                                          "ResourceQuota", "ResourceQuota", "ResourceQuota",
                                          "MutatingWebhookConfiguration",
                                          "ValidatingWebhookConfiguration"});
}

// The coverage contract, from the engine's side: a rule for every kind the engine evaluates
// (the table's kinds with pod templates, their subresources, the policy's workloads), with
// UPDATE for templated kinds; and every resource a rule names is one the engine evaluates
// (is_workload_kind) or a DRA kind.
TEST_CASE("render: the webhook rules cover exactly the kinds gpuadmit evaluates") {
  auto policy = policy_from_yaml(kPolicy);
  const Json rules = render::webhook_rules(render::admitted_kinds(*policy));
  // group, version, resource, operations
  std::set<std::tuple<std::string, std::string, std::string, Json>> covered;
  for (const Json& rule : rules) {
    REQUIRE(rule["apiGroups"].size() == 1);
    REQUIRE(rule["apiVersions"].size() == 1);
    CHECK(rule["scope"] == "Namespaced");
    for (const Json& resource : rule["resources"]) {
      CHECK(covered
                .emplace(rule["apiGroups"][0], rule["apiVersions"][0], resource, rule["operations"])
                .second);
    }
  }
  const Json create = Json::array({"CREATE"}), update = Json::array({"UPDATE"});
  const Json both = Json::array({"CREATE", "UPDATE"});
  size_t expected = 0;
  for (const WorkloadKind& k : workload_kinds()) {
    INFO(k.group << " " << k.kind);
    const std::string resource(k.resource);
    if (k.pod_specs.empty()) {
      // A Kueue kind without pod specs: sent for its queue (GPU025); any other: not sent.
      const size_t sent = covered.count({std::string(k.group), "*", resource, both});
      CHECK(sent == (queued_without_pod_specs(k) ? 1U : 0U));
      expected += sent;
      continue;
    }
    const bool pod = k.kind == "Pod";
    CHECK(covered.count({std::string(k.group), "*", resource, pod ? create : both}) == 1);
    ++expected;
    for (std::string_view sub : k.subresources) {
      CHECK(covered.count({std::string(k.group), "*", resource + "/" + std::string(sub), update}) ==
            1);
      ++expected;
    }
  }
  for (const WorkloadDecl& w : policy->policy().workloads) {
    const auto slash = w.api_version.find('/');
    const std::string group = w.api_version.substr(0, slash);
    const std::string version = w.api_version.substr(slash + 1);
    INFO(w.api_version << " " << w.kind);
    const bool builtin = group == "apps";  // apps/v1 Deployment is covered in every version
    CHECK(covered.count({group, builtin ? "*" : version, render::plural_resource(w.kind), both}) ==
          1);
    if (!builtin) ++expected;
  }
  // The other direction: each rule's kind is one the engine evaluates, or a DRA kind.
  size_t evaluated = 0, dra = 0;
  for (const render::AdmittedKind& k : render::admitted_kinds(*policy)) {
    INFO(k.group << " " << k.kind);
    const std::string version = k.version == "*" ? "v1" : k.version;
    const std::string api_version = k.group.empty() ? version : k.group + "/" + version;
    if (is_workload_kind(api_version, k.kind, *policy) ||
        queued_without_pod_specs(api_version, k.kind)) {
      ++evaluated;
    } else {
      CHECK(k.group == "resource.k8s.io");
      CHECK(k.operations == std::vector<std::string>{"CREATE"});
      ++dra;
    }
  }
  CHECK(evaluated == expected);
  CHECK(dra == 2);
  CHECK(covered.size() == expected + dra);
}

// The chart keeps render's rules for the default policy in a file (charts/gpuadmit/templates
// cannot run the engine): the file must be what render makes now.
TEST_CASE(
    "render: charts/gpuadmit/files/webhook-rules.yaml is render's rules for the default "
    "policy") {
  auto policy =
      policy_from_yaml(testing::slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml"));
  const Json rules = render::webhook_rules(render::admitted_kinds(*policy));
  std::ifstream in(std::string(GPUADMIT_SOURCE_DIR) + "/charts/gpuadmit/files/webhook-rules.yaml");
  REQUIRE(in);
  Json file = Json::array();
  std::string expected_text;
  for (const Json& rule : rules) expected_text += "- " + rule.dump() + "\n";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("- ", 0) == 0) file.push_back(Json::parse(line.substr(2)));
  }
  INFO("replace the file's list with:\n" << expected_text);
  CHECK(file == rules);
}

// GitOps (docs/install.md): templates go to the validating webhook only; Pods, their ephemeral
// containers and the DRA claims stay with the mutating one.
TEST_CASE("render: --templates validate leaves the mutating webhook Pods and claims") {
  auto policy = policy_from_yaml(kPolicy);
  render::WebhookTarget target;
  target.templates = TemplateMode::kValidate;
  const Json mutating = render::mutating_webhook_configuration(*policy, target);
  CHECK(mutating["webhooks"][0]["rules"] == Json::parse(R"([
    {"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["pods"], "scope": "Namespaced"},
    {"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["pods/ephemeralcontainers"], "scope": "Namespaced"},
    {"apiGroups": ["resource.k8s.io"], "apiVersions": ["*"], "operations": ["CREATE"], "resources": ["resourceclaims", "resourceclaimtemplates"], "scope": "Namespaced"}
  ])"));
  const Json validating = render::validating_webhook_configuration(*policy, target);
  Json rules = render::webhook_rules(render::admitted_kinds(*policy));
  rules.push_back(render::pod_update_rule());
  CHECK(validating["webhooks"][0]["rules"] == rules);
}

TEST_CASE(
    "render: excluded namespaces: kube-system, kube-node-lease, the release namespace, the "
    "literal exempt ones") {
  auto policy = policy_from_yaml(kPolicy);
  render::WebhookTarget target;
  target.ns = "gpuadmit";
  CHECK(render::excluded_namespaces(*policy, target) ==
        std::vector<std::string>{"gpuadmit", "kube-node-lease", "kube-system", "monitoring"});
  target.ns = "monitoring";
  CHECK(render::excluded_namespaces(*policy, target) ==
        std::vector<std::string>{"kube-node-lease", "kube-system", "monitoring"});
  // Whatever the policy exempts: kube-system is never reviewed.
  auto bare = policy_from_yaml(R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: bare}
spec:
  classes:
    gpu: {nodeSelector: {nvidia.com/gpu.present: ["true"]}, gpusPerNode: 8}
  tenants:
    - {name: all, namespaces: [".*"], defaultClass: gpu}
)");
  CHECK(render::excluded_namespaces(*bare, target) ==
        std::vector<std::string>{"kube-node-lease", "kube-system", "monitoring"});
}

}  // namespace
}  // namespace render_test
}  // namespace gpuadmit
