// The skeleton evaluate_in_place diffs against: exactly the members mutators may write, copied;
// every other member a placeholder (dumped by nlohmann as <discarded>); every key in its place.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/json_diff.h"
#include "engine/mutation_skeleton.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace mutation_skeleton_test {
namespace {

const CompiledPolicy& no_workloads() {
  static const PolicyPtr policy = testing::amd_gpu_policy();
  return *policy;
}

PodSpecLocation location(const std::string& spec, const std::string& metadata) {
  PodSpecLocation l;
  l.spec = JsonPointer(spec);
  l.metadata = JsonPointer(metadata);
  return l;
}

struct Case {
  const char* name;
  const char* object;
  std::vector<PodSpecLocation> locations;
  const char* skeleton;
};

// A list of no containers stays a placeholder: no member of it is recorded, and mutators never
// change a list's length.
TEST_CASE("mutation skeleton: only what mutators may write is copied, every key keeps its place") {
  const std::vector<Case> cases = {
      {"a pod: spec members, each container's resources and env, the annotations, the labels "
       "(where Kueue reads a Pod's queue)",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"y"},
           "annotations":{"k":"v"}},
           "spec":{"initContainers":[{"name":"i","image":"busybox"}],
             "containers":[{"name":"c","image":"cuda","env":[{"name":"A","value":"1"}],
               "resources":{"limits":{"nvidia.com/gpu":1}}}],
             "volumes":[{"name":"v"}],"tolerations":[{"key":"t","operator":"Exists"}],
             "priority":0,"nodeSelector":{"pool":"a100"},"schedulerName":"default-scheduler"},
           "status":{}})",
       {location("/spec", "/metadata")},
       R"({"apiVersion":<discarded>,"kind":<discarded>,"metadata":{"name":<discarded>,)"
       R"("labels":{"x":"y"},"annotations":{"k":"v"}},"spec":{"initContainers":[{"name":)"
       R"(<discarded>,"image":<discarded>}],"containers":[{"name":<discarded>,"image":)"
       R"(<discarded>,"env":[{"name":"A","value":"1"}],"resources":{"limits":)"
       R"({"nvidia.com/gpu":1}}}],)"
       R"("volumes":<discarded>,"tolerations":[{"key":"t","operator":"Exists"}],"priority":0,)"
       R"("nodeSelector":{"pool":"a100"},"schedulerName":<discarded>},"status":<discarded>})"},
      {"a template without metadata: the metadata stays absent, so adding it is a diff",
       R"({"kind":"Deployment","metadata":{"name":"d","annotations":{"k":"v"}},
           "spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c"}]}}}})",
       {location("/spec/template/spec", "/spec/template/metadata")},
       R"({"kind":<discarded>,"metadata":<discarded>,"spec":{"replicas":<discarded>,)"
       R"("template":{"spec":{"containers":[{"name":<discarded>}]}}}})"},
      {"pod specs inside lists, two of them, the second without containers",
       R"({"kind":"JobSet","spec":{"replicatedJobs":[
           {"name":"a","template":{"spec":{"template":{"metadata":{"labels":{}},
             "spec":{"containers":[{"name":"x","resources":{}}],"affinity":{}}}}}},
           {"name":"b","template":{"spec":{"template":{"spec":{"restartPolicy":"Never"}}}}}]}})",
       {location("/spec/replicatedJobs/0/template/spec/template/spec",
                 "/spec/replicatedJobs/0/template/spec/template/metadata"),
        location("/spec/replicatedJobs/1/template/spec/template/spec",
                 "/spec/replicatedJobs/1/template/spec/template/metadata")},
       R"({"kind":<discarded>,"spec":{"replicatedJobs":[{"name":<discarded>,"template":{"spec":)"
       R"({"template":{"metadata":{"labels":<discarded>},"spec":{"containers":[{"name":)"
       R"(<discarded>,"resources":{}}],"affinity":{}}}}}},{"name":<discarded>,"template":)"
       R"({"spec":{"template":{"spec":{"restartPolicy":<discarded>}}}}}]}})"},
      {"shapes no mutator edits: a container list that is no list, a container that is no object",
       R"({"spec":{"containers":{"name":"c"},"initContainers":["x",{"resources":null}]}})",
       {location("/spec", "/metadata")},
       R"({"spec":{"containers":<discarded>,"initContainers":[<discarded>,{"resources":null}]}})"},
      {"a CronJob: Kueue's labels are the jobTemplate's; the CronJob's own are not copied",
       R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"labels":{"a":"b"}},
           "spec":{"jobTemplate":{"metadata":{"labels":{"c":"d"},"name":"x"},
             "spec":{"template":{"spec":{"containers":[{"name":"c","env":null}]}}}}}})",
       {location("/spec/jobTemplate/spec/template/spec",
                 "/spec/jobTemplate/spec/template/metadata")},
       R"({"apiVersion":<discarded>,"kind":<discarded>,"metadata":<discarded>,"spec":)"
       R"({"jobTemplate":{"metadata":{"labels":{"c":"d"},"name":<discarded>},"spec":{"template":)"
       R"({"spec":{"containers":[{"name":<discarded>,"env":null}]}}}}}})"},
      {"a Pod of a ReplicaSet: with no sender the owner is not believed (the queue mutation may "
       "label the Pod itself), its labels are copied",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"},"ownerReferences":[
           {"apiVersion":"apps/v1","kind":"ReplicaSet","controller":true}]},"spec":{"containers":[]}})",
       {location("/spec", "/metadata")},
       R"({"apiVersion":<discarded>,"kind":<discarded>,"metadata":{"labels":{"a":"b"},)"
       R"("ownerReferences":<discarded>},"spec":{"containers":<discarded>}})"},
      {"a Pod of a controller gpuadmit does not know (Argo Workflows): Kueue's pod integration "
       "reads its own labels",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"},"ownerReferences":[
           {"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","controller":true}]},
           "spec":{"containers":[]}})",
       {location("/spec", "/metadata")},
       R"({"apiVersion":<discarded>,"kind":<discarded>,"metadata":{"labels":{"a":"b"},)"
       R"("ownerReferences":<discarded>},"spec":{"containers":<discarded>}})"},
      {"a ReplicaSet of no controller: its pods are the pod integration's, the template's labels",
       R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"labels":{"a":"b"}},
           "spec":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[]}}}})",
       {location("/spec/template/spec", "/spec/template/metadata")},
       R"({"apiVersion":<discarded>,"kind":<discarded>,"metadata":<discarded>,"spec":{"template":)"
       R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":<discarded>}}}})"},
      {"a location whose path is missing or runs through a scalar",
       R"({"spec":{"template":7}})",
       {location("/spec/template/spec", "/spec/template/metadata"),
        location("/spec/jobs/0/spec", "/spec/jobs/0/metadata")},
       R"({"spec":{"template":7}})"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const Json object = Json::parse(c.object);
    const Json skeleton = mutation_skeleton(object, c.locations, no_workloads());
    CHECK(skeleton.dump() == c.skeleton);
    // Unedited, the object equals its skeleton: placeholders match anything.
    const JsonDiff diff = json_diff(skeleton, object, PatchForm::kText);
    CHECK(diff.equal);
    CHECK(diff.patch_text == "[]");
  }
}

