// Every parent → child pair of the workload table (engine/workload_kinds.h `controllers`) and
// every kind's UPDATE, through gpuadmit's AdmissionReview codec with the API server mirrored
// (tests/controllers/kube_mirror.h): a controller's copy is never patched, a Pod always is, a
// template is patched the same on CREATE and on an UPDATE that changes it, never on one that
// does not, and never where the API server keeps it immutable. The CronJob and JobSet
// controllers' copies are built as they build them.

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/workload.h"
#include "tests/controllers/kube_mirror.h"
#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace gpuadmit::testing {
namespace workload_controllers_test {
namespace {

PolicyPtr default_policy() {
  return policy_from_yaml(slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml"));
}

// A served version of each group of the table.
std::string api_version_of(std::string_view group, std::string_view kind) {
  static const std::map<std::string_view, std::string_view> versions = {
      {"", "v1"},
      {"apps", "v1"},
      {"batch", "v1"},
      {"jobset.x-k8s.io", "v1alpha2"},
      {"ray.io", "v1"},
      {"batch.volcano.sh", "v1alpha1"},
      {"leaderworkerset.x-k8s.io", "v1"},
      {"kubeflow.org", "v1"},
      {"trainer.kubeflow.org", "v1alpha1"},
      {"workload.codeflare.dev", "v1beta2"},
      {"sparkoperator.k8s.io", "v1beta2"}};
  const std::string version(kind == "MPIJob" ? "v2beta1" : versions.at(group));
  return group.empty() ? version : std::string(group) + "/" + version;
}

constexpr const char* kGpuPodSpec =
    R"({"containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3",
         "resources":{"limits":{"nvidia.com/gpu":"1"}}},
        {"name":"log-shipper","image":"fluent/fluent-bit:2.2"}]})";
// GPU001: the request and the limit differ (never fixed, always denied).
constexpr const char* kViolatingPodSpec =
    R"({"containers":[{"name":"trainer","image":"nvcr.io/nvidia/pytorch:24.01-py3",
         "resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"2"}}}]})";

// An object of the kind with each of its pod templates present once (a list gets one element, a
// map of roles the role "worker"), each holding `pod_spec` and labels.
Json sample(const WorkloadKind& kind, const char* pod_spec) {
  Json object = {{"apiVersion", api_version_of(kind.group, kind.kind)},
                 {"kind", kind.kind},
                 {"metadata", {{"name", "w"}}}};
  for (const PodTemplatePath& path : kind.pod_specs) {
    Json* node = &object;
    std::string_view pattern = path.spec;
    std::vector<std::string> tokens;
    while (!pattern.empty()) {
      const size_t dot = pattern.find('.');
      tokens.emplace_back(pattern.substr(0, dot));
      pattern = dot == std::string_view::npos ? "" : pattern.substr(dot + 1);
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string token = tokens[i];
      const bool list = token.size() > 3 && token.substr(token.size() - 3) == "[*]";
      if (list) token.resize(token.size() - 3);
      if (token == "*") token = "worker";
      if (i + 1 == tokens.size()) {
        (*node)[token] = Json::parse(pod_spec);
        if (kind.kind != "Pod") (*node)["metadata"] = {{"labels", {{"app", "w"}}}};
        break;
      }
      if (list) {
        Json& array = (*node)[token];
        if (!array.is_array()) array = Json::array({Json::object()});
        node = &array[0];
      } else {
        node = &(*node)[token];
      }
    }
  }
  if (kind.kind == "Pod") object["metadata"]["labels"] = {{"app", "w"}};
  return object;
}

// Every container of every pod template renamed to a new image: a template change.
Json with_new_images(Json object, const CompiledPolicy& policy) {
  for (const PodSpecLocation& loc : find_pod_specs(object, policy)) {
    for (Json& c : object.at(loc.spec)["containers"]) c["image"] = "registry.example.com/new:2";
  }
  return object;
}

