// render --native (docs/native.md): the rendered structure — kinds, names, bindings, scopes,
// resource rules, which rules and mutations each policy holds — and the native table against the
// rules and mutators that exist and against docs/native.md. What the CEL does is proven with
// Kubernetes' own plugins in tests/native.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mutators/all_mutators.h"
#include "render/native_cel.h"
#include "render/native_fast_path.h"
#include "render/native_model.h"
#include "render/native_policies.h"
#include "render/native_static.h"
#include "render/native_table.h"
#include "render/webhook_configuration.h"
#include "rules/all_rules.h"
#include "rules/document_rules.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit {
namespace native_test {
namespace {

using render::native::NativeMode;
using render::native::NativeOptions;
using testing::policy_from_yaml;

constexpr const char* kTenants = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: scopes
spec:
  classes:
    h100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
  priorityClasses:
    gpu-batch: {value: 1000, preemptionPolicy: Never}
  tenants:
    - name: ML Team
      namespaces: ["ml", "ml-.*", "research", "kube-system"]
      allowedClasses: [h100]
      limits: {maxGPUsPerPod: 8}
    - name: students
      namespaces: ["course-[0-9]+", "teaching", "ml-extra"]
      enforcement: {mode: audit}
    - name: lab
      namespaces: ["lab", "research", "gpu-lab"]
      enforcement:
        mutate: false
        rules: {GPU006: warn, GPU004: off}
    - name: taken
      namespaces: ["ml", "gpuadmit"]
  enforcement:
    exempt:
      namespaces: ["kube-system", "gpu-.*", "gpuadmit"]
  workloads:
    - apiVersion: example.com/v1
      kind: Pipeline
      podSpecs: ["spec.stages[*].workers[*].template.spec"]
    - apiVersion: example.com/v1
      kind: Runner
      podSpecs: ["spec.runners.*.template.spec"]
)YAML";

std::vector<Json> render_native(const CompiledPolicy& policy, NativeMode mode,
                                std::string api = "v1") {
  NativeOptions options;
  options.mode = mode;
  options.mutating_api = api;
  return render::native::native_policies(policy, options);
}

std::vector<std::string> names_and_kinds(const std::vector<Json>& objects) {
  std::vector<std::string> out;
  for (const Json& o : objects) {
    out.push_back(o["kind"].get<std::string>() + " " + o["metadata"]["name"].get<std::string>());
  }
  return out;
}

const Json& find(const std::vector<Json>& objects, const std::string& kind,
                 const std::string& name) {
  for (const Json& o : objects) {
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  }
  FAIL("no " + kind + " " + name);
  static const Json none;
  return none;
}

std::vector<std::string> annotation_list(const Json& object, const char* key) {
  std::vector<std::string> out;
  const std::string text = object["metadata"]["annotations"][key];
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Json name_selector(const char* op, std::vector<std::string> names) {
  return {{"matchExpressions",
           Json::array(
               {{{"key", "kubernetes.io/metadata.name"}, {"operator", op}, {"values", names}}})}};
}

const Json kIgnore = Json::parse(
    R"j({"matchExpressions": [{"key": "gpuadmit.io/ignore", "operator": "NotIn", "values": ["true"]}]})j");

TEST_CASE("native: quote writes CEL string literals") {
  using render::native::quote;
  CHECK(quote("gpu") == "'gpu'");
  CHECK(quote("it's") == R"('it\'s')");
  CHECK(quote(R"(a\b)") == R"('a\\b')");
  CHECK(quote("a\nb\tc\r") == R"('a\nb\tc\r')");
  CHECK(quote(std::string("\x01") + "\x7f") == R"('\x01\x7F')");
  CHECK(quote("NVIDIA-H100 ×8") == "'NVIDIA-H100 ×8'");
  CHECK(render::native::string_list({"a", "b'"}) == R"(['a', 'b\''])");
  CHECK(render::native::string_list({}) == "[]");
  // RE2 full match: anchored, the pattern grouped so that an alternation stays inside.
  CHECK(render::native::full_match("request.namespace", "a|b") ==
        "request.namespace.matches('^(?:a|b)$')");
}

TEST_CASE("native: the default policy's objects, full") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  // One set of policies, whatever the tenants; no tenant in audit mode: no audit policy.
  CHECK(names_and_kinds(objects) ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-deny",
                                 "ValidatingAdmissionPolicy gpuadmit-warn",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-warn",
                                 "MutatingAdmissionPolicy gpuadmit-mutate",
                                 "MutatingAdmissionPolicyBinding gpuadmit-mutate",
                                 "MutatingAdmissionPolicy gpuadmit-mutate-non-gpu-pods",
                                 "MutatingAdmissionPolicyBinding gpuadmit-mutate-non-gpu-pods"});
  for (const Json& o : objects) CHECK(o["apiVersion"] == "admissionregistration.k8s.io/v1");
  // A plain object (render/native_fast_path.h) reaches none of the full policies.
  const Json concerns_gpus = {{"name", "gpuadmit-concerns-gpus"},
                              {"expression", "!" + render::native::plain_object(*policy)}};

