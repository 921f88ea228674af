#pragma once
// Shared test fixtures: policies from inline YAML, and a pod spec ready for a mutator or rule.
//
//   auto policy = policy_from_yaml(R"YAML(... GPUPolicy ...)YAML");
//   PodFixture pod(policy, R"JSON({"apiVersion":"v1","kind":"Pod",...})JSON", "ml-team");
//   PodWriter writer(pod.view(), pod.object);
//   mutator.mutate(writer, pod.ctx);  REQUIRE(pod.object == expected);

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/context.h"
#include "engine/json.h"
#include "engine/pod_view.h"
#include "engine/resources.h"
#include "engine/workload.h"
#include "policies/loader.h"

namespace gpuadmit::testing {

// A bare policy (no classes, no tenants) whose GPU resources are amd.com/gpu, for engine tests
// that need a GPU resource name other than NVIDIA's.
inline PolicyPtr amd_gpu_policy() {
  Policy p;
  p.name = "test";
  p.gpu_resources = {"amd.com/gpu"};
  return CompiledPolicy::compile(std::move(p));
}

// Loads and compiles; fails the test with every error when the YAML is not a valid policy.
inline PolicyPtr policy_from_yaml(std::string_view yaml) {
  PolicyLoadResult loaded = load_policy(yaml, "test-policy.yaml");
  std::string errors;
  for (const PolicyError& e : loaded.errors) errors += e.to_string() + "\n";
  INFO(errors);
  REQUIRE(loaded.ok());
  return CompiledPolicy::compile(std::move(*loaded.policy));
}

// One pod spec of a workload (by default the first), with its context resolved as the pipeline
// resolves it before mutators and rules run.
class PodFixture {
 public:
  PodFixture(PolicyPtr policy, std::string_view object_json, std::string ns = "default",
             size_t pod_spec_index = 0)
      : policy_(std::move(policy)), object(Json::parse(object_json)) {
    auto locations = find_pod_specs(object, *policy_);
    REQUIRE(pod_spec_index < locations.size());
    location_ = locations[pod_spec_index];
    request.policy = policy_.get();
    request.ns = std::move(ns);
    request.kind = std::string(string_member(object, "kind"));
    request.api_version = std::string(string_member(object, "apiVersion"));
    auto made = PodView::make(object, location_);
    if (!made) FAIL("pod spec rejected: " << made.error());
    view_.emplace(*std::move(made));
    ctx.request = &request;
    ctx.policy = policy_.get();
    ctx.tenant = policy_->tenant_for(request.ns);
    ctx.gpu_pod = is_gpu_pod(*view_, *policy_);
    for (size_t i = 0; i < pod_spec_index; ++i) {  // as the pipeline tells (PodContext)
      auto earlier = PodView::make(object, locations[i]);
      ctx.earlier_gpu_pod_spec =
          ctx.earlier_gpu_pod_spec || (earlier && is_gpu_pod(*earlier, *policy_));
    }
    resolve_pod_context(*view_, ctx);
  }
  PodFixture(const PodFixture&) = delete;
  PodFixture& operator=(const PodFixture&) = delete;

  PodView& view() { return *view_; }
  const CompiledPolicy& policy() const { return *policy_; }

 private:
  PolicyPtr policy_;

 public:
  Json object;
  RequestContext request;
  PodContext ctx;

 private:
  PodSpecLocation location_;
  std::optional<PodView> view_;
};

}  // namespace gpuadmit::testing
