// PodView shape checks, settings lookup, and the scheduler's effective GPU request.

#include <catch2/catch.hpp>

#include <string>
#include <variant>
#include <vector>

#include "engine/pod_view.h"
#include "engine/pod_writer.h"
#include "engine/resources.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace pod_view_test {
namespace {

Json pod(const std::string& spec) {
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec +
                     "}");
}

std::string shape_error(Json object) {
  static const PolicyPtr policy = testing::amd_gpu_policy();
  auto locations = find_pod_specs(object, *policy);
  REQUIRE(locations.size() == 1);
  auto made = PodView::make(object, locations[0]);
  if (!made) return made.error();
  return "";
}

TEST_CASE("pod view: malformed pod specs are named precisely") {
  struct Case {
    std::string spec;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"({"containers":[]})", ""},
      {R"({"containers":null,"tolerations":null})", ""},
      {R"({"containers":{}})", "spec.containers: must be a list, not object"},
      {R"({"containers":["x"]})", "spec.containers[0]: must be an object, not string"},
      {R"({"containers":[{"resources":[]}]})",
       "spec.containers[0].resources: must be an object, not array"},
      {R"({"containers":[{"resources":{"limits":{"nvidia.com/gpu":true}}}]})",
       R"(spec.containers[0].resources.limits["nvidia.com/gpu"]: must be a quantity, not boolean)"},
      {R"({"initContainers":[{"name":7}]})",
       "spec.initContainers[0].name: must be a string, not number"},
      {R"({"tolerations":[1]})", "spec.tolerations[0]: must be an object, not number"},
      {R"({"nodeSelector":{"a":1}})", R"(spec.nodeSelector["a"]: must be a string, not number)"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In","values":[1]}]}]}}}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0]"
       ".matchExpressions[0].values[0]: must be a string, not number"},
      {R"({"priority":"high"})", "spec.priority: must be an integer, not string"},
  };
  for (const Case& c : cases) {
    INFO(c.spec);
    CHECK(shape_error(pod(c.spec)) == c.error);
  }
  CHECK(shape_error(Json::parse(R"({"apiVersion":"v1","kind":"Pod","spec":"x"})")) ==
        "spec: must be an object, not string");
  CHECK(shape_error(Json::parse(
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"annotations":{"a":[]}},"spec":{}})")) ==
        R"(metadata.annotations["a"]: must be a string, not array)");
}

TEST_CASE(
    "pod view: settings prefer the pod template's annotations, then labels, then the object's") {
  static const PolicyPtr policy = testing::amd_gpu_policy();
  Json deployment = Json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"annotations":{"gpuadmit.io/class":"top","gpuadmit.io/workload":"training"},
                "labels":{"gpuadmit.io/mig-profile":"1g.10gb"}},
    "spec":{"template":{"metadata":{"labels":{"gpuadmit.io/class":"from-label"}},"spec":{}}}})");
  auto locations = find_pod_specs(deployment, *policy);
  auto view = *PodView::make(deployment, locations[0]);
  CHECK(view.setting("gpuadmit.io/class") == "from-label");
  CHECK(view.setting("gpuadmit.io/workload") == "training");
  CHECK(view.setting("gpuadmit.io/mig-profile") == "1g.10gb");
  CHECK_FALSE(view.setting("gpuadmit.io/other"));
  PodWriter writer(view, deployment);
  CHECK(writer.set_annotation("gpuadmit.io/class", "a100"));
  CHECK_FALSE(writer.set_annotation("gpuadmit.io/class", "a100"));
  CHECK(view.setting("gpuadmit.io/class") == "a100");
  CHECK(deployment["spec"]["template"]["metadata"]["annotations"] ==
        Json{{"gpuadmit.io/class", "a100"}});
}

