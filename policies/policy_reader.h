#pragma once
// The policy loader's reader (internal to policies/): a GPUPolicy's YAML walked field by field
// into the model, every error recorded with its field path and file:line:column. Validation in
// two layers, as Envoy's config: the schema walk (types, enums, unknown fields), then cross-field
// checks (class and priority class references, MIG profiles per product, DeviceClasses).
//
// One class, its member functions split by section of the schema:
//   policies/loader.cc                   the document, metadata, spec; cross-field checks
//   policies/loader_fields.cc            errors, the node budget and the typed field readers
//   policies/loader_classes.cc           spec.classes (and spec.nvidiaRuntimeClasses)
//   policies/loader_priority_classes.cc  spec.priorityClasses
//   policies/loader_tenants.cc           spec.tenants
//   policies/loader_enforcement.cc       spec.enforcement and a tenant's enforcement
//   policies/loader_workloads.cc         spec.workloads and spec.controllers

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policies/loader.h"
#include "yaml/yaml_cpp_scan.h"

namespace gpuadmit::policy_reader {

inline constexpr std::string_view kApiVersion = "gpuadmit.io/v1alpha1";
inline constexpr std::string_view kKind = "GPUPolicy";
// The metadata annotation that orders versions of a policy (Policy::generation).
inline constexpr std::string_view kGenerationAnnotation = "gpuadmit.io/generation";
inline constexpr std::string_view kProductLabel = "nvidia.com/gpu.product";
// A real policy is a few hundred lines; these bound the work on hostile input (huge files,
// billion-laughs aliases, which yaml-cpp keeps as shared nodes but a walk would expand).
inline constexpr size_t kMaxInputBytes = 4 * 1024 * 1024;
inline constexpr size_t kMaxNodes = 200000;
inline constexpr size_t kMaxErrors = 200;
// A policy file holds one document; this bounds the empty ones (`---` lines) around it.
inline constexpr size_t kMaxDocuments = 1000;
// Kubernetes reserves larger PriorityClass values for system classes
// (HighestUserDefinablePriority).
inline constexpr int64_t kMaxPriorityValue = 1000000000;

// Field paths as Kubernetes' field.Path prints them: `spec.classes.a100`, `taints[0]`, and a
// map key chosen by the user in brackets when it has dots or slashes
// (`nodeSelector[nvidia.com/gpu.product]`).
std::string child(const std::string& path, std::string_view key);
std::string key_path(const std::string& path, std::string_view key);
std::string index_path(const std::string& path, size_t i);

// A string for a message: double-quoted, `"` `\` and newlines escaped.
std::string quote(std::string_view s);

// How a node reads in an error message: `got a map`, `got "abc"`.
std::string describe(const YAML::Node& node);
// Plain (untagged, unquoted) scalar: the only kind read as a number or a boolean.
bool is_plain(const YAML::Node& node);

struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// The fields of one YAML map, already checked for unknown and duplicate keys.
struct MapView {
  std::string path;
  YAML::Node node;
  std::vector<Field> fields;

  const Field* get(std::string_view key) const {
    for (const Field& f : fields) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }
};

// A name that must be declared elsewhere in the policy; checked once everything is read.
struct Ref {
  std::string path;
  YAML::Mark mark;
  std::string name;
};

// A name that must also be in a list of the same tenant (defaultClass ∈ allowedClasses).
struct MemberRef {
  Ref ref;
  std::string what;       // "allowedClasses"
  std::string list_path;  // "spec.tenants[0].allowedClasses"
  std::vector<std::string> list;
};

class PolicyReader {
 public:
  explicit PolicyReader(std::string file) : file_(std::move(file)) {}

  PolicyLoadResult load(std::string_view text);

 private:
  // ---- the document (loader.cc) ------------------------------------------------------------
  void read_policy(const YAML::Node& root);
  void read_metadata(const YAML::Node& node);
  void read_generation(const YAML::Node& node, const std::string& path, const std::string& text);
  void read_spec(const YAML::Node& node, const std::string& path);
  void check_references();

