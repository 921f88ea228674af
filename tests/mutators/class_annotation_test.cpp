#include "mutators/class_annotation.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace class_annotation_test {
namespace {

constexpr std::string_view kGpuContainer =
    R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}])";

std::string pod(const std::string& metadata, const std::string& extra_spec = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":)" + metadata + R"(,"spec":{)" + extra_spec +
         R"("containers":)" + std::string(kGpuContainer) + "}}";
}

TEST_CASE("mutator class: records the resolved class on the pod or template", "[mutators][class]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_class_annotation_mutator();
  CHECK(mutator->name() == "class");
  run_mutation_cases(
      *mutator, policy,
      {
          {"the tenant's defaultClass", "ml-a", pod(R"({"name":"p"})"),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"a100"}})")},
          {"the annotation is already there", "ml-a",
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"l4"}})"), ""},
          {"a class label becomes an annotation too; the label stays", "ml-a",
           pod(R"({"name":"p","labels":{"gpuadmit.io/class":"t4"},"annotations":{"x":"y"}})"),
           pod(R"({"name":"p","labels":{"gpuadmit.io/class":"t4"},
               "annotations":{"x":"y","gpuadmit.io/class":"t4"}})")},
          {"the class matched from the pod's nodeSelector", "ml-a",
           pod(R"({"name":"p"})", R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"},)"),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"l4"}})",
               R"("nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-L4"},)")},
          {"null annotations are replaced", "ml-a", pod(R"({"name":"p","annotations":null})"),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"a100"}})")},
          {"an unknown class (GPU004) is not recorded", "ml-a",
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"h200"}})"), ""},
          {"a namespace without tenant and a policy with several classes: no class", "default",
           pod(R"({"name":"p"})"), ""},
          {"a non-GPU pod has no class", "ml-a",
           R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
               {"name":"c","resources":{"limits":{"cpu":"1"}}}]}})",
           ""},
          {"a Deployment: the top-level annotation is recorded on the template", "ml-a",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d",
               "annotations":{"gpuadmit.io/class":"l4"}},"spec":{"template":{"spec":
               {"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d",
               "annotations":{"gpuadmit.io/class":"l4"}},"spec":{"template":{"spec":
               {"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]},
               "metadata":{"annotations":{"gpuadmit.io/class":"l4"}}}}})"},
      });
}

// Two pools sharing a label, as GKE's nvidia-l4 pool and its time-sharing variant
// (policies/examples/gke.yaml): the pod's nodeSelector picks the class it names most labels of.
constexpr std::string_view kOverlappingPools = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: overlapping}
spec:
  classes:
    l4:
      nodeSelector:
        cloud.google.com/gke-accelerator: [nvidia-l4]
    l4-shared:
      nodeSelector:
        cloud.google.com/gke-accelerator: [nvidia-l4]
        cloud.google.com/gke-gpu-sharing-strategy: [time-sharing]
    a100:
      nodeSelector:
        cloud.google.com/gke-accelerator: [nvidia-a100-80gb]
  tenants:
    - name: serving
      namespaces: [serve]
      defaultClass: a100
      allowedClasses: [l4, l4-shared, a100]
)YAML";

TEST_CASE("mutator class: the nodeSelector picks the most specific matching class",
          "[mutators][class]") {
  auto policy = policy_from_yaml(kOverlappingPools);
  auto mutator = make_class_annotation_mutator();
  const std::string l4 = R"("nodeSelector":{"cloud.google.com/gke-accelerator":"nvidia-l4"},)";
  const std::string shared =
      R"("nodeSelector":{"cloud.google.com/gke-gpu-sharing-strategy":"time-sharing",)"
      R"("cloud.google.com/gke-accelerator":"nvidia-l4"},)";
  const std::string other_strategy =
      R"("nodeSelector":{"cloud.google.com/gke-accelerator":"nvidia-l4",)"
      R"("cloud.google.com/gke-gpu-sharing-strategy":"mps"},)";
  run_mutation_cases(
      *mutator, policy,
      {
          {"only the shared label set: the first class naming it", "serve",
           pod(R"({"name":"p"})", l4),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"l4"}})", l4)},
          {"both labels: the time-sharing pool, though l4 comes first", "serve",
           pod(R"({"name":"p"})", shared),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"l4-shared"}})", shared)},
          {"a value outside l4-shared's rules it out; l4 still matches", "serve",
           pod(R"({"name":"p"})", other_strategy),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"l4"}})", other_strategy)},
          {"no class label: the tenant's default", "serve",
           pod(R"({"name":"p"})", R"("nodeSelector":{"kubernetes.io/os":"linux"},)"),
           pod(R"({"name":"p","annotations":{"gpuadmit.io/class":"a100"}})",
               R"("nodeSelector":{"kubernetes.io/os":"linux"},)")},
      });
}

}  // namespace
}  // namespace class_annotation_test
}  // namespace gpuadmit::testing
