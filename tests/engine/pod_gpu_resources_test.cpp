// PodGpuResources (engine/resources.h): each container's GPU resources, read once per pod spec
// for the rules — which entries, the raw values, the parsed quantities and the units.

#include <catch2/catch.hpp>

#include <string>
#include <variant>
#include <vector>

#include "engine/pod_view.h"
#include "engine/resources.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace pod_gpu_resources_test {
namespace {

// "nvidia.com/gpu req=2 lim=2 eff=2": the written values ("-" when absent) and the effective
// quantity ("?" when unparsable or absent).
std::string describe(const ContainerGpuResource& r) {
  auto text = [](const Json* v) { return v == nullptr ? std::string("-") : v->dump(); };
  const std::optional<Quantity>& q = r.effective_quantity();
  return r.resource + " req=" + text(r.request) + " lim=" + text(r.limit) +
         " eff=" + (q ? q->to_string() : "?");
}

TEST_CASE("resources: PodGpuResources reads each container's GPU resources once") {
  struct Case {
    std::string name;
    std::string spec;
    std::vector<std::vector<std::string>> resources;  // per container, in pod order
    std::vector<int64_t> units;                       // per container
    bool any_positive;
  };
  const std::vector<Case> cases = {
      {"no resources", R"({"containers":[{"name":"a"}]})", {{}}, {0}, false},
      {"non-GPU resources only",
       R"({"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]})",
       {{}},
       {0},
       false},
      {"a limit only",
       R"({"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}}]})",
       {{"nvidia.com/gpu req=- lim=\"2\" eff=2"}},
       {2},
       true},
      {"request and limit, requests first",
       R"({"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":4},
           "requests":{"nvidia.com/gpu":"1"}}}]})",
       {{"nvidia.com/gpu req=\"1\" lim=4 eff=1"}},
       {1},
       true},
      {"limits-only resources follow the requested ones",
       R"({"containers":[{"name":"a","resources":{"requests":{"amd.com/gpu":"1"},
           "limits":{"nvidia.com/mig-1g.10gb":"2","amd.com/gpu":"1"}}}]})",
       {{"amd.com/gpu req=\"1\" lim=\"1\" eff=1", "nvidia.com/mig-1g.10gb req=- lim=\"2\" eff=2"}},
       {3},
       true},
      {"null values are absent",
       R"({"containers":[{"name":"a","resources":{"requests":{"nvidia.com/gpu":null},
           "limits":{"nvidia.com/gpu":"1"}}}]})",
       {{"nvidia.com/gpu req=- lim=\"1\" eff=1"}},
       {1},
       true},
      // The rules see the unparsable request (GPU002); units fall back to the limit, as
      // container_gpu_units does.
      {"an unparsable request",
       R"({"containers":[{"name":"a","resources":{"requests":{"nvidia.com/gpu":"lots"},
           "limits":{"nvidia.com/gpu":"3"}}}]})",
       {{"nvidia.com/gpu req=\"lots\" lim=\"3\" eff=?"}},
       {3},
       true},
      {"zero and negative are not positive",
       R"({"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"0"}}},
           {"name":"b","resources":{"limits":{"nvidia.com/gpu":"-1"}}}]})",
       {{"nvidia.com/gpu req=- lim=\"0\" eff=0"}, {"nvidia.com/gpu req=- lim=\"-1\" eff=-1"}},
       {0, 0},
       false},
      {"fractions round up to whole units",
       R"({"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"500m"}}}]})",
       {{"nvidia.com/gpu req=- lim=\"500m\" eff=500m"}},
       {1},
       true},
      {"init, app and ephemeral containers in pod order",
       R"({"initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/gpu":"1"}}}],
           "containers":[{"name":"a"},{"name":"b","resources":{"limits":{"amd.com/gpu":2}}}],
           "ephemeralContainers":[{"name":"e","resources":{"limits":{"nvidia.com/gpu":"0"}}}]})",
       {{"nvidia.com/gpu req=- lim=\"1\" eff=1"},
        {},
        {"amd.com/gpu req=- lim=2 eff=2"},
        {"nvidia.com/gpu req=- lim=\"0\" eff=0"}},
       {1, 0, 2, 0},
       true},
  };
  const PolicyPtr policy = testing::amd_gpu_policy();
  for (const Case& c : cases) {
    SECTION(c.name) {
      Json object = Json::parse(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + c.spec + "}");
      const auto locations = find_pod_specs(object, *policy);
      REQUIRE(locations.size() == 1);
      auto made = PodView::make(object, locations[0]);
      REQUIRE(made.has_value());
      const PodView& pod = *made;
      const PodGpuResources gpu(pod, *policy);
      REQUIRE(gpu.size() == c.resources.size());
      for (size_t i = 0; i < gpu.size(); ++i) {
        std::vector<std::string> got;
        for (const ContainerGpuResource& r : gpu.of(i)) got.push_back(describe(r));
        CHECK(got == c.resources[i]);
        CHECK(gpu.units(i) == c.units[i]);
        CHECK(gpu.units(i) == container_gpu_units(pod.container(pod.containers()[i]), *policy));
      }
      CHECK(gpu.any_positive() == c.any_positive);
      CHECK(gpu.any_positive() == is_gpu_pod(pod, *policy));
    }
  }
}

}  // namespace
}  // namespace pod_gpu_resources_test
}  // namespace gpuadmit