  // ---- errors, budget and typed readers (loader_fields.cc) ---------------------------------
  void add(const YAML::Mark& mark, std::string path, std::string message);
  void add(const YAML::Node& at, std::string path, std::string message);
  void add_scan_problem(const yaml::YamlProblem& problem);
  // Counts one visited node; false once the budget is spent (reported once).
  bool visit(const YAML::Node& node);
  // The fields of a map; reports a non-map, non-string keys, duplicate and unknown keys.
  std::optional<MapView> map(const YAML::Node& node, const std::string& path,
                             std::initializer_list<std::string_view> allowed);
  // A map whose keys the user chooses (class names, label keys, resource names).
  std::optional<MapView> free_map(const YAML::Node& node, const std::string& path);
  // The elements of a list.
  std::optional<std::vector<YAML::Node>> list(const YAML::Node& node, const std::string& path);
  // Any scalar reads as a string (`value: true` is the string "true", as users mean it).
  std::optional<std::string> string(const YAML::Node& node, const std::string& path);
  std::optional<std::string> nonempty_string(const YAML::Node& node, const std::string& path);
  // YAML 1.2 core schema decimal integers; a quoted "8" is a string, as in Kubernetes.
  std::optional<int64_t> integer(const YAML::Node& node, const std::string& path);
  // An integer count >= `min`.
  std::optional<int64_t> count(const YAML::Node& node, const std::string& path, int64_t min);
  std::optional<bool> boolean(const YAML::Node& node, const std::string& path);
  std::optional<std::string> one_of(const YAML::Node& node, const std::string& path,
                                    const std::vector<std::string_view>& values);
  std::optional<Action> action(const YAML::Node& node, const std::string& path,
                               const std::vector<std::string_view>& allowed);
  std::optional<Quantity> quantity(const YAML::Node& node, const std::string& path);
  // A list of RE2 full-match patterns; each is compiled to report RE2's own error.
  std::vector<std::string> patterns(const YAML::Node& node, const std::string& path);
  // A list of names, each recorded with its location for the reference checks.
  std::vector<Ref> names(const YAML::Node& node, const std::string& path);
  void missing(const MapView& m, std::string_view key);
  // Calls `read(value, path)` when the field is present.
  template <class F>
  void with(const MapView& m, std::string_view key, F&& read) {
    if (const Field* f = m.get(key)) read(f->value, key_path(m.path, key));
  }
  // Lowercase RFC 1123 subdomain of at most `max` characters: [a-z0-9] at both ends, [-.a-z0-9]
  // between.
  static bool is_dns_subdomain(std::string_view s, size_t max = 253);

  // ---- spec.classes, spec.nvidiaRuntimeClasses (loader_classes.cc) -------------------------
  // A MIG profile as read, with where it was written: the product check reports it there.
  using ProfileNodes = std::vector<std::pair<std::string, YAML::Node>>;
  void read_classes(const YAML::Node& node, const std::string& path);
  void read_class(const YAML::Node& node, const std::string& path, GpuClass& c);
  void read_node_selector(const YAML::Node& n, const std::string& p, GpuClass& c);
  void read_taints(const YAML::Node& n, const std::string& p, GpuClass& c);
  void read_mig(const YAML::Node& n, const std::string& p, GpuClass& c,
                ProfileNodes& profile_nodes);
  void read_mig_profiles(const YAML::Node& n, const std::string& pp, MigConfig& mig,
                         ProfileNodes& profile_nodes);
  void read_time_slicing(const YAML::Node& n, const std::string& p, GpuClass& c);
  // A profile the pool's GPU cannot make would leave every such pod Pending.
  void check_profiles_for_products(const GpuClass& c, const ProfileNodes& profile_nodes);
  // `deviceClasses: {gpu.nvidia.com: {}, mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7,
  // migProfile: 1g.10gb}}` (docs/dra.md): the DRA DeviceClasses that hand out this class's
  // devices. A DeviceClass names one pool: one mapped by two classes, or a migProfile the class
  // does not offer, is reported by check_device_classes.
  void read_device_classes(const YAML::Node& node, const std::string& path, GpuClass& c);
  // `price: {perGPUHour: 3.67, currency: USD}`: a decimal with at most 6 fractional digits;
  // every priced class in one currency.
  void read_price(const YAML::Node& node, const std::string& path, GpuClass& c);
  // `driver: {version: "535.104.05"}` or `driver: {cuda: "12.2"}` (GPU027).
  void read_driver(const YAML::Node& node, const std::string& path, GpuClass& c);
  // `spec.cudaImages: [{pattern, cuda}]` (GPU027).
  void read_cuda_images(const YAML::Node& node, const std::string& path);
  void read_topology(const YAML::Node& node, const std::string& path, GpuClass& c);
  // Kubernetes names DeviceClasses with DNS subdomains (validation.IsDNS1123Subdomain).
  static bool is_device_class_name(std::string_view name);
  // A DeviceClass maps to one class; a mapping's migProfile must be one its class offers.
  void check_device_classes();
  // RuntimeClass names: DNS-1123 subdomains (Kubernetes ValidateRuntimeClassName).
  void read_nvidia_runtime_classes(const YAML::Node& node, const std::string& path);