  const Json& deny = find(objects, "ValidatingAdmissionPolicy", "gpuadmit-deny");
  // GPU010 and GPU013 need priority.allowed and quota, which the default tenant has not; GPU014
  // warns; GPU016, 017, 022, 023 are not native.
  CHECK(annotation_list(deny, "gpuadmit.io/rules") ==
        std::vector<std::string>{"GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006",
                                 "GPU007", "GPU008", "GPU009", "GPU011", "GPU012", "GPU015",
                                 "GPU018", "GPU019", "GPU020", "GPU021", "GPU024", "GPU026"});
  CHECK(deny["metadata"]["annotations"]["gpuadmit.io/native-mode"] == "full");
  CHECK_FALSE(deny["metadata"]["annotations"].contains("gpuadmit.io/tenant"));
  CHECK(deny["metadata"]["labels"] == Json({{"app.kubernetes.io/managed-by", "gpuadmit"}}));
  const Json& spec = deny["spec"];
  CHECK(spec["failurePolicy"] == "Fail");
  // ".*" and literal exempt names only: no scope condition, just the validating webhook's Pod
  // UPDATE condition (render/webhook_configuration.h), then the fast path's.
  CHECK(spec["matchConditions"] == Json::array({render::pod_update_condition(), concerns_gpus}));
  CHECK(spec["matchConstraints"]["matchPolicy"] == "Equivalent");
  // The webhook's kinds and operations, but no subresource: `kubectl debug`'s
  // pods/ephemeralcontainers UPDATE carries the whole Pod, whose other containers the native
  // model would judge again (the webhook judges only the added ones).
  std::vector<render::AdmittedKind> whole;
  for (const render::AdmittedKind& k : render::admitted_kinds(*policy)) {
    if (k.resource.find('/') == std::string::npos) whole.push_back(k);
  }
  CHECK(whole.size() + 1 == render::admitted_kinds(*policy).size());
  // And Pod UPDATE, as the validating webhook gets it; the mutating policy never does.
  Json rules = render::webhook_rules(whole);
  rules.push_back(render::pod_update_rule());
  CHECK(spec["matchConstraints"]["resourceRules"] == rules);
  std::vector<std::string> variables;
  for (const Json& v : spec["variables"]) variables.push_back(v["name"]);
  CHECK(variables == std::vector<std::string>{"av", "kd", "gk", "top", "jo", "otpls", "bhc", "qch",
                                              "tpls", "tn", "t_aa", "t_ac", "t_ad", "t_dc", "t_mc",
                                              "t_mp", "ctx"});
  // The one tenant matches every name: no lookup. Then one map per member the policy reads,
  // tenant index to value, with the tenants that set it (none sets the DRA permissions).
  CHECK(spec["variables"][9]["expression"] == "0");
  CHECK(spec["variables"][10]["expression"] == "{}");
  CHECK(spec["variables"][11]["expression"] == "{0: ['gpu']}");
  CHECK(spec["variables"][15]["expression"] == "{0: 8}");
  // On UPDATE only the templates that changed are read; an object the native policies never
  // mutate (a controller's copy) is judged by the rules that hold unmutated only.
  CHECK(spec["variables"][5]["expression"].get<std::string>().starts_with(
      "request.operation == 'UPDATE' ? ("));
  // ... unless someone else than its controller detached a controller's child or changed its
  // spec, or a queue label changed where Kueue reads it for the whole workload (GPU025).
  CHECK(spec["variables"][6]["expression"].get<std::string>().starts_with(
      "(request.operation != 'UPDATE' || request.userInfo.username == '' ? 0 : "));
  CHECK(spec["variables"][7]["expression"].get<std::string>().starts_with(
      "(request.operation == 'UPDATE' && variables.gk != '/Pod' && "));
  CHECK(spec["variables"][7]["expression"].get<std::string>().ends_with(") || variables.bhc >= 2"));
  CHECK(spec["variables"][8]["expression"].get<std::string>().ends_with(
      ".filter(x, variables.qch || !variables.otpls.exists(o, o.id == x.id && o.t == x.t))"));
  // One validation per rule, its message led by the rule id, reason Forbidden.
  const std::vector<std::string> ids = annotation_list(deny, "gpuadmit.io/rules");
  REQUIRE(spec["validations"].size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const Json& v = spec["validations"][i];
    INFO(ids[i]);
    CHECK(v["expression"].get<std::string>().starts_with("variables.jo || (") !=
          render::native::in_fallback(*policy, ids[i]));
    if (ids[i] == "GPU003") {
      // Two messages: a namespace of no tenant, a class the tenant does not allow.
      CHECK(v["messageExpression"].get<std::string>().starts_with(
          "variables.tn == 1 ? 'GPU003: this namespace belongs to no tenant"));
    } else {
      CHECK(v["message"].get<std::string>().starts_with(ids[i] + ": "));
    }
    CHECK(v["reason"] == "Forbidden");
    CHECK_FALSE(v["expression"].get<std::string>().empty());
  }
  CHECK(find(objects, "ValidatingAdmissionPolicyBinding", "gpuadmit-deny")["spec"] ==
        Json({{"policyName", "gpuadmit-deny"},
              {"validationActions", {"Deny"}},
              {"matchResources",
               {{"namespaceSelector",
                 name_selector("NotIn", {"gpu-operator", "gpuadmit", "kube-node-lease",
                                         "kube-public", "kube-system"})}}}}));

  const Json& warn = find(objects, "ValidatingAdmissionPolicy", "gpuadmit-warn");
  CHECK(annotation_list(warn, "gpuadmit.io/rules") == std::vector<std::string>{"GPU014"});
  CHECK(find(objects, "ValidatingAdmissionPolicyBinding",
             "gpuadmit-warn")["spec"]["validationActions"] == Json::array({"Warn"}));