Json review_of(const std::string& operation, const Json& object, const Json* old) {
  const WorkloadKind* kind = find_workload_kind(object["apiVersion"].get<std::string>(),
                                                object["kind"].get<std::string>());
  REQUIRE(kind != nullptr);
  Json request = {{"uid", "u"},
                  {"kind",
                   {{"group", api_group_of(object["apiVersion"].get<std::string>())},
                    {"kind", object["kind"]}}},
                  {"resource", {{"resource", kind->resource}}},
                  {"name", object["metadata"]["name"]},
                  {"namespace", std::string(kNamespace)},
                  {"operation", operation},
                  {"object", object}};
  if (old != nullptr) request["oldObject"] = *old;
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

struct Answer {
  bool allowed = true;
  Json patch = Json::array();
  std::string message;
};

Answer answer(const CompiledPolicy& policy, Endpoint endpoint, const std::string& operation,
              const Json& object, const Json* old = nullptr,
              TemplateMode templates = TemplateMode::kMutate) {
  static const Pipeline pipeline(default_mutators(), default_rules());
  const AdmissionResult r = handle_admission_review_text(
      review_of(operation, object, old).dump(), endpoint, pipeline, policy, nullptr, templates);
  REQUIRE(r.outcome);
  const Json& response = r.outcome->response["response"];
  Answer a;
  a.allowed = response["allowed"].get<bool>();
  if (response.contains("patch")) {
    a.patch = Json::parse(base64_decode(response["patch"].get<std::string>()));
  }
  if (response.contains("status")) a.message = response["status"]["message"].get<std::string>();
  return a;
}

// True when every operation of the patch lies under one of the object's pod templates: nothing
// outside them (StatefulSet's volumeClaimTemplates, a Job's selector, …) is ever patched.
bool patch_within_templates(const Json& patch, const Json& object, const CompiledPolicy& policy) {
  for (const Json& op : patch) {
    const std::string path = op["path"];
    bool inside = false;
    for (const PodSpecLocation& loc : find_pod_specs(object, policy)) {
      const std::string t = loc.spec.parent_pointer().to_string() + "/";
      inside = inside || path.rfind(t, 0) == 0;
    }
    if (!inside) return false;
  }
  return true;
}

Json owned_by(Json object, const KindRef& parent) {
  object["metadata"]["ownerReferences"] =
      Json::array({{{"apiVersion", api_version_of(parent.group, parent.kind)},
                    {"kind", parent.kind},
                    {"name", "parent"},
                    {"uid", "parent-uid"},
                    {"controller", true},
                    {"blockOwnerDeletion", true}}});
  return object;
}

TEST_CASE("controllers: a controller's copy is never patched, a Pod always is") {
  const PolicyPtr policy = default_policy();
  size_t pairs = 0;
  for (const WorkloadKind& kind : workload_kinds()) {
    if (kind.pod_specs.empty()) continue;
    for (const KindRef& parent : kind.controllers) {
      INFO(parent.kind << " → " << kind.kind);
      ++pairs;
      const Json child = owned_by(sample(kind, kGpuPodSpec), parent);
      ApiServer api(policy);
      const Written created = api.create(child);
      REQUIRE(created.ok());
      CHECK(created.sent);  // the rules `render` makes send it
      if (kind.kind == "Pod") {
        // The leaf: mutated whatever made it (requests, class, tolerations, affinity, defaults,
        // priority, and the sidecar's NVIDIA_VISIBLE_DEVICES: team-a is no nodeAgents namespace,
        // so a DaemonSet's pod gets it too).
        CHECK_FALSE(created.mutating_patch.empty());
        continue;
      }
      CHECK(created.mutating_patch == Json::array());
      // Stored as the controller wrote it (but for what the API server sets).
      Json stored = created.object;
      stored["metadata"].erase("uid");
      stored["metadata"].erase("creationTimestamp");
      stored["metadata"].erase("namespace");
      CHECK(semantic_equal(stored, child));
      // The controller's UPDATEs: a scale (template unchanged), a template the parent changed.
      Json scaled = child;
      scaled["metadata"]["labels"] = {{"revision", "2"}};
      CHECK(answer(*policy, Endpoint::kMutate, "UPDATE", scaled, &child).patch == Json::array());
      const Json changed = with_new_images(child, *policy);
      const Answer a = answer(*policy, Endpoint::kMutate, "UPDATE", changed, &child);
      CHECK(a.allowed);
      CHECK(a.patch == Json::array());
    }
  }
  CHECK(pairs == 24);  // the `controllers` column of docs/workloads.md
}

TEST_CASE(
    "controllers: a template is patched the same on CREATE and on an UPDATE that changes "
    "it, never on one that does not, nor where the API server keeps it immutable") {
  const PolicyPtr policy = default_policy();
  for (const WorkloadKind& kind : workload_kinds()) {
    if (kind.pod_specs.empty() || kind.kind == "Pod") continue;
    INFO(kind.group << " " << kind.kind);
    const Json object = sample(kind, kGpuPodSpec);
    const Json before = with_new_images(object, *policy);
    const Answer created = answer(*policy, Endpoint::kMutate, "CREATE", object);
    REQUIRE(created.allowed);
    CHECK_FALSE(created.patch.empty());
    CHECK(patch_within_templates(created.patch, object, *policy));
    const Answer updated = answer(*policy, Endpoint::kMutate, "UPDATE", object, &before);
    CHECK(updated.allowed);
    if (kind.template_updates == TemplateUpdates::kMutable) {
      CHECK(updated.patch == created.patch);
    } else {
      CHECK(updated.patch == Json::array());
    }
    // An UPDATE that leaves the templates alone (a scale, a label): nothing to do.
    Json relabelled = object;
    relabelled["metadata"]["labels"] = {{"team", "ml"}};
    CHECK(answer(*policy, Endpoint::kMutate, "UPDATE", relabelled, &object).patch == Json::array());

    // A template that breaks the policy, admitted before gpuadmit (or before the rule): its
    // scale is allowed on both endpoints; a change of it is judged like a CREATE.
    const Json bad = sample(kind, kViolatingPodSpec);
    Json bad_scaled = bad;
    bad_scaled["metadata"]["labels"] = {{"team", "ml"}};
    CHECK(answer(*policy, Endpoint::kMutate, "UPDATE", bad_scaled, &bad).allowed);
    CHECK(answer(*policy, Endpoint::kValidate, "UPDATE", bad_scaled, &bad).allowed);
    const Answer bad_created = answer(*policy, Endpoint::kMutate, "CREATE", bad);
    CHECK_FALSE(bad_created.allowed);
    const Json bad_before = with_new_images(bad, *policy);
    const Answer bad_changed = answer(*policy, Endpoint::kMutate, "UPDATE", bad, &bad_before);
    CHECK_FALSE(bad_changed.allowed);
    CHECK(bad_changed.message == bad_created.message);
  }
}

TEST_CASE("controllers: GitOps mode judges templates as their Pods will be, patches none") {
  const PolicyPtr policy = default_policy();
  for (const WorkloadKind& kind : workload_kinds()) {
    if (kind.pod_specs.empty() || kind.kind == "Pod") continue;
    INFO(kind.kind);
    const Json object = sample(kind, kGpuPodSpec);
    // Things the Pod's mutation will fix (the missing request, tolerations, …) are no denial.
    const Answer a =
        answer(*policy, Endpoint::kMutate, "CREATE", object, nullptr, TemplateMode::kValidate);
    CHECK(a.allowed);
    CHECK(a.patch == Json::array());
    CHECK(answer(*policy, Endpoint::kValidate, "CREATE", object, nullptr, TemplateMode::kValidate)
              .allowed);
    // What no mutation fixes is denied as in mutate mode.
    const Json bad = sample(kind, kViolatingPodSpec);
    CHECK(answer(*policy, Endpoint::kMutate, "CREATE", bad, nullptr, TemplateMode::kValidate)
              .message == answer(*policy, Endpoint::kMutate, "CREATE", bad).message);
  }
  // Pods are still mutated.
  const Json pod = sample(*find_workload_kind("v1", "Pod"), kGpuPodSpec);
  CHECK_FALSE(answer(*policy, Endpoint::kMutate, "CREATE", pod, nullptr, TemplateMode::kValidate)
                  .patch.empty());
}

// pkg/controller/cronjob/utils.go getJobFromTemplate2: the Job carries the jobTemplate's labels
// and annotations (plus the scheduled-time annotation) and its spec, copied.
Json job_from_cronjob(const Json& cronjob, int minute) {
  const Json& jt = cronjob["spec"]["jobTemplate"];
  const Json metadata = jt.value("metadata", Json::object());
  Json annotations = metadata.value("annotations", Json::object());
  annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] =
      "2024-05-01T10:" + std::to_string(10 + minute) + ":00Z";
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", cronjob["metadata"]["name"].get<std::string>() + "-" +
                         std::to_string(28585800 + minute)},
            {"labels", metadata.value("labels", Json::object())},
            {"annotations", annotations},
            {"ownerReferences", controller_ref(cronjob)}}},
          {"spec", jt["spec"]}};
}