TEST_CASE("resources: effective pod GPUs as the scheduler computes them") {
  static const PolicyPtr policy = testing::amd_gpu_policy();
  struct Case {
    std::string name;
    std::string spec;
    int64_t gpus;
    bool gpu_pod;
  };
  auto gpu = [](const std::string& name, const std::string& n, const std::string& extra = "") {
    return R"({"name":")" + name + R"(",)" + extra +
           R"("resources":{"limits":{"nvidia.com/gpu":")" + n + R"("}}})";
  };
  const std::vector<Case> cases = {
      {"no containers", R"({})", 0, false},
      {"two app containers add up",
       "{\"containers\":[" + gpu("a", "1") + "," + gpu("b", "2") + "]}", 3, true},
      {"an init container larger than the app containers wins",
       "{\"initContainers\":[" + gpu("i", "4") + "],\"containers\":[" + gpu("a", "1") + "]}", 4,
       true},
      {"a restartable sidecar adds to the app containers and to later init containers",
       "{\"initContainers\":[" + gpu("s", "1", R"("restartPolicy":"Always",)") + "," +
           gpu("i", "2") + "],\"containers\":[" + gpu("a", "1") + "]}",
       3, true},
      {"an init container before the sidecar does not see it",
       "{\"initContainers\":[" + gpu("i", "2") + "," +
           gpu("s", "1", R"("restartPolicy":"Always",)") + "],\"containers\":[" + gpu("a", "1") +
           "]}",
       2, true},
      {"zero is not a GPU request", "{\"containers\":[" + gpu("a", "0") + "]}", 0, false},
      // PodRequests takes the max of init vs app containers per resource name, then the GPU
      // resources add up: the init container's 2 whole GPUs and the app's 3 MIG slices are both
      // charged (max over the summed units would say 3).
      {"init vs app containers per resource: whole GPUs and MIG slices both count",
       "{\"initContainers\":[" + gpu("i", "2") +
           R"(],"containers":[{"name":"a","resources":{"limits":{"nvidia.com/mig-1g.10gb":"3"}}}]})",
       5, true},
      {"per resource, a larger init container still wins for its own resource",
       "{\"initContainers\":[" + gpu("i", "4") + "],\"containers\":[" + gpu("a", "1") +
           R"(,{"name":"b","resources":{"limits":{"nvidia.com/mig-1g.10gb":"2"}}}]})",
       6, true},
      {"MIG and shared resources count",
       R"({"containers":[{"resources":{"requests":{"nvidia.com/mig-1g.10gb":"2"},"limits":{"nvidia.com/gpu.shared":1}}}]})",
       3, true},
      {"policy gpuResources count",
       R"({"containers":[{"resources":{"limits":{"amd.com/gpu":"1"}}}]})", 1, true},
      {"other extended resources do not",
       R"({"containers":[{"resources":{"limits":{"example.com/fpga":"1","cpu":"4"}}}]})", 0, false},
      {"ephemeral containers make a GPU pod but add nothing",
       "{\"ephemeralContainers\":[" + gpu("e", "1") + "]}", 0, true},
      {"requests win over limits",
       R"({"containers":[{"resources":{"requests":{"nvidia.com/gpu":"2"},"limits":{"nvidia.com/gpu":"3"}}}]})",
       2, true},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Json object = pod(c.spec);
    auto locations = find_pod_specs(object, *policy);
    auto view = *PodView::make(object, locations[0]);
    CHECK(effective_pod_gpus(view, *policy) == c.gpus);
    CHECK(is_gpu_pod(view, *policy) == c.gpu_pod);
  }
}

TEST_CASE("json: depth check runs before parsing and ignores brackets inside strings") {
  CHECK_FALSE(json_depth_exceeds(R"({"a":[[1]]})", 3));
  CHECK(json_depth_exceeds(R"({"a":[[1]]})", 2));
  CHECK_FALSE(json_depth_exceeds(R"({"a":"[[[[[[[[\"[[["})", 1));
  CHECK(json_depth_exceeds(std::string(10000, '['), 100));
  CHECK(escape_pointer_token("nvidia.com/gpu~x") == "nvidia.com~1gpu~0x");
}

}  // namespace
}  // namespace pod_view_test
}  // namespace gpuadmit