  const Json& mutate = find(objects, "MutatingAdmissionPolicy", "gpuadmit-mutate");
  // nonGpuOnGpuPool is deny: no strip; the default tenant names no queue.
  CHECK(annotation_list(mutate, "gpuadmit.io/mutations") ==
        std::vector<std::string>{"requests-equal-limits", "class", "tolerations", "node-affinity",
                                 "defaults", "priority", "gpu-visibility"});
  // One JSON Patch expression: the API server encodes, patches, decodes and defaults the object
  // after each mutation, and evaluates the variables again (render/native_mutations.h).
  CHECK(mutate["spec"]["mutations"].size() == 1);
  CHECK(mutate["spec"]["reinvocationPolicy"] == "IfNeeded");
  // A non-Pod object with a controller is never mutated (docs/decisions.md, "Controllers
  // converge"); a Pod always is.
  REQUIRE(mutate["spec"]["matchConditions"].size() == 2);
  CHECK(mutate["spec"]["matchConditions"][1] == concerns_gpus);
  const Json& copy = mutate["spec"]["matchConditions"][0];
  CHECK(copy["name"] == "gpuadmit-not-a-copy");
  CHECK(copy["expression"].get<std::string>().starts_with(
      "(request.kind.group == '' && request.kind.kind == 'Pod') || !"));
  CHECK(copy["expression"].get<std::string>().ends_with(
      ".exists(o, type(o) == map && 'controller' in o && o.controller == true)"));
  CHECK(mutate["spec"]["failurePolicy"] == "Fail");
  for (const Json& m : mutate["spec"]["mutations"]) {
    CHECK(m["patchType"] == "JSONPatch");
    CHECK_FALSE(m["jsonPatch"]["expression"].get<std::string>().empty());
    // kubernetes/kubernetes#142181: no Object{} initializer anywhere.
    CHECK(m["jsonPatch"]["expression"].get<std::string>().find("Object.") == std::string::npos);
  }
  CHECK(find(objects, "MutatingAdmissionPolicyBinding", "gpuadmit-mutate")["spec"] ==
        Json({{"policyName", "gpuadmit-mutate"},
              {"matchResources",
               {{"namespaceSelector",
                 name_selector("NotIn", {"gpu-operator", "gpuadmit", "kube-node-lease",
                                         "kube-public", "kube-system"})}}}}));
}

// The opt-out label is a bypass any tenant can set (docs/install.md): the bindings carry it only
// with `render --opt-out-label`, as the webhook configurations do.
TEST_CASE("native: the opt-out label only with opt_out_label, on every binding") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  NativeOptions options;
  for (const bool opt_out : {false, true}) {
    INFO(opt_out);
    options.opt_out_label = opt_out;
    int bindings = 0;
    for (const Json& o : render::native::native_policies(*policy, options)) {
      if (!o["kind"].get<std::string>().ends_with("Binding")) continue;
      ++bindings;
      const Json& match = o["spec"]["matchResources"];
      CHECK(match.contains("namespaceSelector"));
      if (opt_out) {
        CHECK(match["objectSelector"] == kIgnore);
      } else {
        CHECK_FALSE(match.contains("objectSelector"));
      }
    }
    CHECK(bindings == 4);  // deny, warn, mutate, mutate-non-gpu-pods
  }
}

TEST_CASE("native: the mutating policies' kinds: no DRA claims, Jobs and JobSets on CREATE") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  const Json rules = find(objects, "MutatingAdmissionPolicy",
                          "gpuadmit-mutate")["spec"]["matchConstraints"]["resourceRules"];
  Json expected = render::webhook_rules(render::admitted_kinds(*policy));
  Json kept = Json::array();
  for (Json r : expected) {
    if (r["apiGroups"][0] == "resource.k8s.io") continue;
    kept.push_back(r);
  }
  // batch jobs and jobset.x-k8s.io jobsets split off into CREATE-only rules.
  bool job = false, jobset = false;
  for (const Json& r : rules) {
    const bool create_only = r["operations"] == Json::array({"CREATE"});
    for (const Json& resource : r["resources"]) {
      if (r["apiGroups"][0] == "batch" && resource == "jobs") job = create_only;
      if (r["apiGroups"][0] == "jobset.x-k8s.io" && resource == "jobsets") jobset = create_only;
      if (r["apiGroups"][0] == "batch" && resource == "cronjobs") CHECK_FALSE(create_only);
      CHECK(r["apiGroups"][0] != "resource.k8s.io");
    }
  }
  CHECK(job);
  CHECK(jobset);
}

TEST_CASE("native: fallback holds the security and safety rules only, and no mutation") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFallback);
  CHECK(names_and_kinds(objects) ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-deny"});
  CHECK(annotation_list(objects[0], "gpuadmit.io/rules") ==
        std::vector<std::string>{"GPU003", "GPU005", "GPU009", "GPU018", "GPU019", "GPU020",
                                 "GPU021", "GPU024", "GPU026"});
  CHECK(objects[0]["metadata"]["annotations"]["gpuadmit.io/native-mode"] == "fallback");

  // With strip, the webhook removes what GPU009 reports: the fallback must not deny it.
  std::string text = testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml");
  text.replace(text.find("nonGpuOnGpuPool: deny"), 21, "nonGpuOnGpuPool: strip");
  const PolicyPtr strip = policy_from_yaml(text);
  CHECK_FALSE(render::native::in_fallback(*strip, "GPU009"));
  CHECK_FALSE(render::native::in_fallback(*strip, "GPU026"));  // judges pool tolerations
  CHECK(render::native::in_fallback(*policy, "GPU009"));
  const std::vector<Json> stripped = render_native(*strip, NativeMode::kFallback);
  const std::vector<std::string> ids = annotation_list(stripped[0], "gpuadmit.io/rules");
  CHECK(std::find(ids.begin(), ids.end(), "GPU009") == ids.end());
  // In full, strip is a mutation.
  const std::vector<Json> full = render_native(*strip, NativeMode::kFull);
  const std::vector<std::string> mutations = annotation_list(
      find(full, "MutatingAdmissionPolicy", "gpuadmit-mutate"), "gpuadmit.io/mutations");
  CHECK(std::find(mutations.begin(), mutations.end(), "strip-gpu-pool") != mutations.end());
}