TEST_CASE("mutation skeleton: edits of what mutators write come out as Json::diff has them") {
  const Json before = Json::parse(
      R"({"kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{
          "containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":1}}}],
          "nodeSelector":{"pool":"a100","zone":"x"}}}}})");
  const Json skeleton = mutation_skeleton(
      before, {location("/spec/template/spec", "/spec/template/metadata")}, no_workloads());
  Json after = before;
  Json& spec = after["spec"]["template"]["spec"];
  spec["containers"][0]["resources"]["requests"] = {{"nvidia.com/gpu", 1}};
  spec["nodeSelector"].erase("pool");
  spec["tolerations"] = Json::parse(R"([{"key":"gpu","operator":"Exists"}])");
  after["spec"]["template"]["metadata"] = {{"annotations", {{"gpuadmit.io/class", "a100"}}}};
  const JsonDiff diff = json_diff(skeleton, after, PatchForm::kJson);
  CHECK_FALSE(diff.equal);
  CHECK(diff.reproduces);
  CHECK(diff.patch.dump() == Json::diff(before, after).dump());
  CHECK(diff.patch.dump() ==
        R"([{"op":"add","path":"/spec/template/spec/containers/0/resources/requests",)"
        R"("value":{"nvidia.com/gpu":1}},{"op":"remove","path":"/spec/template/spec/)"
        R"(nodeSelector/pool"},{"op":"add","path":"/spec/template/spec/tolerations","value":)"
        R"([{"key":"gpu","operator":"Exists"}]},{"op":"add","path":"/spec/template/metadata",)"
        R"("value":{"annotations":{"gpuadmit.io/class":"a100"}}}])");
}

