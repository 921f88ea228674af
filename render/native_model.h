#pragma once
// The CEL model of a workload that every native policy shares (docs/native.md, "How the
// policies read a workload"): the `variables` that find an object's pod specs (the engine's
// workload table, engine/workload.h) and read each one as the engine's PodView and PodContext
// do — containers and their GPU resources, the workload settings, whether it is a GPU pod, its
// class. Rules and mutations (render/native_rules.cc, native_mutations.cc) are written against
// these variables.
//
//   variables.ctx: one entry per pod spec (template), in the engine's order:
//     p     JSON pointer of the pod spec's parent: "" for a Pod, "/spec/template", ...
//           (MutatingAdmissionPolicy only; "" in validating policies)
//     tm    true for a template (every pod spec but a Pod's own)
//     spec  the pod spec;  meta  its metadata ({} when absent); hm: the metadata is an object
//     cs    containers: [{k: 'init'|'app'|'eph', r: restartable, o: position among init
//           containers, c: the container, g: GPU resources}], Kubernetes order
//           g: [{n: name, r: request or null, l: limit or null, u: units of the effective value
//           (the request when written, else the limit; whole units rounded up, 0 when negative
//           or unparsable), cu: ContainerGpuResource::units() (the parsed request, else the
//           parsed limit), pe: the effective quantity is positive, pa: the request or the
//           limit is positive}]
//     sc    [the gpuadmit.io/class setting] or []; mig, wl: the MIG profile and workload
//           settings ('' when unset)
//     gpu   a GPU pod (SPEC §2; claims unresolved, as the webhook without --dra-lookup)
//     cls   the resolved class name ('' for none; may name no class: GPU004)

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

// Which CEL the generated expressions may use. Validating policies must compile on Kubernetes
// 1.30 (its new-expression environment is 1.29's: no two-variable comprehensions); mutating
// policies exist from 1.34 on (environment 1.33: two-variable comprehensions, no ext.Lists).
enum class CelLevel { kValidating, kMutating };

// A workload kind the native policies read, with its pod-spec patterns (SPEC §6 syntax).
struct NativeKind {
  std::string api_version;  // exact version for a policy workload; "" for a built-in kind
  std::string group;
  std::string kind;
  std::vector<std::string> patterns;
};

// The kinds the native policies cover (built-in kinds first as the engine's table lists them,
// then the policy's `workloads`), and the policy workloads they cannot read (patterns with more
// than one wildcard: CEL has no flatten before 1.34), with why.
struct NativeKinds {
  std::vector<NativeKind> covered;
  std::vector<std::pair<NativeKind, std::string>> not_covered;
};
NativeKinds native_kinds(const CompiledPolicy& policy);

// The `variables` ({name, expression}) of every policy, in dependency order: av, kd, gk, top,
// jo, otpls, tpls, then the namespace's tenant (render/native_tenants.h: nsm, tn, t), then ctx.
// jo: the object is judged, never mutated (a non-Pod object with a controller, or an UPDATE of
// a kind whose templates are immutable); tpls holds, on UPDATE, only the templates that changed
// from oldObject.
Json model_variables(const CompiledPolicy& policy, CelLevel level);

