#pragma once
// The fleet report (docs/fleet.md): per class totals after packing, unplaceable pods with their
// reason, per tenant requests against quota, the workloads that strand most GPUs with the pod
// size that would free most; as a terminal table or JSON.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/json.h"
#include "fleet/model.h"
#include "fleet/packing.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::fleet {

struct ClassReport {
  std::string name;
  ClassPacking packing;
  int64_t total() const { return packing.shape.nodes * packing.shape.units_per_node(); }
  double utilisation() const;  // placed / total, 0 when total is 0
};

// Pods that cannot run, one entry per group and reason.
struct UnplaceableEntry {
  size_t group = 0;
  int64_t pods = 0;
  Unplaceable reason = Unplaceable::kNone;
};

struct TenantReport {
  std::string name;
  int64_t requested_gpus = 0;  // effective GPU units × pods, every class (quota's sum)
  std::optional<int64_t> quota;
};

// A workload whose pods strand units, and the pod size that would free most of them.
struct Fragmenter {
  size_t group = 0;
  std::string class_name;
  int64_t stranded = 0;  // stranded units blamed on it (nodes where it holds most units)
  // The best other pod size for the same units in total (0 when none frees any): as
  // `suggested_pods` pods of `suggested_units`, the class strands `freed` fewer units.
  int64_t suggested_units = 0;
  int64_t suggested_pods = 0;
  int64_t freed = 0;
};

struct FleetReport {
  std::vector<ClassReport> classes;  // policy order
  std::vector<UnplaceableEntry> unplaceable;
  std::vector<TenantReport> tenants;    // policy order; tenants with no GPU pods included
  std::vector<Fragmenter> fragmenters;  // most stranded first, at most 5
  int64_t unplaceable_pods = 0;
};

FleetReport build_report(const FleetInput& input, const CompiledPolicy& policy);

void write_text(const FleetReport& report, const FleetInput& input, std::ostream& out);
Json to_json(const FleetReport& report, const FleetInput& input);

}  // namespace gpuadmit::fleet