TEST_CASE(
    "controllers: CronJob → Job: each Job's template is the CronJob's, across an edit and "
    "a policy change") {
  ApiServer api(default_policy());
  Json cronjob = Json::parse(R"({"apiVersion":"batch/v1","kind":"CronJob",
    "metadata":{"name":"nightly"},"spec":{"schedule":"0 2 * * *","jobTemplate":{
      "spec":{"template":{"spec":{"restartPolicy":"Never"}}}}}})");
  cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] =
      Json::parse(kGpuPodSpec)["containers"];
  // Created before the webhook; its first Job too.
  api.set_webhook(false);
  REQUIRE(api.create(cronjob).ok());
  REQUIRE(api.create(job_from_cronjob(api.get("CronJob", "nightly"), 0)).ok());
  api.set_webhook(true);
  int minute = 1;
  auto next_job_matches = [&] {
    const Json cj = api.get("CronJob", "nightly");
    const Written job = api.create(job_from_cronjob(cj, minute++));
    REQUIRE(job.ok());
    CHECK(job.mutating_patch == Json::array());
    CHECK(semantic_equal(job.object["spec"]["template"],
                         cj["spec"]["jobTemplate"]["spec"]["template"]));
    return job.object;
  };
  // The webhook now sees the CronJob's Jobs: unmutated copies of its (unmutated) template; their
  // Pods get the mutations when the Job controller creates them.
  next_job_matches();
  // kubectl set image cronjob/nightly: the template changed, so it is mutated, and so are the
  // next Jobs' templates, being copies.
  Json edited = api.get("CronJob", "nightly");
  edited["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][1]["image"] =
      "fluent/fluent-bit:3.0";
  const Written e = api.update(edited);
  REQUIRE(e.ok());
  CHECK_FALSE(e.mutating_patch.empty());
  const Json job = next_job_matches();
  CHECK(job["spec"]["template"]["spec"]["containers"][1]["env"] ==
        Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])"));
  // A policy change between the CronJob and its next Job: the Job is still the CronJob's copy.
  std::string text = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  const std::string taint = "        - {key: nvidia.com/gpu, effect: NoSchedule}\n";
  text.replace(text.find(taint), taint.size(),
               taint + "        - {key: example.com/pool, value: gpu, effect: NoSchedule}\n");
  api.set_policy(policy_from_yaml(text));
  next_job_matches();
  CHECK(api.refusals().empty());
}