TEST_CASE("native: --native-api v1beta1 writes the mutating policies for 1.34-1.35") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  for (const Json& o : render_native(*policy, NativeMode::kFull, "v1beta1")) {
    INFO(o["kind"]);
    const bool mutating = o["kind"].get<std::string>().starts_with("Mutating");
    CHECK(o["apiVersion"] ==
          (mutating ? "admissionregistration.k8s.io/v1beta1" : "admissionregistration.k8s.io/v1"));
  }
}

TEST_CASE("native: the namespace's tenant: literal names looked up, then patterns in order") {
  const PolicyPtr policy = policy_from_yaml(kTenants);
  const render::native::NativeScope scope = render::native::native_scope(*policy, NativeOptions{});
  // gpuadmit's own namespace, kube-system and kube-node-lease are always excluded, as the
  // webhooks exclude them (render/webhook_configuration.cc excluded_namespaces); exempt
  // patterns are a condition.
  CHECK(scope.namespace_selector ==
        name_selector("NotIn", {"gpuadmit", "kube-node-lease", "kube-system"}));
  CHECK(scope.match_conditions == Json::parse(R"j([
          {"name": "gpuadmit-not-exempt", "expression": "!request.namespace.matches('^(?:gpu-.*)$')"}])j"));
  const Json vars = render::native::model_variables(*policy, render::native::CelLevel::kValidating);
  // Each literal name with the tenant that gets it first (research: ML Team's, not lab's; ml:
  // not "taken"'s); exempt names (kube-system, gpu-lab, gpuadmit) left out. Any other name:
  // the pattern tenants in order; 4 (the number of tenants) for none.
  CHECK(
      vars[9] ==
      Json::parse(
          R"j({"name": "nsm", "expression": "{'lab': 2, 'ml': 0, 'ml-extra': 0, 'research': 0, 'teaching': 1}"})j"));
  CHECK(
      vars[10] ==
      Json::parse(
          R"j({"name": "tn", "expression": "request.namespace in variables.nsm ? variables.nsm[request.namespace] : (request.namespace.matches('^(?:ml-.*)$') ? 0 : (request.namespace.matches('^(?:course-[0-9]+)$') ? 1 : (4)))"})j"));
  // The stand-in for the record, replaced in each policy by the maps it reads.
  CHECK(vars[11] == Json::parse(R"j({"name": "t", "expression": "{}"})j"));
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  std::vector<std::string> columns;
  for (const Json& v :
       find(objects, "ValidatingAdmissionPolicy", "gpuadmit-deny")["spec"]["variables"]) {
    if (v["name"].get<std::string>().starts_with("t_")) columns.push_back(v.dump());
  }
  // One map per member the policy reads, tenant index to value, with only the tenants that set
  // it (students: audit mode; lab: its rule actions).
  CHECK(columns == std::vector<std::string>{
                       R"({"name":"t_ac","expression":"{0: ['h100']}"})",
                       R"({"name":"t_au","expression":"{1: true}"})",
                       R"({"name":"t_mp","expression":"{0: 8}"})",
                       R"({"name":"t_x","expression":"{2: {'GPU006': 'w', 'GPU004': 'o'}}"})"});
}

TEST_CASE("native: tenant enforcement: audit mode, rule actions, mutate: false") {
  const PolicyPtr policy = policy_from_yaml(kTenants);
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  CHECK(names_and_kinds(objects) ==
        std::vector<std::string>{"ValidatingAdmissionPolicy gpuadmit-deny",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-deny",
                                 "ValidatingAdmissionPolicy gpuadmit-warn",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-warn",
                                 "ValidatingAdmissionPolicy gpuadmit-audit",
                                 "ValidatingAdmissionPolicyBinding gpuadmit-audit",
                                 "MutatingAdmissionPolicy gpuadmit-mutate",
                                 "MutatingAdmissionPolicyBinding gpuadmit-mutate",
                                 "MutatingAdmissionPolicy gpuadmit-mutate-non-gpu-pods",
                                 "MutatingAdmissionPolicyBinding gpuadmit-mutate-non-gpu-pods"});
  CHECK(find(objects, "ValidatingAdmissionPolicyBinding",
             "gpuadmit-audit")["spec"]["validationActions"] == Json::array({"Warn", "Audit"}));
  // The policy has no DeviceClasses: no claim rules at all. Every rule the policy enforces is
  // in the deny policy, for the tenants not in audit mode whose action is deny; lab's GPU006
  // warns and its GPU004 is off; students (audit mode) get every rule not off as a warning
  // with an audit annotation.
  const Json& deny = find(objects, "ValidatingAdmissionPolicy", "gpuadmit-deny");
  CHECK(annotation_list(deny, "gpuadmit.io/rules") ==
        std::vector<std::string>{"GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006",
                                 "GPU007", "GPU008", "GPU009", "GPU011", "GPU012", "GPU015",
                                 "GPU024", "GPU026"});
  CHECK(annotation_list(find(objects, "ValidatingAdmissionPolicy", "gpuadmit-warn"),
                        "gpuadmit.io/rules") ==
        std::vector<std::string>{"GPU004", "GPU006", "GPU014"});
  CHECK(annotation_list(find(objects, "ValidatingAdmissionPolicy", "gpuadmit-audit"),
                        "gpuadmit.io/rules") ==
        std::vector<std::string>{"GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006",
                                 "GPU007", "GPU008", "GPU009", "GPU011", "GPU012", "GPU014",
                                 "GPU015", "GPU024", "GPU026"});
  // Where a rule applies is read from the record: the policy's action unless the tenant's
  // enforcement.rules names the rule, never in audit mode.
  const std::string gpu004 = deny["spec"]["validations"][3]["expression"];
  CHECK(gpu004.starts_with(
      "!((((variables.tn in variables.t_x && 'GPU004' in variables.t_x[variables.tn]) ? "
      "variables.t_x[variables.tn]['GPU004'] : 'd') == 'd' && !(variables.tn in variables.t_au))) "
      "|| (variables.jo || (variables.ctx.all(c, "));
  CHECK(std::string(deny["spec"]["validations"][0]["expression"])
            .starts_with("(variables.tn in variables.t_au) || (variables.jo || ("));
  // GPU003: a namespace of no tenant may not use GPUs; a tenant's allowedClasses, if it has.
  const std::string gpu003 = deny["spec"]["validations"][2]["expression"];
  CHECK(gpu003.starts_with(
      "(variables.tn in variables.t_au) || (variables.ctx.all(c, (variables.tn == 4 ? !c.gpu : "
      "(!(variables.tn in variables.t_ac) || !c.gpu || (size(variables.t_ac[variables.tn]) > 0 && "
      "c.cls != '' && (!"));
  // No tenant sets defaults, a priority or a queue: those mutations are not written; lab is not
  // mutated (its record's nm).
  const Json& mutate = find(objects, "MutatingAdmissionPolicy", "gpuadmit-mutate");
  CHECK(annotation_list(mutate, "gpuadmit.io/mutations") ==
        std::vector<std::string>{"requests-equal-limits", "class", "tolerations", "node-affinity",
                                 "gpu-visibility"});
  for (const Json& m : mutate["spec"]["mutations"]) {
    CHECK(std::string(m["jsonPatch"]["expression"])
              .starts_with("variables.tn in variables.t_nm ? [] : ("));
  }
  // The plain objects' policy reads the tenant too: lab's plain objects are not mutated either.
  const Json& plain = find(objects, "MutatingAdmissionPolicy", "gpuadmit-mutate-non-gpu-pods");
  std::vector<std::string> names;
  for (const Json& v : plain["spec"]["variables"]) names.push_back(v["name"]);
  CHECK(names == std::vector<std::string>{"nsm", "tn", "t_nm"});
  CHECK(plain["spec"]["variables"][2]["expression"] == "{2: true}");
  CHECK(std::string(plain["spec"]["mutations"][0]["jsonPatch"]["expression"])
            .starts_with("variables.tn in variables.t_nm ? [] : ("));
}

