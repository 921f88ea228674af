#pragma once
// The tenants as data (docs/native.md, "Tenants as data"): the native policies are one set for
// every namespace, and what differs between tenants is CEL literals the expressions read.
// Literals, not a parameter resource: nothing can be missing at bootstrap, no tenant can write
// them, and KEP-5793's static manifests (no paramKind) can hold them. Kubernetes compiles CEL
// with cel.OptOptimize (k8s.io/apiserver pkg/cel/environment/base.go), which folds constant
// literals once at compile time.
//
// The rules and mutations read the namespace's tenant as a record, `variables.t`:
//   'ac' in variables.t, variables.t.ac
// and a policy holds one literal map per member it reads instead (columnar), from tenant index
// to value, with only the tenants that set it:
//   variables.tn in variables.t_ac, variables.t_ac[variables.tn]
// — smaller than records (Kubernetes' CEL takes only homogeneous aggregate literals,
// cel.HomogeneousAggregateLiterals in base.go: a record of mixed members would need dyn() on
// each), and a policy carries only the members it reads.
//
//   variables.tn  the namespace's tenant: its index in spec.tenants, or the number of tenants for
//                 a namespace of no tenant (tenant_variables)
//   members (TenantFields: the validating ones, or the mutating ones; both dc):
//     dc  defaultClass                      ac  allowedClasses (absent: any class)
//     mc  maxGPUsPerContainer  mp  maxGPUsPerPod  q  quota.gpus
//     pa  priority.allowed, with the policy's globalDefault class
//     aa  dra.allocationModeAll  ad  dra.adminAccess  qr  queue.require
//     au  enforcement.mode audit  x  {rule id: 'd'|'w'|'o'}: the tenant's enforcement.rules
//     nm  enforcement.mutate false  df  defaults {r: request, l: limit, g: perGPU} without GPU
//         resources  pd, pw  priority.default and byWorkload  qn  queue.name
//   A member is written only when set, and read behind its presence test.

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
// name, else the pattern tenants in order) and t, a stand-in the policy replaces with its
// columns (columnar, tenant_columns).
Json tenant_variables(const CompiledPolicy& policy);

// `expression` with its record reads ('k' in variables.t, variables.t.k) written as column
// reads (variables.tn in variables.t_k, variables.t_k[variables.tn]).
std::string columnar(const std::string& expression);

// Which columns a policy holds: those its expressions read (members_read over them, columnar),
// and with audit_only only the entries of tenants in audit mode (the audit policy applies
// nowhere else).
struct TenantRecordFilter {
  std::set<std::string> keys;
  bool audit_only = false;
};
TenantRecordFilter members_read(const std::string& expressions);

// The variables t_<key> for the filter's keys: each a map literal {tenant index: value}, or,
// where that is shorter, t_<key>_v the list of its distinct values and t_<key> {tenant index:
// position in it}; those keys go into `indexed`, whose reads indexed_reads rewrites.
Json tenant_columns(const CompiledPolicy& policy, TenantFields fields,
                    const TenantRecordFilter& filter, std::set<std::string>& indexed);

// `expression` with each read of an indexed column (variables.t_k[variables.tn]) taken through
// its values (variables.t_k_v[variables.t_k[variables.tn]]); presence tests are unchanged.
std::string indexed_reads(const std::string& expression, const std::set<std::string>& indexed);

// CEL bool: the namespace belongs to no tenant.
std::string no_tenant(const CompiledPolicy& policy);

// The one-letter code of an action in the member `x`: 'o' off, 'w' warn, 'd' otherwise.
char action_code(Action action);

}  // namespace gpuadmit::render::native