// jobset pkg/controllers/jobset_controller.go constructJob: the replicated job's template, its
// labels and annotations on the Job, the JobSet's labels added to the Job and its pod template.
Json job_from_jobset(const Json& jobset, size_t replicated, int index) {
  const Json& rjob = jobset["spec"]["replicatedJobs"][replicated];
  const Json metadata = rjob["template"].value("metadata", Json::object());
  const std::string name = jobset["metadata"]["name"].get<std::string>() + "-" +
                           rjob["name"].get<std::string>() + "-" + std::to_string(index);
  Json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", name},
                {"labels", metadata.value("labels", Json::object())},
                {"annotations", metadata.value("annotations", Json::object())},
                {"ownerReferences", controller_ref(jobset)}}},
              {"spec", rjob["template"]["spec"]}};
  const Json added = {{"jobset.sigs.k8s.io/jobset-name", jobset["metadata"]["name"]},
                      {"jobset.sigs.k8s.io/replicatedjob-name", rjob["name"]},
                      {"jobset.sigs.k8s.io/job-index", std::to_string(index)}};
  for (Json* meta : {&job["metadata"], &job["spec"]["template"]["metadata"]}) {
    for (auto [k, v] : added.items()) (*meta)["labels"][k] = v;
    (*meta)["annotations"]["jobset.sigs.k8s.io/job-key"] = name;
  }
  job["spec"]["suspend"] = false;
  return job;
}

TEST_CASE("controllers: JobSet → Job: the Jobs are the JobSet's templates, never patched") {
  ApiServer api(default_policy());
  Json jobset = Json::parse(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
    "metadata":{"name":"train"},"spec":{"replicatedJobs":[{"name":"workers","replicas":2,
      "template":{"spec":{"parallelism":1,"completions":1,"template":{
        "metadata":{"labels":{"app":"train"}},"spec":{"restartPolicy":"Never"}}}}}]}})");
  jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"] =
      Json::parse(kGpuPodSpec)["containers"];
  const Written created = api.create(jobset);
  REQUIRE(created.ok());
  CHECK_FALSE(created.mutating_patch.empty());
  const Json stored = api.get("JobSet", "train");
  for (int index = 0; index < 2; ++index) {
    const Json expected = job_from_jobset(stored, 0, index);
    const Written job = api.create(expected);
    REQUIRE(job.ok());
    CHECK(job.mutating_patch == Json::array());
    CHECK(semantic_equal(job.object["spec"]["template"], expected["spec"]["template"]));
    // The pod template is the JobSet's, mutated at the JobSet's CREATE: the sidecar's
    // NVIDIA_VISIBLE_DEVICES, the GPU toleration.
    CHECK(job.object["spec"]["template"]["spec"]["containers"][1]["env"] ==
          Json::parse(R"([{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}])"));
  }
  CHECK(api.refusals().empty());
}

}  // namespace
}  // namespace workload_controllers_test
}  // namespace gpuadmit::testing