// Expressions over the model, for the rules and mutations.
namespace cel {

// A GPU resource name (CompiledPolicy::is_gpu_resource) held by the CEL string `name`.
std::string is_gpu_resource(const CompiledPolicy& policy, std::string_view name);
// The implicit extended resources of the DeviceClasses the policy maps
// (`deviceclass.resource.kubernetes.io/<DeviceClass>`, CompiledPolicy::implicit_device_class),
// each with its class's name, in policy order.
std::vector<std::pair<std::string, std::string>> implicit_device_class_resources(
    const CompiledPolicy& policy);
// A raw quantity value (string or number) that parses; its quantity.
std::string valid_quantity(std::string_view value);
std::string quantity_of(std::string_view value);
// True when a toleration (a CEL value) tolerates the taint (Toleration.ToleratesTaint,
// engine/scheduling.h `tolerates`); tolerates_any: some class's taint.
std::string tolerates(std::string_view toleration, const Taint& taint);
std::string tolerates_any(const CompiledPolicy& policy, std::string_view toleration);
// engine/dra.h targets_gpu_pool over a pod spec: a class taint tolerated, or a class label
// selected by nodeSelector or a required In/Exists expression.
std::string targets_gpu_pool(const CompiledPolicy& policy, std::string_view spec);
// A nodeSelector entry (key, string value) or a required expression selecting a GPU pool.
std::string selects_pool_value(const CompiledPolicy& policy, std::string_view key,
                               std::string_view value);
std::string expression_selects_pool(const CompiledPolicy& policy, std::string_view expression);
// `key` (a CEL string) is a label some class's nodeSelector names.
std::string is_pool_label(const CompiledPolicy& policy, std::string_view key);
// `cls` names a class of the policy.
std::string known_class(const CompiledPolicy& policy, std::string_view cls);
// A CEL predicate over a resource name expression.
using NamePredicate = std::function<std::string(std::string_view name)>;
// The pod's effective GPU units (k8s.io/component-helpers resource.PodRequests, engine/resources.h
// pod_requests) of context entry `c`, over the resources `counts` accepts (all when empty).
std::string pod_gpu_total(const CompiledPolicy& policy, std::string_view c,
                          const NamePredicate& counts = nullptr);
// Units a container asks for (GPU005's per-container count).
std::string container_units(std::string_view container);
// Where Kueue reads the object's queue (engine/kueue.h kueue_queue_site): 'cron' (a CronJob's
// jobTemplate metadata), 'top' (the object's metadata), 'tpl' (each pod template's metadata:
// variables.ctx[*].meta) or '' (none: the object's controller is a kind gpuadmit knows and sent
// it — request.userInfo.username is that kind's controller — or the kind is not one); the
// metadata of 'cron' and 'top'; the queue it names there ('' for none: kueue_queue_name); the
// queue a metadata map names.
std::string kueue_queue_place(const CompiledPolicy& policy);
// The object names a controller Kueue integrates (or a ReplicaSet) that did not send it
// (engine/kueue.h kueue_unbelieved_owner): Kueue leaves it alone, whatever queue it names.
std::string kueue_unbelieved_owner(const CompiledPolicy& policy);
// An UPDATE of a controller's child (engine/kueue.h child_update), as an int: 2 a controller
// gained or the child detached, 0 not a child (or its controller's own UPDATE), else sent by
// someone else: 3 its spec changed, 1 not.
std::string child_update(const CompiledPolicy& policy);
// `old_object`'s controller ownerReference is not `object`'s (engine/controllers.h
// controller_released); "object", "oldObject" or the other way round.
std::string controller_released(std::string_view object, std::string_view old_object);
std::string kueue_queue_metadata(std::string_view place);
std::string kueue_queue_name(std::string_view place);
std::string queue_named_in(std::string_view metadata);
// UPDATE: the queue label changed where Kueue reads it for the whole workload ('top', 'cron'),
// not for a Pod (engine/pipeline.cc queue_changed).
std::string queue_changed(const CompiledPolicy& policy);
// UPDATE: ctx entry `c` (with `qp` bound to kueue_queue_place) was already a GPU workload naming
// no queue in oldObject, and does not grow (rules/queue_required.cc admitted_without_queue): the
// old template of the same id had GPUs and no fewer per pod, and no queue — the template's own
// for 'tpl', else the old site's.
std::string queue_grandfathered(const CompiledPolicy& policy, std::string_view c);
// The metadata (a CEL map) names a controller (an ownerReferences entry with controller: true).
std::string has_controller(std::string_view metadata);
// A node agent (engine/controllers.h runs_on_every_node): a DaemonSet, or a Pod whose controller
// is one, in a namespace of the policy's nodeAgents.namespaces (GPU009, GPU024, GPU026, strip,
// visibility); "false" when the policy names none.
std::string runs_on_every_node(const CompiledPolicy& policy);
// Kubernetes' strconv.ParseInt(s, 10, 64) succeeds on the CEL string `s`.
std::string parses_as_int64(std::string_view s);

}  // namespace cel

}  // namespace gpuadmit::render::native