// The fast path (render/native_fast_path.h): which objects are plain is the differential's to
// prove (tests/native, with the tenant-attack cases 500-517 on both sides of the line); here, the
// policy's literals in the condition and the plain objects' policy as the API server gets it.
TEST_CASE("native: plain objects: the condition names the pools, one mutation when the webhook's") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  const std::string plain = render::native::plain_object(*policy);
  CHECK(plain.starts_with(
      "(!(request.namespace in ['nvidia-device-plugin', 'node-feature-discovery']) && "
      "type(object) == map && [(request.kind.group == '' && request.kind.kind == 'Pod') ? object : "
      "(((request.kind.group == 'apps' && request.kind.kind == 'Deployment') || "
      "(request.kind.group == 'apps' && request.kind.kind == 'ReplicaSet') || "
      "(request.kind.group == 'apps' && request.kind.kind == 'StatefulSet') || "
      "(request.kind.group == 'apps' && request.kind.kind == 'DaemonSet') || "
      "(request.kind.group == 'batch' && request.kind.kind == 'Job')) ? "));
  // The workload table's one-template kinds: the CronJob's template under its jobTemplate.
  CHECK(plain.find("(request.kind.group == 'batch' && request.kind.kind == 'CronJob')) ? ") !=
        std::string::npos);
  CHECK(plain.find("request.kind.kind == 'JobSet'") == std::string::npos);
  // Every class taint's key, every class label's key.
  CHECK(plain.find("!(t.key in ['nvidia.com/gpu'])") != std::string::npos);
  CHECK(plain.find("!s.nodeSelector.exists(n, n in ['nvidia.com/gpu.present'])") !=
        std::string::npos);
  for (const char* field : {"'hostPath'", "'runtimeClassName'", "'resourceClaims'", "'overhead'",
                            "'envFrom'", "'privileged'", "'cdi.k8s.io/'", "'gpuadmit.io/'",
                            "'nvidia-container-devices'", "'nodeAffinity'"}) {
    INFO(field);
    CHECK(plain.find(field) != std::string::npos);
  }
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  const Json& spec =
      find(objects, "MutatingAdmissionPolicy", "gpuadmit-mutate-non-gpu-pods")["spec"];
  CHECK(spec["matchConstraints"] == Json::parse(R"j({"resourceRules": [
      {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"],
       "scope": "Namespaced"},
      {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
       "resources": ["deployments"], "scope": "Namespaced"},
      {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
       "resources": ["replicasets"], "scope": "Namespaced"},
      {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
       "resources": ["statefulsets"], "scope": "Namespaced"},
      {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
       "resources": ["daemonsets"], "scope": "Namespaced"},
      {"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE"],
       "resources": ["jobs"], "scope": "Namespaced"},
      {"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
       "resources": ["cronjobs"], "scope": "Namespaced"}], "matchPolicy": "Equivalent"})j"));
  CHECK(spec["matchConditions"] ==
        Json::array(
            {{{"name", "gpuadmit-plain-object"}, {"expression", plain}},
             {{"name", "gpuadmit-mutated-now"}, {"expression", render::native::mutated_now()}}}));
  // A workload's template only without a controller, on CREATE or when it changed; a Job's never
  // on UPDATE.
  const std::string now = render::native::mutated_now();
  CHECK(now.starts_with("(request.kind.group == '' && request.kind.kind == 'Pod') || (!"));
  CHECK(now.find("&& (request.operation == 'CREATE' || ((((request.kind.group == 'apps' && "
                 "request.kind.kind == 'Deployment')") != std::string::npos);
  CHECK(now.find("request.kind.kind == 'Job')") == std::string::npos);  // immutable
  CHECK_FALSE(spec.contains("variables"));  // no tenant has mutate: false
  CHECK(spec["reinvocationPolicy"] == "IfNeeded");
  const std::string hide = spec["mutations"][0]["jsonPatch"]["expression"];
  CHECK(hide.starts_with(
      "[(request.kind.group == '' && request.kind.kind == 'Pod') ? object.spec : "));
  CHECK(hide.find("].map(sp, [(request.kind.group == '' && request.kind.kind == 'Pod') ? "
                  "'/spec' : (((request.kind.group == 'apps' && request.kind.kind == "
                  "'Deployment')") != std::string::npos);
  CHECK(hide.find("'/spec/template/spec' : (((request.kind.group == 'batch' && "
                  "request.kind.kind == 'CronJob')) ? '/spec/jobTemplate/spec/template/spec' : "
                  "('')))]") != std::string::npos);
  CHECK(
      hide.find(
          "].map(pp, (('initContainers' in sp && type(sp.initContainers) == list) ? "
          "sp.initContainers.transformList(i, k, !(('env' in k && k.env != null) && "
          "k.env.exists(v, v.name == 'NVIDIA_VISIBLE_DEVICES')), ('env' in k && k.env != null) ? "
          "JSONPatch{op: 'add', path: pp + '/initContainers/' + string(i) + '/env' + '/-', value: "
          "{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'void'}} : JSONPatch{op: 'add', path: pp + "
          "'/initContainers/' + string(i) + '/env', value: [{'name': 'NVIDIA_VISIBLE_DEVICES', "
          "'value': 'void'}]}) : []) + ") != std::string::npos);
  CHECK(hide.find("sp.ephemeralContainers.transformList(") != std::string::npos);

  // Without the gpu-visibility mutation a plain object gets nothing: no such policy.
  std::string text = testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml");
  text.replace(text.find("gpuVisibility: fix"), 18, "gpuVisibility: deny");
  const std::vector<Json> deny_only = render_native(*policy_from_yaml(text), NativeMode::kFull);
  CHECK(std::none_of(deny_only.begin(), deny_only.end(), [](const Json& o) {
    return o["metadata"]["name"] == "gpuadmit-mutate-non-gpu-pods";
  }));
}

