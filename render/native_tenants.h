#pragma once
// The tenants as data (docs/native.md, "Tenants as data"): the native policies are one set for
// every namespace, and what differs between tenants is a CEL literal the expressions read — a
// list of one record per tenant, and the namespace's place in it. Literals, not a parameter
// resource: nothing can be missing at bootstrap, no tenant can write them, and KEP-5793's
// static manifests (no paramKind) can hold them. Kubernetes compiles CEL with cel.OptOptimize,
// which folds constant literals once at compile time (k8s.io/apiserver pkg/cel/environment/base.go:
// cel.EvalOptions(cel.OptOptimize, ...)).
//
//   variables.tn  the namespace's tenant (tenant_variables): its index in spec.tenants, or the
//                 number of tenants for a namespace of no tenant
//   variables.t   its record (tenant_records), {} for a namespace of no tenant:
//     dc  defaultClass                      ac  allowedClasses (absent: any class)
//     mc  maxGPUsPerContainer  mp  maxGPUsPerPod  q  quota.gpus
//     pa  priority.allowed, with the policy's globalDefault class
//     aa  dra.allocationModeAll  ad  dra.adminAccess  qr  queue.require
//     au  enforcement.mode audit  x  {rule id: 'd'|'w'|'o'} where the tenant's action differs
//         from the policy's (enforcement.rules)
//     nm  enforcement.mutate false  df  defaults {r: request, l: limit, g: perGPU} without GPU
//         resources  pd, pw  priority.default and byWorkload  qn  queue.name
//   Each member is written only when set, and read behind `'<key>' in variables.t`.
//
//   model_variables(...) holds tn and t; rules and mutations read them.

#include <set>
#include <string>
#include <string_view>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

// Which members a policy's records hold: validating policies read the rule values, mutating
// policies the mutation values (both dc, for the model's class).
enum class TenantFields { kValidating, kMutating };

// The variables nsm (the literal names' map, when a tenant lists one), tn (the index in
// spec.tenants of the tenant `request.namespace` belongs to — the first that matches, as
// CompiledPolicy::tenant_for — or the number of tenants for none: one map lookup for a literal
// name, else the pattern tenants in order) and t (its record).
Json tenant_variables(const CompiledPolicy& policy, TenantFields fields);

// Which members of the records a policy keeps: those its expressions read (members_read), and
// with audit_only only the records of tenants in audit mode (the audit policy applies nowhere
// else). Trimmed records keep the objects small: at 2,000 tenants the records are most of them.
struct TenantRecordFilter {
  std::set<std::string> keys;
  bool audit_only = false;
};
TenantRecordFilter members_read(const std::string& expressions);

// CEL list: one record per tenant in spec.tenants order, then {} (no tenant); `filter` (may be
// null) trims them.
std::string tenant_records(const CompiledPolicy& policy, TenantFields fields,
                           const TenantRecordFilter* filter);

// CEL bool: the namespace belongs to no tenant.
std::string no_tenant(const CompiledPolicy& policy);

// The one-letter code of an action in the records' `x`: 'o' off, 'w' warn, 'd' otherwise.
char action_code(Action action);

}  // namespace gpuadmit::render::native
