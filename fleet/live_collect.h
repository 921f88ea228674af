#pragma once
// Turns a cluster's objects into `gpuadmit fleet --live`'s input (docs/fleet.md, "Live mode"):
// Nodes with their GPU allocatable, GFD labels, taints and readiness; GPU Pods that are not
// terminal with their requests counted as the scheduler counts them (the webhook's
// effective_pod_gpu_requests); DRA ResourceSlices and allocated ResourceClaims. Other kinds are
// ignored, v1 Lists and typed lists (NodeList, PodList) expanded.
//
//   LiveCollector collector(policy);
//   collector.add(std::move(object), "export.json", 1);
//   LiveInput input = collector.finish();    // errors(): malformed pods, with file:line

#include <memory>
#include <string>
#include <vector>

#include "engine/json.h"
#include "engine/pod_view.h"
#include "fleet/live_model.h"
#include "fleet/read.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

class LiveCollector {
 public:
  explicit LiveCollector(const CompiledPolicy& policy);
  ~LiveCollector();
  LiveCollector(const LiveCollector&) = delete;
  LiveCollector& operator=(const LiveCollector&) = delete;

  void add(Json object, const std::string& file, int line);
  // Whether an object read without its metadata and conditions needs them: anything but a Pod,
  // and a Pod that names a GPU resource or a DRA claim, or is malformed (to be reported). A CPU
  // pod is counted without them (JsonObjectStream::set_interest).
  bool wants(const Json& object) const;
  // Objects that cannot be read as what their kind says (a Pod whose containers are not a list).
  const std::vector<InputError>& errors() const { return errors_; }
  LiveInput finish();

 private:
  struct Index;
  uint32_t file_index(const std::string& file);
  void add_object(Json& object, uint32_t file, int line);
  void add_node(const Json& node, uint32_t file, int line);
  void add_pod(const Json& pod, uint32_t file, int line);
  void read_pending(const PodView& view, const Json& spec, const Json* status, LivePod& pod) const;
  void add_slice(const Json& slice);
  void add_claim(const Json& claim);

  const CompiledPolicy& policy_;
  LiveInput input_;
  std::vector<InputError> errors_;
  std::unique_ptr<Index> index_;
};

}  // namespace gpuadmit::fleet