// Whom the native policies believe (docs/native.md, "Whom they believe"): node agents by the
// nodeAgents patterns on request.namespace, owners by request.userInfo.username. The semantics
// are the differential's to prove (tests/native); here, that the policy's literals are in the CEL.
TEST_CASE("native: node agents by namespace, owners by sender") {
  namespace cel = render::native::cel;
  using render::native::namespace_in;
  const PolicyPtr none = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec: {}
)YAML");
  CHECK(cel::runs_on_every_node(*none) == "false");
  CHECK(namespace_in({}) == "false");
  CHECK(namespace_in({"nvidia-device-plugin", "gpu-.*", "nvidia-device-plugin"}) ==
        "(request.namespace in ['nvidia-device-plugin'] || "
        "request.namespace.matches('^(?:gpu-.*)$'))");
  const PolicyPtr policy = policy_from_yaml(R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  controllers:
    - username: system:serviceaccount:kubeflow:training-operator
      kinds: [kubeflow.org/PyTorchJob, apps/ReplicaSet]
  enforcement:
    nodeAgents: {namespaces: [nvidia-device-plugin, "gpu-monitoring-.*"]}
)YAML");
  const std::string agents = cel::runs_on_every_node(*policy);
  CHECK(agents.rfind("((request.namespace in ['nvidia-device-plugin'] || "
                     "request.namespace.matches('^(?:gpu-monitoring-.*)$')) && "
                     "(variables.kd == 'DaemonSet' || ",
                     0) == 0);
  // kube-controller-manager's users for the built-in kinds, the policy's for the rest, merged.
  const std::string place = cel::kueue_queue_place(*policy);
  for (const char* entry :
       {"'batch/Job': ['system:serviceaccount:kube-system:job-controller', "
        "'system:kube-controller-manager']",
        "'apps/ReplicaSet': ['system:serviceaccount:kube-system:replicaset-controller', "
        "'system:kube-controller-manager', 'system:serviceaccount:kubeflow:training-operator']",
        "'/ReplicationController': ['system:serviceaccount:kube-system:replication-controller', "
        "'system:kube-controller-manager']",
        "'kubeflow.org/PyTorchJob': ['system:serviceaccount:kubeflow:training-operator']"}) {
    INFO(entry);
    CHECK(place.find(entry) != std::string::npos);
  }
  CHECK(place.find("request.userInfo.username != ''") != std::string::npos);
  // Kueue skips a Pod whose controller is a kind it integrates, or a ReplicaSet (looked through).
  const std::string unbelieved = cel::kueue_unbelieved_owner(*policy);
  const size_t list = unbelieved.find(" in ['apps/ReplicaSet'");
  REQUIRE(list != std::string::npos);
  const std::string skipped = unbelieved.substr(list, unbelieved.find(']', list) - list + 1);
  for (const char* kind :
       {"'apps/ReplicaSet'", "'batch/Job'", "'/Pod'", "'kubeflow.org/PyTorchJob'",
        "'jobset.x-k8s.io/JobSet'", "'apps/Deployment'"}) {
    INFO(kind);
    CHECK(skipped.find(kind) != std::string::npos);
  }
  CHECK(skipped.find("'kubeflow.org/MXJob'") == std::string::npos);  // no Kueue integration
  CHECK(skipped.find("'batch/CronJob'") == std::string::npos);       // owns Jobs, not Pods
}

