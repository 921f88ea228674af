#pragma once
// The fleet report's input (docs/fleet.md): the GPU pods of every workload, grouped as one pod
// spec × its replicas, each resolved to a class exactly as the webhook would.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/saturating.h"  // saturating_add, saturating_mul: counts from manifests

namespace gpuadmit::fleet {

// Why pods cannot be placed; kNone for pods that go to packing.
enum class Unplaceable { kNone, kNoClass, kClassNotAllowed, kLargerThanNode, kClassFull };
// "no class", "class not allowed for the namespace", "larger than a node", "class full".
std::string_view reason_text(Unplaceable reason);

// One object of the input that has GPU pods.
struct Workload {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  uint32_t file = 0;   // index in FleetInput::files
  int line = 0;        // the document's first content line
  std::string tenant;  // "" when the namespace matches no tenant
  // "ns/name (Kind)" for messages.
  std::string label() const;
};

// Identical pods: one pod spec of a workload × the pods it stands for (SPEC §6 replicas).
struct PodGroup {
  size_t workload = 0;                       // index in FleetInput::workloads
  std::string path;                          // the pod spec, "spec.template.spec"
  int64_t pods = 0;                          // replicas
  std::string class_name;                    // resolved class; "" when none
  Unplaceable blocked = Unplaceable::kNone;  // kNoClass / kClassNotAllowed, decided at collection
  int64_t gpus = 0;  // effective GPU units per pod, every GPU resource added (as for quota)
  // Per pod in the class's unit: whole GPUs, time-slice replicas, or MIG compute slices.
  int64_t units = 0;
  // MIG classes: the instances per pod by profile ("1g.10gb", 2); whole GPUs asked for on a
  // MIG class are instances of the class's largest profile.
  std::vector<std::pair<std::string, int64_t>> mig;
};

struct FleetInput {
  std::vector<std::string> files;  // as given on the command line, "<stdin>" for standard input
  std::vector<Workload> workloads;
  std::vector<PodGroup> groups;
};

}  // namespace gpuadmit::fleet
