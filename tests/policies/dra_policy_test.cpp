// The policy's DRA fields (docs/dra.md): classes' deviceClasses and tenants' dra switches, and
// every error `policy check` reports for them, with its location.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/compiled_policy.h"
#include "policies/loader.h"
#include "tests/support/policy_errors.h"

namespace gpuadmit {
namespace dra_policy_test {

using testing::policy_errors;
using testing::replaced;
using Errors = testing::PolicyErrors;
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: dra
spec:
  classes:
    a100:
      mig: {strategy: mixed, profiles: [1g.10gb, 3g.40gb]}
      deviceClasses:
        gpu.nvidia.com: {}
        mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7, migProfile: 1g.10gb}
    l4:
      deviceClasses:
        l4.example.com:
  tenants:
    - name: admins
      namespaces: [admin]
      dra: {adminAccess: true, allocationModeAll: true}
    - name: users
      namespaces: [".*"]
)YAML";

TEST_CASE("policy: deviceClasses and tenant dra switches load", "[policy][dra]") {
  PolicyLoadResult loaded = load_policy(kPolicy, "p.yaml");
  REQUIRE(loaded.ok());
  const Policy& p = *loaded.policy;
  REQUIRE(p.classes[0].device_classes.size() == 2);
  CHECK(p.classes[0].device_classes[0].name == "gpu.nvidia.com");
  CHECK(p.classes[0].device_classes[0].devices_per_gpu == 1);
  CHECK(p.classes[0].device_classes[0].mig_profile.empty());
  CHECK(p.classes[0].device_classes[1].devices_per_gpu == 7);
  CHECK(p.classes[0].device_classes[1].mig_profile == "1g.10gb");
  REQUIRE(p.classes[1].device_classes.size() == 1);  // `l4.example.com:` (null) is the defaults
  CHECK(p.classes[1].device_classes[0].devices_per_gpu == 1);
  CHECK(p.tenants[0].dra.admin_access);
  CHECK(p.tenants[0].dra.allocation_mode_all);
  CHECK_FALSE(p.tenants[1].dra.admin_access);
  CHECK_FALSE(p.tenants[1].dra.allocation_mode_all);

  const auto compiled = CompiledPolicy::compile(std::move(*loaded.policy));
  const auto match = compiled->find_device_class("mig-1g.10gb.gpu.nvidia.com");
  REQUIRE(match.gpu_class != nullptr);
  CHECK(match.gpu_class->name == "a100");
  CHECK(match.mapping->devices_per_gpu == 7);
  CHECK(compiled->find_device_class("l4.example.com").gpu_class->name == "l4");
  CHECK(compiled->find_device_class("sriov.nic.example.com").gpu_class == nullptr);
}

TEST_CASE("policy: DRA errors name the field with file:line:column", "[policy][dra]") {
  using Errors = std::vector<std::string>;
  // Duplicate across classes: reported at the second mapping's key.
  CHECK(policy_errors(replaced(kPolicy, "        l4.example.com:", "        gpu.nvidia.com:")) ==
        Errors{"spec.classes.l4.deviceClasses[gpu.nvidia.com]: DeviceClass \"gpu.nvidia.com\" "
               "is already mapped by spec.classes.a100.deviceClasses[gpu.nvidia.com]; a "
               "DeviceClass hands out the devices of one class (p.yaml:14:9)"});
  CHECK(policy_errors(replaced(kPolicy, "devicesPerGPU: 7", "devicesPerGPU: 0")) ==
        Errors{"spec.classes.a100.deviceClasses[mig-1g.10gb.gpu.nvidia.com].devicesPerGPU: must "
               "be at least 1, got 0 (p.yaml:11:53)"});
  CHECK(policy_errors(replaced(kPolicy, "devicesPerGPU: 7", "devicesPerGPU: \"7\"")).size() == 1);
  CHECK(policy_errors(replaced(kPolicy, "migProfile: 1g.10gb", "migProfile: 2g.20gb")) ==
        Errors{"spec.classes.a100.deviceClasses[mig-1g.10gb.gpu.nvidia.com].migProfile: unknown "
               "MIG profile \"2g.20gb\": class \"a100\" offers 1g.10gb, 3g.40gb (p.yaml:11:68)"});
  CHECK(policy_errors(replaced(
            kPolicy, "        l4.example.com:", "        l4.example.com: {migProfile: 1g.10gb}")) ==
        Errors{"spec.classes.l4.deviceClasses[l4.example.com].migProfile: migProfile "
               "\"1g.10gb\" on class \"l4\", which has no mig: describe the class's MIG profiles "
               "under mig.profiles (p.yaml:14:38)"});
  CHECK(policy_errors(replaced(kPolicy, "        gpu.nvidia.com: {}", "        GPU_Class: {}")) ==
        Errors{"spec.classes.a100.deviceClasses.GPU_Class: invalid DeviceClass name "
               "\"GPU_Class\": must be a DNS subdomain (lower-case letters, digits, '-' and '.'), "
               "e.g. gpu.nvidia.com (p.yaml:10:9)"});
  CHECK(policy_errors(replaced(kPolicy, "{devicesPerGPU: 7,", "{devicesPerGpu: 7,")) ==
        Errors{"spec.classes.a100.deviceClasses[mig-1g.10gb.gpu.nvidia.com].devicesPerGpu: "
               "unknown field \"devicesPerGpu\" (did you mean \"devicesPerGPU\"?) (p.yaml:11:38)"});
  CHECK(policy_errors(replaced(kPolicy, "adminAccess: true", "adminAccess: yes")) ==
        Errors{"spec.tenants[0].dra.adminAccess: must be true or false, got \"yes\" "
               "(p.yaml:18:26)"});
}

TEST_CASE("policy: the shipped default policy maps NVIDIA's DRA DeviceClasses", "[policy][dra]") {
  CompiledLoadResult loaded = load_compiled_policy("");
  REQUIRE(loaded.policy);
  CHECK(loaded.policy->find_device_class("gpu.nvidia.com").gpu_class->name == "gpu");
  CHECK(loaded.policy->find_device_class("mig.nvidia.com").gpu_class->name == "gpu");
}

}  // namespace
}  // namespace dra_policy_test
}  // namespace gpuadmit