TEST_CASE("native: policy workloads with more than one wildcard are not covered") {
  const PolicyPtr policy = policy_from_yaml(kTenants);
  const render::native::NativeKinds kinds = render::native::native_kinds(*policy);
  REQUIRE(kinds.not_covered.size() == 1);
  CHECK(kinds.not_covered[0].first.kind == "Pipeline");
  CHECK(kinds.not_covered[0].second.find("more than one wildcard") != std::string::npos);
  CHECK(kinds.covered.front().kind == "Runner");  // policy workloads first
  const std::vector<Json> objects = render_native(*policy, NativeMode::kFull);
  for (const Json& o : objects) {
    if (!o["spec"].contains("matchConstraints")) continue;
    for (const Json& r : o["spec"]["matchConstraints"]["resourceRules"]) {
      for (const Json& resource : r["resources"]) CHECK(resource != "pipelines");
    }
  }
  const Json table = render::native::table_json(*policy);
  CHECK(table["not_native_kinds"] ==
        Json::parse(R"j([{"apiVersion": "example.com/v1", "kind": "Pipeline",
          "why": "pattern spec.stages[*].workers[*].template.spec has more than one wildcard (CEL on Kubernetes before 1.34 cannot flatten lists)"
  }])j"));
}

// The table lists every rule and mutation that exists, in order, and nothing else: a new rule
// (GPU026…) or mutator fails here until it has a row.
TEST_CASE("native: the table has a row for every rule id and every mutation") {
  std::vector<std::string> ids;
  for (const auto& r : default_rules()) ids.emplace_back(r->id());
  for (const auto& r : default_document_rules()) ids.emplace_back(r->id());
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> rows;
  for (const render::native::RuleRow& r : render::native::rule_rows()) rows.emplace_back(r.id);
  CHECK(rows == ids);

  std::vector<std::string> mutators;
  for (const auto& m : default_mutators()) mutators.emplace_back(m->name());
  std::vector<std::string> mutation_rows;
  for (const render::native::MutationRow& m : render::native::mutation_rows()) {
    mutation_rows.emplace_back(m.name);
  }
  CHECK(mutation_rows == mutators);
}

TEST_CASE("native: docs/native.md holds the table render prints") {
  const std::string doc = testing::slurp(GPUADMIT_SOURCE_DIR "/docs/native.md");
  const std::string begin = "<!-- native-table:begin -->\n";
  const std::string end = "<!-- native-table:end -->";
  const size_t b = doc.find(begin);
  const size_t e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string in_doc = doc.substr(b + begin.size(), e - b - begin.size());
  INFO("replace docs/native.md's table with:\n" << render::native::table_markdown());
  CHECK(in_doc == render::native::table_markdown());
}

TEST_CASE("native: the table as JSON, for the harness") {
  const PolicyPtr policy =
      policy_from_yaml(testing::slurp(GPUADMIT_SOURCE_DIR "/policies/default.yaml"));
  const Json table = render::native::table_json(*policy);
  REQUIRE(table["rules"].size() == render::native::rule_rows().size());
  CHECK(table["rules"][0] ==
        Json::parse(R"j({"id": "GPU001", "native": "yes", "category": "correctness",
          "fallback": false, "unmutated": false,
          "why": "quantities compared with the CEL quantity library"})j"));
  CHECK(table["rules"][2]["fallback"] == true);  // GPU003, security
  CHECK(table["rules"][2]["unmutated"] == true);
  // GPU025 judges a controller's copy unmutated too (render/native_table.h judges_unmutated).
  CHECK(table["rules"][24]["id"] == "GPU025");
  CHECK(table["rules"][24]["fallback"] == false);
  CHECK(table["rules"][24]["unmutated"] == true);
  CHECK(table["mutations"][3] == Json::parse(R"j({"name": "tolerations", "native": "yes",
          "why": "JSON Patch, as spec.tolerations is atomic for apply; the list is rebuilt",
          "writes": ["spec.tolerations"]})j"));
  // A Pod's spec and a Job's template cannot change on UPDATE (ValidatePodUpdate;
  // pkg/apis/batch/validation validatePodTemplateUpdate); a Deployment's can.
  CHECK(table["kinds"][0] ==
        Json::parse(R"j({"group": "", "kind": "Pod", "immutableTemplates": true})j"));
  for (const Json& k : table["kinds"]) {
    if (k["kind"] == "Deployment") CHECK(k["immutableTemplates"] == false);
    if (k["group"] == "batch" && k["kind"] == "Job") CHECK(k["immutableTemplates"] == true);
  }
  // The DRA claims close the list: the validating policies judge them, nothing mutates them.
  REQUIRE(table["kinds"].size() >= 2);
  CHECK(table["kinds"][table["kinds"].size() - 1] ==
        Json::parse(R"j({"group": "resource.k8s.io", "kind": "ResourceClaimTemplate",
          "immutableTemplates": false, "validatedOnly": true})j"));
  CHECK(table["kinds"][table["kinds"].size() - 2]["kind"] == "ResourceClaim");
  CHECK(table["not_native_kinds"] == Json::array());
}

