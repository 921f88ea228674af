// The one PodRequests walk (engine/resources.h pod_requests) against the cases Kubernetes tests
// its own with: k8s.io/component-helpers/resource/helpers_test.go TestPodResourceRequests and
// TestPodRequestsAndLimits. Their pods ask for cpu; the formula is the same for every resource
// name (AggregateContainerRequests walks a ResourceList), so each is written here with
// nvidia.com/gpu in place of cpu and the expected amount unchanged. Then what is specific to
// GPUs: pod-level resources never replace a GPU resource, limits stand in for missing requests
// (the API server's defaulting), ephemeral containers count nothing, resources walk separately.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "engine/pod_view.h"
#include "engine/resources.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace pod_requests_test {
namespace {

// {"name":N,"resources":{"requests":{"nvidia.com/gpu":"Q"}}}, a sidecar when `sidecar`.
std::string c(const std::string& name, const std::string& q, bool sidecar = false) {
  return R"({"name":")" + name + "\"," + (sidecar ? R"("restartPolicy":"Always",)" : "") +
         R"("resources":{"requests":{"nvidia.com/gpu":")" + q + R"("}}})";
}
std::string s(const std::string& name, const std::string& q) { return c(name, q, true); }
std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& i : items) out += (out.size() > 1 ? "," : "") + i;
  return out + "]";
}
std::string spec(const std::vector<std::string>& init, const std::vector<std::string>& app,
                 const std::string& extra = "") {
  return R"({"initContainers":)" + list(init) + R"(,"containers":)" + list(app) + extra + "}";
}

struct Case {
  std::string name;  // Kubernetes' test name when taken from helpers_test.go
  std::string spec;
  std::vector<std::pair<std::string, int64_t>> expected;  // per resource, first-named order
  // The containers behind each resource's amount, "index:units" (overhead: "overhead:units").
  std::vector<std::string> parts;
};

std::vector<std::pair<std::string, int64_t>> gpu(int64_t n) { return {{"nvidia.com/gpu", n}}; }

