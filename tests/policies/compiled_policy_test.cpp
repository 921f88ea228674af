// CompiledPolicy: tenant first-match order, exemptions, lookups, GPU resource names, actions.

#include <catch2/catch.hpp>

#include <string>

#include "policies/compiled_policy.h"
#include "policies/loader.h"

namespace gpuadmit {
namespace compiled_policy_test {
namespace {

PolicyPtr compile_yaml(const std::string& yaml) {
  PolicyLoadResult r = load_policy(yaml, "test.yaml");
  std::string errors;
  for (const PolicyError& e : r.errors) errors += e.to_string() + "\n";
  INFO(errors);
  REQUIRE(r.ok());
  return CompiledPolicy::compile(std::move(*r.policy));
}

const char* const kFleet = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: fleet}
spec:
  gpuResources: [amd.com/gpu]
  classes:
    a100:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
        kubernetes.io/arch: [amd64]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
        - {key: pool.example.com/a100, value: "true", effect: NoSchedule}
    t4:
      nodeSelector: {cloud.example.com/pool: [t4-a, t4-b]}
      taints: [{key: sku, value: gpu, effect: NoSchedule}]
  priorityClasses:
    gpu-batch: {value: 1000, preemptionPolicy: Never}
    cluster-default: {value: 0, globalDefault: true}
  tenants:
    - name: research-exact
      namespaces: [research]
    - name: ml
      namespaces: ["ml-.*", "research.*"]
    - name: web
      namespaces: ["web-(a|b)", "(?i)shop"]
    - name: rest
      namespaces: [".*"]
  enforcement:
    exempt: {namespaces: [kube-system, "gpu-.*"]}
)YAML";

TEST_CASE("policy: tenant_for returns the first matching tenant", "[policy][compiled]") {
  PolicyPtr p = compile_yaml(kFleet);
  struct Case {
    const char* ns;
    const char* tenant;
  };
  const Case cases[] = {
      {"research", "research-exact"},  // listed first, although "research.*" also matches
      {"research-2", "ml"},
      {"ml-vision", "ml"},
      {"web-a", "web"},
      {"web-c", "rest"},
      {"SHOP", "web"},         // flags inside one pattern apply to that pattern only
      {"xml-vision", "rest"},  // full match, not a substring search
      {"ml-", "ml"},
      {"", "rest"},
  };
  for (const Case& c : cases) {
    INFO(c.ns);
    const Tenant* t = p->tenant_for(c.ns);
    REQUIRE(t != nullptr);
    CHECK(t->name == c.tenant);
  }
}

TEST_CASE("policy: tenant_for returns null when no tenant matches", "[policy][compiled]") {
  Policy policy;
  Tenant t;
  t.name = "only";
  t.namespaces = {"team-[0-9]+", "lit"};
  policy.tenants.push_back(t);
  Tenant bad;
  bad.name = "bad";
  bad.namespaces = {"(", "ok"};  // hand-built: the broken pattern never matches, the rest does
  policy.tenants.push_back(bad);
  PolicyPtr p = CompiledPolicy::compile(policy);
  CHECK(p->tenant_for("team-12")->name == "only");
  CHECK(p->tenant_for("lit")->name == "only");
  CHECK(p->tenant_for("team-x") == nullptr);
  CHECK(p->tenant_for("(") == nullptr);
  CHECK(p->tenant_for("ok")->name == "bad");
  CHECK_FALSE(p->is_exempt("kube-system"));
}

TEST_CASE("policy: tenant_for with thousands of tenants agrees with trying them in order",
          "[policy][compiled]") {
  // Literals and regexes interleaved, overlapping across tenants: matched at once (one map, one
  // RE2::Set), the answer must still be the first tenant in policy order.
  Policy policy;
  for (int i = 0; i < 2000; ++i) {
    Tenant t;
    t.name = "t" + std::to_string(i);
    t.namespaces = {"team-" + std::to_string(i), "team-" + std::to_string(i) + "-.*"};
    if (i % 100 == 50) t.namespaces.push_back("team-" + std::to_string(i + 1) + ".*");
    policy.tenants.push_back(t);
  }
  Tenant rest;
  rest.name = "rest";
  rest.namespaces = {".*"};
  policy.tenants.push_back(rest);
  PolicyPtr p = CompiledPolicy::compile(policy);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"team-7", "t7"},         {"team-7-x", "t7"},     {"team-51", "t50"},  // t50's regex first
      {"team-51-a", "t50"},     {"team-1999", "t1999"}, {"team-2000", "rest"},
      {"team-150-gpu", "t150"}, {"other", "rest"},
  };
  for (const auto& [ns, tenant] : cases) {
    INFO(ns);
    REQUIRE(p->tenant_for(ns) != nullptr);
    CHECK(p->tenant_for(ns)->name == tenant);
  }
}

TEST_CASE("policy: exempt namespaces are full-match patterns", "[policy][compiled]") {
  PolicyPtr p = compile_yaml(kFleet);
  CHECK(p->is_exempt("kube-system"));
  CHECK(p->is_exempt("gpu-operator"));
  CHECK_FALSE(p->is_exempt("kube-system-2"));
  CHECK_FALSE(p->is_exempt("my-gpu-operator"));
  CHECK_FALSE(p->is_exempt("default"));
}

