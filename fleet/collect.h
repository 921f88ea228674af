#pragma once
// Turns manifests into the fleet report's pod groups (docs/fleet.md, "Input"): every workload
// through the webhook's pipeline (the same mutations), its effective GPU requests read from the
// mutated pod, replicas from SPEC §6. Objects whose controller is in the input too (a Pod of a
// ReplicaSet of a Deployment) are dropped at finish(), so nothing is counted twice.
//
//   Collector collector(policy, pipeline, "default");
//   collector.add(std::move(object), "pods.yaml", 12);   // a v1 List is expanded
//   FleetInput input = collector.finish();

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/json.h"
#include "engine/pipeline.h"
#include "fleet/model.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

// kubectl's v1 List and typed lists (PodList, NodeList, ...): their items are the objects.
bool is_list(const Json& object);

// A Pod that finished (phase Succeeded or Failed) holds nothing: the scheduler's informer lists
// only other pods (pkg/scheduler/scheduler.go newPodInformer), and quota counts only those
// (pkg/quota/v1/evaluator/core/pods.go QuotaV1Pod).
bool terminated_pod(const Json& object);

class Collector {
 public:
  // `memoize`: evaluate each distinct (namespace, kind, pod templates, settings) once; exports
  // repeat templates (tests/fleet check that both ways give the same groups).
  Collector(const CompiledPolicy& policy, const Pipeline& pipeline, std::string default_namespace,
            bool memoize = true);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // One document: a workload, a v1 List (its items), or anything else (ignored).
  void add(Json object, const std::string& file, int line);
  FleetInput finish();
  // Room for the objects of `bytes` more input (an estimate: a manifest is rarely under 512
  // bytes), so that growing to 100,000 workloads does not move them again and again.
  void expect_bytes(size_t bytes);

  size_t evaluations() const { return evaluations_; }

 private:
  struct Outcome;  // what the pipeline made of one object's pod specs (memoized)
  struct Identity;
  void add_object(Json& object, const std::string& file, int line);
  std::shared_ptr<const Outcome> evaluate(Json& object, const std::string& ns);

  const CompiledPolicy& policy_;
  const Pipeline& pipeline_;
  std::string default_namespace_;
  bool memoize_;
  size_t evaluations_ = 0;
  std::unordered_map<std::string, std::shared_ptr<const Outcome>> memo_;
  FleetInput input_;
  std::vector<Identity> identities_;  // per workload
  std::vector<std::string> present_;  // identity keys of every object of the input
};

}  // namespace gpuadmit::fleet