TEST_CASE("resources: pod_requests matches Kubernetes' PodRequests", "[resources][PodRequests]") {
  const std::vector<Case> cases = {
      // TestPodResourceRequests
      {"nil options, larger init container", spec({c("i", "4")}, {c("a", "1")}), gpu(4), {"0:4"}},
      {"nil options, larger containers",
       spec({c("i", "2")}, {c("a", "2"), c("b", "3")}),
       gpu(5),
       {"1:2", "2:3"}},
      {"pod overhead included",
       spec({c("i", "2")}, {c("a", "2"), c("b", "3")},
            R"(,"overhead":{"nvidia.com/gpu":"1","memory":"1Gi"})"),
       gpu(6),
       {"1:2", "2:3", "overhead:1"}},
      {"restartable init container", spec({s("r", "1")}, {c("a", "1")}), gpu(2), {"0:1", "1:1"}},
      // max(5, restartable init containers(3+2+1) + regular(1)) = 7
      {"multiple restartable init containers",
       spec({c("init-1", "5"), s("r1", "1"), s("r2", "2"), s("r3", "3")}, {c("a", "1")}),
       gpu(7),
       {"1:1", "2:2", "3:3", "4:1"}},
      // init-2 requires 5 + the previously running restartable init containers (1+2) = 8, the
      // restartable init container that starts after it doesn't count
      {"multiple restartable and regular init containers",
       spec({c("init-1", "5"), s("r1", "1"), s("r2", "2"), c("init-2", "5"), s("r3", "3")},
            {c("a", "1")}),
       gpu(8),
       {"1:1", "2:2", "3:5"}},
      {"restartable-init, init and regular",
       spec({s("r", "10"), c("i", "200")}, {c("a", "100")}),
       gpu(210),
       {"0:10", "1:200"}},
      // TestPodRequestsAndLimits
      {"just-overhead",
       spec({}, {R"({"name":"a"})"}, R"(,"overhead":{"nvidia.com/gpu":"5"})"),
       gpu(5),
       {"overhead:5"}},
      {"req-and-overhead",
       spec({}, {c("a", "1")}, R"(,"overhead":{"nvidia.com/gpu":"5"})"),
       gpu(6),
       {"0:1", "overhead:5"}},
      // GPU-specific.
      // applyPodLevelResources replaces only IsSupportedPodLevelResource names (cpu, memory,
      // hugepages-*): a pod-level nvidia.com/gpu changes nothing (and is GPU015).
      {"pod-level resources never replace a GPU resource",
       spec({}, {c("a", "2")}, R"(,"resources":{"requests":{"nvidia.com/gpu":"8","cpu":"4"}})"),
       gpu(2),
       {"0:2"}},
      // SetDefaults_Pod copies a missing request from the limit before the scheduler sees it.
      {"a limit stands in for a missing request",
       spec({}, {R"({"name":"a","resources":{"limits":{"nvidia.com/gpu":"3"}}})"}),
       gpu(3),
       {"0:3"}},
      // Not even as a resource of amount 0: nothing of theirs is walked.
      {"ephemeral containers count nothing",
       R"({"containers":[{"name":"a"}],"ephemeralContainers":[{"name":"e","resources":{"limits":{"nvidia.com/gpu":"1"}}}]})",
       {},
       {}},
      {"a tie between init and app containers keeps the app containers",
       spec({c("i", "3")}, {c("a", "1"), c("b", "2")}),
       gpu(3),
       {"1:1", "2:2"}},
      {"each resource walks on its own",
       spec({c("i", "2")},
            {R"({"name":"a","resources":{"requests":{"nvidia.com/mig-1g.10gb":"3"}}})"}),
       {{"nvidia.com/gpu", 2}, {"nvidia.com/mig-1g.10gb", 3}},
       {"0:2", "1:3"}},
      {"absurd amounts saturate",
       spec({}, {c("a", "9223372036854775807"), c("b", "9223372036854775807")}),
       gpu(INT64_MAX),
       {"0:9223372036854775807", "1:9223372036854775807"}},
  };
  const PolicyPtr policy = testing::amd_gpu_policy();
  for (const Case& tc : cases) {
    SECTION(tc.name) {
      const Json object = Json::parse(
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + tc.spec + "}");
      const auto locations = find_pod_specs(object, *policy);
      REQUIRE(locations.size() == 1);
      auto made = PodView::make(object, locations[0]);
      REQUIRE(made.has_value());
      const PodView& pod = *made;
      const PodGpuResources gpu_resources(pod, *policy);
      std::vector<std::pair<std::string, int64_t>> got;
      std::vector<std::string> parts;
      int64_t total = 0;
      for (const PodResourceRequest& r : pod_requests(pod, gpu_resources, nullptr, true)) {
        got.emplace_back(std::string(r.resource), r.units);
        total = total > INT64_MAX - r.units ? INT64_MAX : total + r.units;
        for (const auto& [index, units] : r.parts) {
          parts.push_back(
              (index == kPodOverheadPart ? std::string("overhead") : std::to_string(index)) + ":" +
              std::to_string(units));
        }
      }
      CHECK(got == tc.expected);
      CHECK(parts == tc.parts);
      // Every entry point gives the same amounts: the walk is the only one.
      CHECK(pod_requests_total(pod, gpu_resources) == total);
      CHECK(effective_pod_gpus(pod, *policy) == total);
      std::vector<std::pair<std::string, int64_t>> named;
      for (const PodGpuRequest& r : effective_pod_gpu_requests(pod, *policy)) {
        named.emplace_back(r.resource, r.units);
      }
      CHECK(named == tc.expected);
    }
  }
}

TEST_CASE("resources: pod_requests limited to some resources", "[resources][PodRequests]") {
  const PolicyPtr policy = testing::amd_gpu_policy();
  const Json object = Json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" +
      spec({}, {c("a", "2"),
                R"({"name":"b","resources":{"requests":{"nvidia.com/mig-1g.10gb":"3"}}})"}) +
      "}");
  const auto locations = find_pod_specs(object, *policy);
  auto made = PodView::make(object, locations[0]);
  REQUIRE(made.has_value());
  const PodGpuResources gpu_resources(*made, *policy);
  const auto whole = [](std::string_view r) { return r == "nvidia.com/gpu"; };
  const std::vector<PodResourceRequest> only = pod_requests(*made, gpu_resources, whole);
  REQUIRE(only.size() == 1);
  CHECK(only[0].resource == "nvidia.com/gpu");
  CHECK(only[0].units == 2);
  CHECK(only[0].parts.empty());  // parts only when asked
  CHECK(pod_requests_total(*made, gpu_resources, whole) == 2);
  CHECK(pod_requests_total(*made, gpu_resources) == 5);
}

}  // namespace
}  // namespace pod_requests_test
}  // namespace gpuadmit