  // ---- spec.priorityClasses (loader_priority_classes.cc) -----------------------------------
  void read_priority_classes(const YAML::Node& node, const std::string& path);

  // ---- spec.tenants (loader_tenants.cc) ----------------------------------------------------
  // Tenant names read so far, with the path of each: a duplicate is reported with the first.
  using TenantNames = std::vector<std::pair<std::string, std::string>>;
  void read_tenants(const YAML::Node& node, const std::string& path);
  void read_tenant(const YAML::Node& node, const std::string& tp, TenantNames& seen);
  void read_tenant_name(const MapView& m, const std::string& tp, Tenant& t, TenantNames& seen);
  // defaultClass and allowedClasses: references checked once every class is read, and the
  // default class must be one of the allowed ones.
  void read_tenant_classes(const MapView& m, Tenant& t);
  void read_tenant_defaults(const YAML::Node& n, const std::string& p, TenantDefaults& d);
  // `marks` (optional) receives each entry's location, parallel to the result.
  ResourceList resources(const YAML::Node& node, const std::string& path,
                         std::vector<YAML::Mark>* marks = nullptr);
  void read_tenant_limits(const YAML::Node& n, const std::string& p, TenantLimits& limits);
  // `queue: {name: team-a, require: true}`: the LocalQueue name becomes a label value
  // (kueue.x-k8s.io/queue-name), so it must be both a LocalQueue name (DNS subdomain) and a
  // label value (at most 63 characters).
  std::optional<TenantQueue> read_queue(const YAML::Node& node, const std::string& path);
  void read_tenant_priority(const YAML::Node& node, const std::string& path, TenantPriority& tp);
  // `dra: {allocationModeAll: true, adminAccess: true}`: what the tenant may ask of DRA beyond
  // device counts; both default to false (GPU020, GPU021).
  void read_tenant_dra(const YAML::Node& node, const std::string& path, TenantDra& dra);

  // ---- spec.enforcement, a tenant's enforcement (loader_enforcement.cc) --------------------
  void read_enforcement(const YAML::Node& node, const std::string& path);
  // A tenant's staged rollout (docs/rollout.md): mode, mutate, per-rule actions.
  void read_tenant_enforcement(const YAML::Node& node, const std::string& path,
                               TenantEnforcement& te);
  // `rules: {GPU014: off}`: per-rule actions, in both.
  void read_rule_actions(const YAML::Node& node, const std::string& path,
                         std::vector<std::pair<std::string, Action>>& rules);
  static bool is_rule_id(std::string_view id);

  // ---- spec.workloads (loader_workloads.cc) ------------------------------------------------
  void read_workloads(const YAML::Node& node, const std::string& path);
  void read_pod_spec_paths(const YAML::Node& node, const std::string& path, WorkloadDecl& w);
  // "spec.workers[*].template.spec": keys separated by '.', `*` for any map key, a `[*]`
  // suffix for every list element (SPEC §6).
  static bool is_pod_spec_path(std::string_view path);
  // `controllers: [{username: system:serviceaccount:kubeflow:training-operator, kinds:
  // [kubeflow.org/PyTorchJob]}]`: who creates the children of which kinds (docs/decisions.md,
  // "Who an owner is believed from").
  void read_controllers(const YAML::Node& node, const std::string& path);
  void read_controller_kinds(const YAML::Node& node, const std::string& path,
                             ControllerIdentity& c);
  // `group/Kind` (`kubeflow.org/PyTorchJob`), or `Kind` alone for the core group (`Pod`): the
  // group a DNS subdomain, the kind a Kubernetes kind name ([A-Z][A-Za-z0-9]*).
  static std::optional<GroupKind> parse_group_kind(std::string_view text);

  std::string file_;
  Policy policy_;
  std::vector<PolicyError> errors_;
  std::vector<Ref> class_refs_;
  std::vector<Ref> priority_refs_;
  std::vector<MemberRef> class_members_;
  std::vector<MemberRef> priority_members_;
  struct DeviceClassProfile {
    Ref ref;             // the migProfile value
    size_t class_index;  // index of its class in policy_.classes
  };
  std::vector<Ref> device_class_refs_;  // every deviceClasses key, in file order
  std::vector<DeviceClassProfile> device_class_profiles_;
  std::map<int, YAML::Mark> null_value_keys_;  // null value position -> its key's position
  size_t visited_ = 0;
  bool budget_reported_ = false;
  bool truncated_ = false;
};

}  // namespace gpuadmit::policy_reader