TEST_CASE("native: gpuadmit render --native, on the command line") {
  const std::string bin = GPUADMIT_BINARY;
  const testing::ProcessResult full = testing::run_command(bin + " render --native full");
  CHECK(full.exit_code == 0);
  CHECK(full.out.starts_with("# What these policies enforce in the API server"));
  CHECK(full.out.find("kind: MutatingAdmissionPolicy\n") != std::string::npos);
  CHECK(full.out.find("kind: PriorityClass\n") != std::string::npos);
  CHECK(full.out.find("WebhookConfiguration") == std::string::npos);

  const testing::ProcessResult table = testing::run_command(bin + " render --native-table");
  CHECK(table.exit_code == 0);
  CHECK(Json::parse(table.out)["rules"].size() == render::native::rule_rows().size());

  struct Bad {
    const char* args;
    const char* message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"--native all", "--native must be full or fallback, not \"all\""},
           {"--native full --native-api v1alpha1",
            "--native-api must be v1 (Kubernetes 1.36) or v1beta1 (1.34-1.35), not \"v1alpha1\""},
           {"--native-api v1", "--native-api needs --native full or --native fallback"},
           {"--native full --failure-policy Ignore",
            "--failure-policy configures the webhook; --native prints no webhook"},
           {"--native-table --native full",
            "--native-table prints the table alone: leave out --native and --native-api"}}) {
    INFO(bad.args);
    const testing::ProcessResult r = testing::run_command(bin + " render " + bad.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.starts_with(std::string("gpuadmit render: ") + bad.message + "\n"));
  }
}

// Manifest-based admission (render/native_static.h): every name and policyName suffixed, each
// plugin's objects apart, other kinds left to standard output; what the loader refuses is an
// error before anything is written.
TEST_CASE("native: static manifests") {
  const std::vector<Json> objects = {{{"apiVersion", "scheduling.k8s.io/v1"},
                                      {"kind", "PriorityClass"},
                                      {"metadata", {{"name", "gpu-batch"}}}},
                                     {{"apiVersion", "admissionregistration.k8s.io/v1"},
                                      {"kind", "ValidatingAdmissionPolicy"},
                                      {"metadata", {{"name", "gpuadmit-deny"}}},
                                      {"spec", Json::object()}},
                                     {{"apiVersion", "admissionregistration.k8s.io/v1"},
                                      {"kind", "ValidatingAdmissionPolicyBinding"},
                                      {"metadata", {{"name", "gpuadmit-deny"}}},
                                      {"spec", {{"policyName", "gpuadmit-deny"}}}}};
  auto made = render::native::static_manifests(objects, "/etc/gpuadmit/");
  REQUIRE(made);
  CHECK(made->mutating.empty());
  REQUIRE(made->validating.size() == 2);
  CHECK(made->validating[0]["metadata"]["name"] == "gpuadmit-deny.static.k8s.io");
  CHECK(made->validating[1]["metadata"]["name"] == "gpuadmit-deny.static.k8s.io");
  CHECK(made->validating[1]["spec"]["policyName"] == "gpuadmit-deny.static.k8s.io");
  CHECK(made->admission_configuration ==
        Json::parse(R"j({"apiVersion": "apiserver.config.k8s.io/v1",
                         "kind": "AdmissionConfiguration",
                         "plugins": [{"name": "ValidatingAdmissionPolicy",
                                      "configuration": {
                                        "apiVersion": "apiserver.config.k8s.io/v1",
                                        "kind": "ValidatingAdmissionPolicyConfiguration",
                                        "staticManifestsDir": "/etc/gpuadmit/validating-policies"}}]})j"));
  CHECK(render::native::static_manifests(objects, "etc").error() ==
        "the static manifests' directory must be an absolute path (the API server's "
        "staticManifestsDir), not \"etc\"");
  std::vector<Json> beta = objects;
  beta.push_back({{"apiVersion", "admissionregistration.k8s.io/v1beta1"},
                  {"kind", "MutatingAdmissionPolicy"},
                  {"metadata", {{"name", "gpuadmit-mutate"}}}});
  CHECK(render::native::static_manifests(beta, "/etc/gpuadmit").error() ==
        "manifest-based admission loads only admissionregistration.k8s.io/v1 objects, not "
        "MutatingAdmissionPolicy admissionregistration.k8s.io/v1beta1 (leave out --native-api "
        "v1beta1)");
}

// Tenants that share a value (render/native_tenants.h): the column is the list of distinct
// values and a map to positions in it, when that is shorter, and every read goes through both;
// presence tests read the map alone.
TEST_CASE("native: a column of repeated values is indexed") {
  std::string yaml = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: shared
spec:
  classes:
    h100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
  tenants:
)YAML";
  for (const char* name : {"a", "b", "c"}) {
    yaml += std::string("    - name: ") + name + "\n      namespaces: [\"" + name +
            "\"]\n      defaults:\n        request: {cpu: \"4\", memory: 16Gi}\n"
            "        perGPU: {cpu: \"8\", memory: 48Gi}\n";
  }
  yaml += "    - name: d\n      namespaces: [\"d\"]\n      defaults: {request: {cpu: \"1\"}}\n";
  const PolicyPtr policy = policy_from_yaml(yaml);
  const std::vector<Json> objects = render::native::native_policies(*policy, NativeOptions{});
  const Json& mutate = find(objects, "MutatingAdmissionPolicy", "gpuadmit-mutate");
  std::map<std::string, std::string> vars;
  for (const Json& v : mutate["spec"]["variables"]) vars[v["name"]] = v["expression"];
  CHECK(vars["t_df_v"] ==
        "[{'r': {'cpu': '4', 'memory': '16Gi'}, 'g': {'cpu': '8', 'memory': '48Gi'}}, "
        "{'r': {'cpu': '1'}}]");
  CHECK(vars["t_df"] == "{0: 0, 1: 0, 2: 0, 3: 1}");
  const std::string patch = mutate["spec"]["mutations"][0]["jsonPatch"]["expression"];
  CHECK(patch.find("variables.tn in variables.t_df && ") != std::string::npos);
  CHECK(patch.find("variables.t_df_v[variables.t_df[variables.tn]].r") != std::string::npos);
  CHECK(patch.find("variables.t_df[variables.tn].") == std::string::npos);
}

}  // namespace
}  // namespace native_test
}  // namespace gpuadmit
