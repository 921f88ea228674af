// The webhook answers a review the same whether its objects carry managedFields or not, and the
// same as from the whole tree (engine/json_parse.h parse_admission_review_json drops them
// unread). The API server's field manager sets them before mutating admission
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go: FieldManager.UpdateNoErrors,
// then mutatingAdmission.Admit), so every real CREATE and UPDATE review carries them. Every
// golden case is sent as a CREATE review, and every workload as an UPDATE from an older template,
// each object with managedFields in the API's FieldsV1 encoding; a rule or mutator that read them
// would answer the whole tree differently.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/admission.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace admission_managed_fields_test {
namespace {

namespace fs = std::filesystem;
const fs::path kCases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases";

// structured-merge-diff's FieldsV1 of `value` (sigs.k8s.io/structured-merge-diff fieldpath):
// "f:<field>" per member, "k:<merge key>" per item of a keyed list, "." for a set node.
Json fields_v1(const Json& value, std::string_view list_key = "") {
  Json out = empty_object();
  if (value.is_object()) {
    if (!list_key.empty() || value.empty()) out["."] = empty_object();
    for (const auto& [key, child] : value.items()) out["f:" + key] = fields_v1(child);
  } else if (value.is_array() && !value.empty()) {
    out["."] = empty_object();
    for (const Json& item : value) {
      if (!item.is_object()) continue;
      Json key = empty_object();
      for (const char* k : {"name", "mountPath", "containerPort", "protocol", "uid"}) {
        if (item.contains(k)) key[k] = item[k];
      }
      out["k:" + key.dump()] = fields_v1(item, "item");
    }
  }
  return out;
}

// `object` with the managedFields a controller's write leaves.
Json with_managed_fields(Json object) {
  Json* metadata = member_object(object, "metadata");
  if (metadata == nullptr) return object;
  Json entry = empty_object();
  entry["manager"] = "kube-controller-manager";
  entry["operation"] = "Update";
  entry["apiVersion"] = object.value("apiVersion", "v1");
  entry["time"] = "2026-11-28T08:00:00Z";
  entry["fieldsType"] = "FieldsV1";
  Json fields = empty_object();
  fields["f:metadata"] = fields_v1(*metadata);
  if (object.contains("spec")) fields["f:spec"] = fields_v1(object["spec"]);
  entry["fieldsV1"] = std::move(fields);
  (*metadata)["managedFields"] = Json::array({std::move(entry)});
  return object;
}

Json review_of(const Json& object, const Json* old_object, const std::string& ns) {
  Json request = empty_object();
  request["uid"] = "c0ffee00-0000-4000-8000-000000000001";
  request["namespace"] = ns;
  request["operation"] = old_object != nullptr ? "UPDATE" : "CREATE";
  request["userInfo"] = {{"username", "system:serviceaccount:kube-system:job-controller"}};
  request["object"] = object;
  if (old_object != nullptr) request["oldObject"] = *old_object;
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request", std::move(request)}};
}

// An older version of a workload: every pod template's first container on another image.
std::optional<Json> older_version(Json object) {
  bool changed = false;
  for (const char* path : {"/spec/template/spec/containers/0/image",
                           "/spec/jobTemplate/spec/template/spec/containers/0/image"}) {
    const JsonPointer pointer(path);
    if (object.contains(pointer)) {
      object[pointer] = "registry.example.com/older:0.9";
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return object;
}

struct Answers {
  std::string text_with, text_without, tree_with;
};

Answers answer(const Json& object, const std::optional<Json>& old_object, const std::string& ns,
               Endpoint endpoint, const Pipeline& pipeline, const CompiledPolicy& policy) {
  const Json managed = with_managed_fields(object);
  const std::optional<Json> old_managed =
      old_object ? std::optional<Json>(with_managed_fields(*old_object)) : std::nullopt;
  const Json with = review_of(managed, old_managed ? &*old_managed : nullptr, ns);
  const Json without = review_of(object, old_object ? &*old_object : nullptr, ns);
  const auto text = [&](const Json& review) {
    AdmissionResult r = handle_admission_review_text(review.dump(), endpoint, pipeline, policy);
    return r.outcome ? encode_response(*r.outcome) : "error: " + r.error->message;
  };
  AdmissionResult tree = handle_admission_review(with, endpoint, pipeline, policy);
  return {text(with), text(without),
          tree.outcome ? encode_response(*tree.outcome) : "error: " + tree.error->message};
}

TEST_CASE("admission: managedFields change no answer, CREATE or UPDATE, either endpoint") {
  const Pipeline pipeline(default_mutators(), default_rules());
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kCases)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() > 100);
  int patched = 0, updates = 0;
  std::map<std::string, PolicyPtr> policies;  // most cases share tests/cases/policy.yaml
  for (const fs::path& dir : dirs) {
    INFO(dir.filename().string());
    const fs::path policy_file =
        fs::exists(dir / "policy.yaml") ? dir / "policy.yaml" : kCases / "policy.yaml";
    PolicyPtr& policy = policies[policy_file.string()];
    if (!policy) policy = load_compiled_policy(policy_file.string()).policy;
    REQUIRE(policy);
    const Json object = testing::yaml_file_documents((dir / "input.yaml").string()).at(0);
    const Json* metadata = find_member(object, "metadata");
    std::string ns(metadata != nullptr ? string_member(*metadata, "namespace") : "");
    if (ns.empty()) ns = "default";
    const std::optional<Json> older = older_version(object);
    std::vector<std::optional<Json>> old_objects = {std::nullopt};
    if (older) old_objects.push_back(older);
    for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
      for (const std::optional<Json>& old_object : old_objects) {
        const Answers a = answer(object, old_object, ns, endpoint, pipeline, *policy);
        CHECK(a.text_with == a.tree_with);
        CHECK(a.text_with == a.text_without);
        if (a.text_with.find("\"patch\"") != std::string::npos) ++patched;
        if (old_object) ++updates;
      }
    }
  }
  // The cases mutate, and their workloads are updated too: the comparison covers patches.
  CHECK(patched > 60);
  CHECK(updates > 40);
}

}  // namespace
}  // namespace admission_managed_fields_test
}  // namespace gpuadmit