// Recorded as mutators reach members, between writes: the metadata a first mutator creates does
// not hide from the diff behind a shell opened later, and a member recorded twice keeps its
// value from before the first write.
TEST_CASE("mutation skeleton: recording between writes gives Json::diff's patch") {
  const Json before = Json::parse(
      R"({"kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{
          "containers":[{"name":"c","env":[{"name":"A","value":"1"}]},{"name":"s"}],
          "tolerations":[{"key":"a","operator":"Exists"}]}}}})");
  const PodSpecLocation at = location("/spec/template/spec", "/spec/template/metadata");
  Json after = before;
  MutationSkeleton skeleton(after);
  skeleton.record_metadata_member(at.metadata, "annotations");
  after["spec"]["template"]["metadata"] = {{"annotations", {{"gpuadmit.io/class", "a100"}}}};
  skeleton.record_container_member(at, after["spec"]["template"]["spec"], ContainerKind::kApp, 1,
                                   "env");
  after["spec"]["template"]["spec"]["containers"][1]["env"] = Json::array({{{"name", "B"}}});
  skeleton.record_spec_member(at, after["spec"]["template"]["spec"], "tolerations");
  after["spec"]["template"]["spec"]["tolerations"].push_back({{"key", "b"}});
  skeleton.record_spec_member(at, after["spec"]["template"]["spec"], "tolerations");
  after["spec"]["template"]["spec"]["tolerations"].push_back({{"key", "c"}});
  skeleton.record_container_member(at, after["spec"]["template"]["spec"], ContainerKind::kApp, 1,
                                   "env");
  CHECK(
      skeleton.json().dump() ==
      R"({"kind":<discarded>,"metadata":<discarded>,"spec":{"template":{"spec":{"containers":)"
      R"([<discarded>,{"name":<discarded>}],"tolerations":[{"key":"a","operator":"Exists"}]}}}})");
  const JsonDiff diff = json_diff(skeleton.json(), after, PatchForm::kJson);
  CHECK(diff.reproduces);
  CHECK(diff.patch.dump() == Json::diff(before, after).dump());
  CHECK(diff.patch.dump() ==
        R"([{"op":"add","path":"/spec/template/spec/containers/1/env","value":[{"name":"B"}]},)"
        R"({"op":"add","path":"/spec/template/spec/tolerations/-","value":{"key":"b"}},)"
        R"({"op":"add","path":"/spec/template/spec/tolerations/-","value":{"key":"c"}},)"
        R"({"op":"add","path":"/spec/template/metadata","value":{"annotations":)"
        R"({"gpuadmit.io/class":"a100"}}}])");
}

}  // namespace
}  // namespace mutation_skeleton_test
}  // namespace gpuadmit