TEST_CASE("policy: class and priority class lookups", "[policy][compiled]") {
  PolicyPtr p = compile_yaml(kFleet);
  REQUIRE(p->find_class("a100") != nullptr);
  CHECK(p->find_class("a100")->taints.size() == 2);
  CHECK(p->find_class("t4")->name == "t4");
  CHECK(p->find_class("h100") == nullptr);
  CHECK(p->find_class("") == nullptr);
  REQUIRE(p->find_priority_class("gpu-batch") != nullptr);
  CHECK(p->find_priority_class("gpu-batch")->value == 1000);
  CHECK(p->find_priority_class("gpu-batch")->preemption_policy == "Never");
  CHECK(p->find_priority_class("nope") == nullptr);
  REQUIRE(p->global_default_priority_class() != nullptr);
  CHECK(p->global_default_priority_class()->name == "cluster-default");
  CHECK(compile_yaml(R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: x}
)YAML")
            ->global_default_priority_class() == nullptr);
}

TEST_CASE("policy: GPU resource names", "[policy][compiled]") {
  PolicyPtr p = compile_yaml(kFleet);
  struct Case {
    const char* resource;
    bool gpu;
  };
  const Case cases[] = {
      {"nvidia.com/gpu", true},
      {"nvidia.com/gpu.shared", true},
      {"nvidia.com/mig-1g.10gb", true},
      {"nvidia.com/mig-1g.10gb.me", true},
      {"amd.com/gpu", true},
      {"nvidia.com/mig-", false},
      {"nvidia.com/gpus", false},
      {"cpu", false},
      {"memory", false},
      {"nvidia.com/gpu.shared.x", false},
      {"example.com/nvidia.com/gpu", false},
  };
  for (const Case& c : cases) {
    INFO(c.resource);
    CHECK(p->is_gpu_resource(c.resource) == c.gpu);
  }
  // The loader refuses a name without a domain; a policy built in code may still hold one, and
  // names without '/' are then looked up, not ruled out.
  Policy model;
  model.gpu_resources = {"gpu"};
  const auto unqualified = CompiledPolicy::compile(model);
  CHECK(unqualified->is_gpu_resource("gpu"));
  CHECK(unqualified->is_gpu_resource("nvidia.com/gpu"));
  CHECK_FALSE(unqualified->is_gpu_resource("cpu"));
}

TEST_CASE("policy: GPU pool taint and label keys", "[policy][compiled]") {
  PolicyPtr p = compile_yaml(kFleet);
  CHECK(p->is_gpu_pool_taint_key("nvidia.com/gpu"));
  CHECK(p->is_gpu_pool_taint_key("pool.example.com/a100"));
  CHECK(p->is_gpu_pool_taint_key("sku"));
  CHECK_FALSE(p->is_gpu_pool_taint_key("node.kubernetes.io/not-ready"));
  CHECK(p->is_gpu_pool_label_key("nvidia.com/gpu.product"));
  CHECK(p->is_gpu_pool_label_key("cloud.example.com/pool"));
  // Every node has an architecture: selecting it says nothing about GPU pools.
  CHECK_FALSE(p->is_gpu_pool_label_key("kubernetes.io/arch"));
  CHECK_FALSE(p->is_gpu_pool_label_key("team"));
}

TEST_CASE("policy: action_for", "[policy][compiled]") {
  auto with_enforcement = [](const std::string& enforcement) {
    return compile_yaml(
        "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata: {name: x}\n"
        "spec:\n  enforcement:\n" +
        enforcement);
  };
  struct Case {
    const char* name;
    std::string enforcement;
    const char* rule;
    Action default_action;
    Action expected;
  };
  const std::vector<Case> cases = {
      {"default action", "    fragmentation: warn\n", "GPU006", Action::kDeny, Action::kDeny},
      {"default warn", "    fragmentation: warn\n", "GPU016", Action::kWarn, Action::kWarn},
      {"fix denies a real mismatch", "    requestsEqualLimits: fix\n", "GPU001", Action::kDeny,
       Action::kDeny},
      {"requestsEqualLimits warn", "    requestsEqualLimits: warn\n", "GPU001", Action::kDeny,
       Action::kWarn},
      {"requestsEqualLimits deny", "    requestsEqualLimits: deny\n", "GPU001", Action::kWarn,
       Action::kDeny},
      {"strip denies what remains", "    nonGpuOnGpuPool: strip\n", "GPU009", Action::kDeny,
       Action::kDeny},
      {"nonGpuOnGpuPool off", "    nonGpuOnGpuPool: off\n", "GPU009", Action::kDeny, Action::kOff},
      {"nonGpuOnGpuPool warn", "    nonGpuOnGpuPool: warn\n", "GPU009", Action::kDeny,
       Action::kWarn},
      {"fragmentation deny", "    fragmentation: deny\n", "GPU014", Action::kWarn, Action::kDeny},
      {"fragmentation default is warn", "    rules: {GPU006: warn}\n", "GPU014", Action::kDeny,
       Action::kWarn},
      {"rules override the default", "    rules: {GPU006: warn}\n", "GPU006", Action::kDeny,
       Action::kWarn},
      {"rules override the specific field", "    fragmentation: deny\n    rules: {GPU014: off}\n",
       "GPU014", Action::kWarn, Action::kOff},
      {"rules override requestsEqualLimits",
       "    requestsEqualLimits: fix\n    rules: {GPU001: warn}\n", "GPU001", Action::kDeny,
       Action::kWarn},
      {"rules of other ids do not apply", "    rules: {GPU003: off}\n", "GPU004", Action::kDeny,
       Action::kDeny},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      CHECK(with_enforcement(c.enforcement)->action_for(c.rule, c.default_action) == c.expected);
    }
  }
}

TEST_CASE("policy: action names", "[policy][model]") {
  CHECK(action_name(Action::kFix) == "fix");
  CHECK(action_name(Action::kDeny) == "deny");
  CHECK(action_name(Action::kWarn) == "warn");
  CHECK(action_name(Action::kOff) == "off");
  CHECK(action_name(Action::kStrip) == "strip");
}

}  // namespace
}  // namespace compiled_policy_test
}  // namespace gpuadmit
