// The GPUPolicy loader: YAML text → Policy, or every error with its field path and location.
// Validation in two layers, as Envoy's config: the schema walk (types, enums, unknown fields),
// then cross-field checks (class and priority class references, MIG profiles per product).

#include "policies/loader.h"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>

#include "engine/join.h"
#include "policies/mig_profiles.h"
#include "policies/yaml_documents.h"

namespace gpuadmit {

std::string PolicyError::to_string() const {
  std::string out;
  if (!path.empty()) out += path + ": ";
  out += message;
  out += " (" + file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ")";
  return out;
}

namespace {

constexpr std::string_view kApiVersion = "gpuadmit.io/v1alpha1";
constexpr std::string_view kKind = "GPUPolicy";
constexpr std::string_view kProductLabel = "nvidia.com/gpu.product";
// A real policy is a few hundred lines; these bound the work on hostile input (huge files,
// billion-laughs aliases, which yaml-cpp keeps as shared nodes but a walk would expand).
constexpr size_t kMaxInputBytes = 4 * 1024 * 1024;
constexpr size_t kMaxNodes = 200000;
constexpr size_t kMaxErrors = 200;
// A policy file holds one document; this bounds the empty ones (`---` lines) around it.
constexpr size_t kMaxDocuments = 1000;
// Kubernetes reserves larger PriorityClass values for system classes
// (HighestUserDefinablePriority).
constexpr int64_t kMaxPriorityValue = 1000000000;

bool is_identifier(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

std::string child(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}

// A map key chosen by the user: `classes.a100`, but `nodeSelector[nvidia.com/gpu.product]`
// (Kubernetes' field.Path.Key form) when the key has dots or slashes.
std::string key_path(const std::string& path, std::string_view key) {
  if (is_identifier(key)) return child(path, key);
  return path + "[" + std::string(key) + "]";
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool is_plain(const YAML::Node& node) { return node.Tag() == "?"; }

// How a node reads in an error message: `got a map`, `got "abc"`.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return (is_plain(node) ? "" : "string ") + quote(utf8_from_yaml_cpp(node.Scalar()));
    default:
      return "nothing";
  }
}

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

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  PolicyLoadResult load(std::string_view text) {
    PolicyLoadResult result;
    if (text.size() > kMaxInputBytes) {
      add(YAML::Mark::null_mark(), "",
          "the policy is larger than " + std::to_string(kMaxInputBytes / (1024 * 1024)) +
              " MiB; a GPUPolicy is a few hundred lines, check that this is the right file");
      result.errors = std::move(errors_);
      return result;
    }
    // Scanned before it is loaded: yaml-cpp 0.7's LoadAll never returns on some inputs
    // (policies/yaml_documents.h).
    const YamlScan scan = scan_yaml_documents(text, {kMaxDocuments, kMaxNodes});
    if (scan.problem) {
      add_scan_problem(*scan.problem);
    } else if (scan.content_documents == 0) {
      // Comments-only documents are empty: ignored, as kubectl does.
      add(YAML::Mark::null_mark(), "",
          "the policy is empty; expected a GPUPolicy document (apiVersion: " +
              std::string(kApiVersion) + ", kind: " + std::string(kKind) + ")");
    } else if (scan.content_documents > 1) {
      add(scan.second_content, "",
          "a policy file holds exactly one YAML document, found " +
              std::to_string(scan.content_documents));
    } else {
      YAML::Node doc;
      try {
        doc = load_yaml_document(text, scan.first_content);
      } catch (const YAML::Exception& e) {
        add(e.mark, "", "invalid YAML: " + e.msg);
      }
      if (errors_.empty()) {
        read_policy(doc);
        check_references();
      }
    }
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const PolicyError& a, const PolicyError& b) {
                       return std::pair(a.line, a.column) < std::pair(b.line, b.column);
                     });
    if (truncated_) {
      errors_.push_back(PolicyError{
          "", "too many errors; only the first " + std::to_string(kMaxErrors) + " are shown", file_,
          0, 0});
    }
    result.errors = std::move(errors_);
    if (result.errors.empty()) result.policy = std::move(policy_);
    return result;
  }

 private:
  // ---- errors and budget -------------------------------------------------------------------

  void add(const YAML::Mark& mark, std::string path, std::string message) {
    if (errors_.size() >= kMaxErrors) {
      truncated_ = true;
      return;
    }
    PolicyError e;
    e.path = std::move(path);
    e.message = std::move(message);
    e.file = file_;
    if (!mark.is_null() && mark.line >= 0) {
      e.line = mark.line + 1;  // yaml-cpp marks are 0-based
      e.column = mark.column + 1;
    }
    errors_.push_back(std::move(e));
  }

  void add(const YAML::Node& at, std::string path, std::string message) {
    YAML::Mark mark = at.Mark();
    if (at.IsNull()) {
      // yaml-cpp places an empty value at the next token (often the next line): point at its key.
      if (auto it = null_value_keys_.find(mark.pos); it != null_value_keys_.end())
        mark = it->second;
    }
    add(mark, std::move(path), std::move(message));
  }

  void add_scan_problem(const YamlProblem& problem) {
    switch (problem.kind) {
      case YamlProblem::Kind::kSyntax:
        add(problem.mark, "", "invalid YAML: " + problem.message);
        return;
      case YamlProblem::Kind::kTooManyDocuments:
        add(problem.mark, "",
            "a policy file holds exactly one YAML document; this one has more than " +
                std::to_string(kMaxDocuments) + " (empty ones included)");
        return;
      case YamlProblem::Kind::kTooManyNodes:
        add(problem.mark, "",
            "the policy has more than " + std::to_string(kMaxNodes) +
                " YAML nodes; it is too large to be a policy, check that this is the right file");
        return;
    }
  }

  // Counts one visited node; false once the budget is spent (reported once).
  bool visit(const YAML::Node& node) {
    if (++visited_ <= kMaxNodes) return true;
    if (!budget_reported_) {
      budget_reported_ = true;
      add(node, "",
          "the policy has more than " + std::to_string(kMaxNodes) +
              " YAML nodes once aliases are expanded; it is too large to be a policy "
              "(check for alias bombs)");
    }
    return false;
  }

  // ---- typed readers -----------------------------------------------------------------------

  // The fields of a map; reports a non-map, non-string keys, duplicate and unknown keys.
  std::optional<MapView> map(const YAML::Node& node, const std::string& path,
                             std::initializer_list<std::string_view> allowed) {
    if (!visit(node)) return std::nullopt;
    if (!node.IsMap()) {
      add(node, path, "must be a map, got " + describe(node));
      return std::nullopt;
    }
    MapView view{path, node, {}};
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!visit(it->first)) return std::nullopt;
      if (!it->first.IsScalar()) {
        add(it->first, path, "map keys must be strings, got " + describe(it->first));
        continue;
      }
      const std::string key = utf8_from_yaml_cpp(it->first.Scalar());
      const std::string field_path = key_path(path, key);
      if (const Field* prev = view.get(key)) {
        add(it->first, field_path,
            "duplicate key " + quote(key) + " (first set at line " +
                std::to_string(prev->key_node.Mark().line + 1) + ")");
        continue;
      }
      if (allowed.size() > 0 && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string message = "unknown field " + quote(key);
        for (std::string_view candidate : allowed) {
          if (edit_distance(candidate, key) <= 2) {
            message += " (did you mean " + quote(candidate) + "?)";
            break;
          }
        }
        add(it->first, field_path, message);
        continue;
      }
      if (it->second.IsNull()) null_value_keys_.emplace(it->second.Mark().pos, it->first.Mark());
      view.fields.push_back(Field{key, it->first, it->second});
    }
    return view;
  }

  // A map whose keys the user chooses (class names, label keys, resource names).
  std::optional<MapView> free_map(const YAML::Node& node, const std::string& path) {
    return map(node, path, {});
  }

  // The elements of a list.
  std::optional<std::vector<YAML::Node>> list(const YAML::Node& node, const std::string& path) {
    if (!visit(node)) return std::nullopt;
    if (!node.IsSequence()) {
      add(node, path, "must be a list, got " + describe(node));
      return std::nullopt;
    }
    std::vector<YAML::Node> items;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!visit(*it)) return std::nullopt;
      items.push_back(*it);
    }
    return items;
  }

  // Any scalar reads as a string (`value: true` is the string "true", as users mean it).
  std::optional<std::string> string(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      add(node, path, "must be a string, got " + describe(node));
      return std::nullopt;
    }
    return utf8_from_yaml_cpp(node.Scalar());  // yaml-cpp 0.7 writes \_ and \N as Latin-1
  }

  std::optional<std::string> nonempty_string(const YAML::Node& node, const std::string& path) {
    auto s = string(node, path);
    if (s && s->empty()) {
      add(node, path, "must not be empty");
      return std::nullopt;
    }
    return s;
  }

  // YAML 1.2 core schema decimal integers; a quoted "8" is a string, as in Kubernetes.
  std::optional<int64_t> integer(const YAML::Node& node, const std::string& path) {
    const std::string bad = "must be an integer, got " + describe(node);
    if (!node.IsScalar() || !(is_plain(node) || node.Tag() == "tag:yaml.org,2002:int")) {
      add(node, path, bad);
      return std::nullopt;
    }
    const std::string& s = node.Scalar();
    size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (i == s.size() || !std::all_of(s.begin() + i, s.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      add(node, path, bad);
      return std::nullopt;
    }
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE) {
      add(node, path, "integer " + s + " is out of range");
      return std::nullopt;
    }
    return static_cast<int64_t>(value);
  }

  // An integer count >= `min`.
  std::optional<int64_t> count(const YAML::Node& node, const std::string& path, int64_t min) {
    auto v = integer(node, path);
    if (!v) return std::nullopt;
    if (*v < 0) {
      add(node, path, "must not be negative, got " + std::to_string(*v));
      return std::nullopt;
    }
    if (*v < min) {
      add(node, path, "must be at least " + std::to_string(min) + ", got " + std::to_string(*v));
      return std::nullopt;
    }
    return v;
  }

  std::optional<bool> boolean(const YAML::Node& node, const std::string& path) {
    if (node.IsScalar() && (is_plain(node) || node.Tag() == "tag:yaml.org,2002:bool")) {
      const std::string& s = node.Scalar();
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    add(node, path, "must be true or false, got " + describe(node));
    return std::nullopt;
  }

  std::optional<std::string> one_of(const YAML::Node& node, const std::string& path,
                                    const std::vector<std::string_view>& values) {
    auto s = string(node, path);
    if (!s) return std::nullopt;
    if (std::find(values.begin(), values.end(), *s) == values.end()) {
      add(node, path, "invalid value " + quote(*s) + ": must be one of " + join(values));
      return std::nullopt;
    }
    return s;
  }

  std::optional<Action> action(const YAML::Node& node, const std::string& path,
                               const std::vector<std::string_view>& allowed) {
    auto s = one_of(node, path, allowed);
    if (!s) return std::nullopt;
    if (*s == "fix") return Action::kFix;
    if (*s == "deny") return Action::kDeny;
    if (*s == "warn") return Action::kWarn;
    if (*s == "off") return Action::kOff;
    return Action::kStrip;
  }

  std::optional<Quantity> quantity(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      add(node, path,
          "must be a quantity such as \"4\", \"500m\" or \"16Gi\", got " + describe(node));
      return std::nullopt;
    }
    auto q = Quantity::parse(node.Scalar());
    if (!q) {
      add(node, path,
          "invalid quantity " + quote(node.Scalar()) +
              ": must be a Kubernetes quantity such as \"4\", \"500m\" or \"16Gi\"");
      return std::nullopt;
    }
    if (q->is_negative()) {
      add(node, path, "must not be negative, got " + quote(node.Scalar()));
      return std::nullopt;
    }
    return q;
  }

  // A list of RE2 full-match patterns; each is compiled to report RE2's own error.
  std::vector<std::string> patterns(const YAML::Node& node, const std::string& path) {
    std::vector<std::string> out;
    auto items = list(node, path);
    if (!items) return out;
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string p = index_path(path, i);
      auto s = string((*items)[i], p);
      if (!s) continue;
      RE2 re(*s, RE2::Quiet);
      if (!re.ok()) {
        add((*items)[i], p, "invalid regular expression " + quote(*s) + ": " + re.error());
        continue;
      }
      out.push_back(*s);
    }
    return out;
  }

  // A list of names, each recorded with its location for the reference checks.
  std::vector<Ref> names(const YAML::Node& node, const std::string& path) {
    std::vector<Ref> out;
    auto items = list(node, path);
    if (!items) return out;
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string p = index_path(path, i);
      if (auto s = nonempty_string((*items)[i], p)) out.push_back(Ref{p, (*items)[i].Mark(), *s});
    }
    return out;
  }

  void missing(const MapView& m, std::string_view key) {
    add(m.node, child(m.path, key), "required field is missing");
  }

  // Calls `read(value, path)` when the field is present.
  template <class F>
  void with(const MapView& m, std::string_view key, F&& read) {
    if (const Field* f = m.get(key)) read(f->value, key_path(m.path, key));
  }

  // ---- the schema walk ---------------------------------------------------------------------

  void read_policy(const YAML::Node& root) {
    if (!root.IsMap()) {
      add(root, "",
          "a policy is a map with apiVersion, kind, metadata and spec; got " + describe(root));
      return;
    }
    auto m = map(root, "", {"apiVersion", "kind", "metadata", "spec"});
    if (!m) return;
    if (const Field* f = m->get("apiVersion")) {
      auto s = string(f->value, "apiVersion");
      if (s && *s != kApiVersion) {
        add(f->value, "apiVersion",
            "unsupported value " + quote(*s) + ": must be " + std::string(kApiVersion));
      }
    } else {
      missing(*m, "apiVersion");
    }
    if (const Field* f = m->get("kind")) {
      auto s = string(f->value, "kind");
      if (s && *s != kKind) {
        add(f->value, "kind", "unsupported value " + quote(*s) + ": must be " + std::string(kKind));
      }
    } else {
      missing(*m, "kind");
    }
    if (const Field* f = m->get("metadata")) {
      read_metadata(f->value);
    } else {
      missing(*m, "metadata");
    }
    with(*m, "spec", [&](const YAML::Node& n, const std::string& p) { read_spec(n, p); });
  }

  void read_metadata(const YAML::Node& node) {
    auto m = map(node, "metadata", {"name", "labels", "annotations"});
    if (!m) return;
    if (const Field* f = m->get("name")) {
      if (auto s = nonempty_string(f->value, "metadata.name")) policy_.name = *s;
    } else {
      missing(*m, "name");
    }
    // Accepted (the policy may be kept as a Kubernetes-style object) and otherwise unused.
    for (std::string_view key : {"labels", "annotations"}) {
      with(*m, key, [&](const YAML::Node& n, const std::string& p) {
        if (auto kv = free_map(n, p)) {
          for (const Field& f : kv->fields) string(f.value, key_path(p, f.key));
        }
      });
    }
  }

  void read_spec(const YAML::Node& node, const std::string& path) {
    auto m = map(node, path,
                 {"gpuResources", "classes", "priorityClasses", "tenants", "enforcement",
                  "workloads", "nvidiaRuntimeClasses"});
    if (!m) return;
    with(*m, "gpuResources", [&](const YAML::Node& n, const std::string& p) {
      auto items = list(n, p);
      if (!items) return;
      for (size_t i = 0; i < items->size(); ++i) {
        const std::string ip = index_path(p, i);
        auto s = nonempty_string((*items)[i], ip);
        if (!s) continue;
        // Extended resources are always domain-qualified (Kubernetes IsExtendedResourceName).
        if (s->find('/') == std::string::npos || s->front() == '/' || s->back() == '/') {
          add((*items)[i], ip,
              "invalid resource name " + quote(*s) + ": must be <domain>/<name>, e.g. amd.com/gpu");
          continue;
        }
        policy_.gpu_resources.push_back(*s);
      }
    });
    with(*m, "classes", [&](const YAML::Node& n, const std::string& p) { read_classes(n, p); });
    with(*m, "priorityClasses",
         [&](const YAML::Node& n, const std::string& p) { read_priority_classes(n, p); });
    with(*m, "tenants", [&](const YAML::Node& n, const std::string& p) { read_tenants(n, p); });
    with(*m, "enforcement",
         [&](const YAML::Node& n, const std::string& p) { read_enforcement(n, p); });
    with(*m, "workloads", [&](const YAML::Node& n, const std::string& p) { read_workloads(n, p); });
    with(*m, "nvidiaRuntimeClasses",
         [&](const YAML::Node& n, const std::string& p) { read_nvidia_runtime_classes(n, p); });
  }

  // RuntimeClass names: DNS-1123 subdomains (Kubernetes ValidateRuntimeClassName).
  void read_nvidia_runtime_classes(const YAML::Node& node, const std::string& path) {
    for (const Ref& r : names(node, path)) {
      if (!is_dns_subdomain(r.name)) {
        add(r.mark, r.path,
            "invalid RuntimeClass name " + quote(r.name) +
                ": must be a lowercase DNS subdomain such as nvidia-cdi");
        continue;
      }
      policy_.nvidia_runtime_classes.push_back(r.name);
    }
  }

  // Lowercase RFC 1123 subdomain of at most `max` characters: [a-z0-9] at both ends, [-.a-z0-9]
  // between.
  static bool is_dns_subdomain(std::string_view s, size_t max = 253) {
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (s.empty() || s.size() > max || !alnum(s.front()) || !alnum(s.back())) return false;
    return std::all_of(s.begin(), s.end(),
                       [&](char c) { return alnum(c) || c == '-' || c == '.'; });
  }

  void read_classes(const YAML::Node& node, const std::string& path) {
    auto classes = free_map(node, path);
    if (!classes) return;
    for (const Field& f : classes->fields) {
      GpuClass c;
      c.name = f.key;
      const std::string cp = key_path(path, f.key);
      if (f.key.empty()) add(f.key_node, cp, "class name must not be empty");
      read_class(f.value, cp, c);
      policy_.classes.push_back(std::move(c));
    }
  }

  // A MIG profile as read, with where it was written: the product check reports it there.
  using ProfileNodes = std::vector<std::pair<std::string, YAML::Node>>;

  void read_class(const YAML::Node& node, const std::string& path, GpuClass& c) {
    auto m = map(
        node, path,
        {"nodeSelector", "taints", "gpusPerNode", "nodes", "mig", "timeSlicing", "deviceClasses"});
    if (!m) return;
    ProfileNodes profile_nodes;
    with(*m, "nodeSelector",
         [&](const YAML::Node& n, const std::string& p) { read_node_selector(n, p, c); });
    with(*m, "taints", [&](const YAML::Node& n, const std::string& p) { read_taints(n, p, c); });
    with(*m, "gpusPerNode",
         [&](const YAML::Node& n, const std::string& p) { c.gpus_per_node = count(n, p, 1); });
    with(*m, "nodes", [&](const YAML::Node& n, const std::string& p) { c.nodes = count(n, p, 0); });
    with(*m, "mig",
         [&](const YAML::Node& n, const std::string& p) { read_mig(n, p, c, profile_nodes); });
    with(*m, "timeSlicing",
         [&](const YAML::Node& n, const std::string& p) { read_time_slicing(n, p, c); });
    with(*m, "deviceClasses",
         [&](const YAML::Node& n, const std::string& p) { read_device_classes(n, p, c); });
    if (const Field* ts = m->get("timeSlicing"); ts && m->get("mig")) {
      add(ts->key_node, key_path(path, "timeSlicing"),
          "a class cannot have both mig and timeSlicing: describe a MIG-partitioned pool and a "
          "time-sliced pool as two classes");
    }
    check_profiles_for_products(c, profile_nodes);
  }

  void read_node_selector(const YAML::Node& n, const std::string& p, GpuClass& c) {
    auto sel = free_map(n, p);
    if (!sel) return;
    for (const Field& f : sel->fields) {
      const std::string kp = key_path(p, f.key);
      if (f.key.empty()) {
        add(f.key_node, kp, "label key must not be empty");
        continue;
      }
      std::vector<std::string> values;
      if (f.value.IsScalar()) {
        // A single value is accepted for `key: value`, as a nodeSelector is usually written.
        if (auto s = nonempty_string(f.value, kp)) values.push_back(*s);
      } else if (auto items = list(f.value, kp)) {
        for (size_t i = 0; i < items->size(); ++i) {
          if (auto s = nonempty_string((*items)[i], index_path(kp, i))) values.push_back(*s);
        }
        if (items->empty()) {
          add(f.value, kp, "must list at least one value (node affinity `In` needs one)");
        }
      }
      if (!values.empty()) c.node_selector.emplace_back(f.key, std::move(values));
    }
  }

  void read_taints(const YAML::Node& n, const std::string& p, GpuClass& c) {
    auto items = list(n, p);
    if (!items) return;
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string tp = index_path(p, i);
      auto tm = map((*items)[i], tp, {"key", "value", "effect"});
      if (!tm) continue;
      Taint t;
      if (const Field* k = tm->get("key")) {
        if (auto s = nonempty_string(k->value, child(tp, "key"))) t.key = *s;
      } else {
        missing(*tm, "key");
      }
      with(*tm, "value", [&](const YAML::Node& v, const std::string& vp) {
        if (auto s = string(v, vp)) t.value = *s;
      });
      if (const Field* e = tm->get("effect")) {
        if (auto s = one_of(e->value, child(tp, "effect"),
                            {"NoSchedule", "PreferNoSchedule", "NoExecute"})) {
          t.effect = *s;
        }
      } else {
        missing(*tm, "effect");
      }
      c.taints.push_back(std::move(t));
    }
  }

  void read_mig(const YAML::Node& n, const std::string& p, GpuClass& c,
                ProfileNodes& profile_nodes) {
    auto mm = map(n, p, {"strategy", "profiles"});
    if (!mm) return;
    MigConfig mig;
    with(*mm, "strategy", [&](const YAML::Node& s, const std::string& sp) {
      if (auto v = one_of(s, sp, {"mixed", "single"})) {
        mig.strategy = *v == "single" ? MigConfig::Strategy::kSingle : MigConfig::Strategy::kMixed;
      }
    });
    if (const Field* pf = mm->get("profiles")) {
      read_mig_profiles(pf->value, child(p, "profiles"), mig, profile_nodes);
    } else {
      missing(*mm, "profiles");
    }
    c.mig = std::move(mig);
  }

  void read_mig_profiles(const YAML::Node& n, const std::string& pp, MigConfig& mig,
                         ProfileNodes& profile_nodes) {
    auto items = list(n, pp);
    if (!items) return;
    if (items->empty()) add(n, pp, "must list at least one MIG profile");
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string ip = index_path(pp, i);
      auto s = string((*items)[i], ip);
      if (!s) continue;
      if (!is_mig_profile_syntax(*s)) {
        add((*items)[i], ip,
            "invalid MIG profile " + quote(*s) +
                ": must be <n>g.<m>gb, optionally followed by +me (e.g. 1g.10gb, 3g.40gb, "
                "1g.10gb+me)");
        continue;
      }
      if (std::find(mig.profiles.begin(), mig.profiles.end(), *s) != mig.profiles.end()) {
        add((*items)[i], ip, "duplicate MIG profile " + quote(*s));
        continue;
      }
      mig.profiles.push_back(*s);
      profile_nodes.emplace_back(ip, (*items)[i]);
    }
  }

  void read_time_slicing(const YAML::Node& n, const std::string& p, GpuClass& c) {
    auto tm = map(n, p, {"replicas", "renameByDefault", "failRequestsGreaterThanOne"});
    if (!tm) return;
    TimeSlicing ts;
    with(*tm, "replicas", [&](const YAML::Node& v, const std::string& vp) {
      if (auto r = count(v, vp, 1)) ts.replicas = *r;
    });
    with(*tm, "renameByDefault", [&](const YAML::Node& v, const std::string& vp) {
      if (auto b = boolean(v, vp)) ts.rename_by_default = *b;
    });
    with(*tm, "failRequestsGreaterThanOne", [&](const YAML::Node& v, const std::string& vp) {
      if (auto b = boolean(v, vp)) ts.fail_requests_greater_than_one = *b;
    });
    c.time_slicing = ts;
  }

  // A profile the pool's GPU cannot make would leave every such pod Pending.
  void check_profiles_for_products(const GpuClass& c, const ProfileNodes& profile_nodes) {
    for (const auto& [key, values] : c.node_selector) {
      if (key != kProductLabel) continue;
      for (const std::string& product : values) {
        auto valid = mig_profiles_for_product(product);
        if (!valid) continue;
        for (const auto& [ip, pnode] : profile_nodes) {
          const std::string& profile = pnode.Scalar();
          if (std::find(valid->begin(), valid->end(), profile) == valid->end()) {
            add(pnode, ip,
                "MIG profile " + quote(profile) + " cannot be made by " + product +
                    " (valid: " + join(*valid) + ")");
          }
        }
      }
    }
  }

  // `deviceClasses: {gpu.nvidia.com: {}, mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7,
  // migProfile: 1g.10gb}}` (docs/dra.md): the DRA DeviceClasses that hand out this class's
  // devices. A DeviceClass names one pool: one mapped by two classes is reported in
  // check_references, a migProfile the class does not offer in check_device_class_profiles.
  void read_device_classes(const YAML::Node& node, const std::string& path, GpuClass& c) {
    auto dm = free_map(node, path);
    if (!dm) return;
    for (const Field& f : dm->fields) {
      const std::string dp = key_path(path, f.key);
      if (!is_device_class_name(f.key)) {
        add(f.key_node, dp,
            "invalid DeviceClass name " + quote(f.key) +
                ": must be a DNS subdomain (lower-case letters, digits, '-' and '.'), e.g. "
                "gpu.nvidia.com");
        continue;
      }
      DeviceClassMapping mapping;
      mapping.name = f.key;
      // `gpu.nvidia.com: {}` and `gpu.nvidia.com:` (null) both mean the defaults.
      if (!f.value.IsNull()) {
        auto om = map(f.value, dp, {"devicesPerGPU", "migProfile"});
        if (!om) continue;
        with(*om, "devicesPerGPU", [&](const YAML::Node& v, const std::string& vp) {
          if (auto n = count(v, vp, 1)) mapping.devices_per_gpu = *n;
        });
        with(*om, "migProfile", [&](const YAML::Node& v, const std::string& vp) {
          auto s = string(v, vp);
          if (!s) return;
          if (!is_mig_profile_syntax(*s)) {
            add(v, vp, "invalid MIG profile " + quote(*s) + ": must be <n>g.<m>gb, optionally +me");
            return;
          }
          mapping.mig_profile = *s;
          device_class_profiles_.push_back(
              DeviceClassProfile{Ref{vp, v.Mark(), *s}, policy_.classes.size()});
        });
      }
      device_class_refs_.push_back(Ref{dp, f.key_node.Mark(), f.key});
      c.device_classes.push_back(std::move(mapping));
    }
  }

  // Kubernetes names DeviceClasses with DNS subdomains (validation.IsDNS1123Subdomain).
  static bool is_device_class_name(std::string_view name) {
    if (name.empty() || name.size() > 253) return false;
    for (char ch : name) {
      if (!(std::islower(static_cast<unsigned char>(ch)) ||
            std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.')) {
        return false;
      }
    }
    return std::isalnum(static_cast<unsigned char>(name.front())) &&
           std::isalnum(static_cast<unsigned char>(name.back()));
  }

  // `dra: {allocationModeAll: true, adminAccess: true}`: what the tenant may ask of DRA beyond
  // device counts; both default to false (GPU020, GPU021).
  void read_tenant_dra(const YAML::Node& node, const std::string& path, TenantDra& dra) {
    auto m = map(node, path, {"allocationModeAll", "adminAccess"});
    if (!m) return;
    with(*m, "allocationModeAll", [&](const YAML::Node& n, const std::string& p) {
      if (auto b = boolean(n, p)) dra.allocation_mode_all = *b;
    });
    with(*m, "adminAccess", [&](const YAML::Node& n, const std::string& p) {
      if (auto b = boolean(n, p)) dra.admin_access = *b;
    });
  }

  // A DeviceClass maps to one class; a mapping's migProfile must be one its class offers.
  void check_device_classes() {
    std::map<std::string, const Ref*, std::less<>> first;
    for (const Ref& r : device_class_refs_) {
      auto [it, inserted] = first.emplace(r.name, &r);
      if (!inserted) {
        add(r.mark, r.path,
            "DeviceClass " + quote(r.name) + " is already mapped by " + it->second->path +
                "; a DeviceClass hands out the devices of one class");
      }
    }
    for (const DeviceClassProfile& d : device_class_profiles_) {
      if (d.class_index >= policy_.classes.size()) continue;
      const GpuClass& c = policy_.classes[d.class_index];
      if (!c.mig) {
        add(d.ref.mark, d.ref.path,
            "migProfile " + quote(d.ref.name) + " on class " + quote(c.name) +
                ", which has no mig: describe the class's MIG profiles under mig.profiles");
      } else if (std::find(c.mig->profiles.begin(), c.mig->profiles.end(), d.ref.name) ==
                 c.mig->profiles.end()) {
        add(d.ref.mark, d.ref.path,
            "unknown MIG profile " + quote(d.ref.name) + ": class " + quote(c.name) + " offers " +
                join(c.mig->profiles));
      }
    }
  }

  void read_priority_classes(const YAML::Node& node, const std::string& path) {
    auto classes = free_map(node, path);
    if (!classes) return;
    const Field* global_default = nullptr;
    for (const Field& f : classes->fields) {
      const std::string cp = key_path(path, f.key);
      PriorityClassDecl pc;
      pc.name = f.key;
      if (f.key.empty()) {
        add(f.key_node, cp, "priority class name must not be empty");
      } else if (f.key.rfind("system-", 0) == 0) {
        add(f.key_node, cp,
            "priority class names starting with \"system-\" are reserved by Kubernetes");
      }
      auto m = map(f.value, cp, {"value", "preemptionPolicy", "globalDefault"});
      if (m) {
        if (const Field* v = m->get("value")) {
          const std::string vp = child(cp, "value");
          if (auto value = integer(v->value, vp)) {
            if (*value > kMaxPriorityValue || *value < std::numeric_limits<int32_t>::min()) {
              add(v->value, vp,
                  "must be between -2147483648 and 1000000000 (larger values are reserved for "
                  "system priority classes), got " +
                      std::to_string(*value));
            } else {
              pc.value = static_cast<int32_t>(*value);
            }
          }
        } else {
          missing(*m, "value");
        }
        with(*m, "preemptionPolicy", [&](const YAML::Node& n, const std::string& p) {
          if (auto s = one_of(n, p, {"PreemptLowerPriority", "Never"})) pc.preemption_policy = *s;
        });
        with(*m, "globalDefault", [&](const YAML::Node& n, const std::string& p) {
          auto b = boolean(n, p);
          if (!b || !*b) return;
          pc.global_default = true;
          if (global_default) {
            add(n, p,
                "only one priority class can be globalDefault; " + quote(global_default->key) +
                    " already is");
          } else {
            global_default = &f;
          }
        });
      }
      policy_.priority_classes.push_back(std::move(pc));
    }
  }

  // `marks` (optional) receives each entry's location, parallel to the result.
  ResourceList resources(const YAML::Node& node, const std::string& path,
                         std::vector<YAML::Mark>* marks = nullptr) {
    ResourceList out;
    auto m = free_map(node, path);
    if (!m) return out;
    for (const Field& f : m->fields) {
      const std::string rp = key_path(path, f.key);
      if (f.key.empty()) {
        add(f.key_node, rp, "resource name must not be empty");
        continue;
      }
      if (auto q = quantity(f.value, rp)) {
        out.emplace_back(f.key, *q);
        if (marks) marks->push_back(f.value.Mark());
      }
    }
    return out;
  }

  // Tenant names read so far, with the path of each: a duplicate is reported with the first.
  using TenantNames = std::vector<std::pair<std::string, std::string>>;

  void read_tenants(const YAML::Node& node, const std::string& path) {
    auto items = list(node, path);
    if (!items) return;
    TenantNames seen;
    for (size_t i = 0; i < items->size(); ++i) read_tenant((*items)[i], index_path(path, i), seen);
  }

  void read_tenant(const YAML::Node& node, const std::string& tp, TenantNames& seen) {
    Tenant t;
    auto m = map(node, tp,
                 {"name", "namespaces", "defaultClass", "allowedClasses", "defaults", "limits",
                  "quota", "priority", "queue", "dra", "enforcement"});
    if (!m) return;
    read_tenant_name(*m, tp, t, seen);
    if (const Field* f = m->get("namespaces")) {
      const std::string np = child(tp, "namespaces");
      t.namespaces = patterns(f->value, np);
      if (f->value.IsSequence() && f->value.size() == 0) {
        add(f->value, np, "must list at least one namespace pattern");
      }
    } else {
      missing(*m, "namespaces");
    }
    read_tenant_classes(*m, t);
    with(*m, "defaults", [&](const YAML::Node& n, const std::string& p) {
      read_tenant_defaults(n, p, t.defaults);
    });
    with(*m, "limits",
         [&](const YAML::Node& n, const std::string& p) { read_tenant_limits(n, p, t.limits); });
    with(*m, "quota", [&](const YAML::Node& n, const std::string& p) {
      auto qm = map(n, p, {"gpus"});
      if (!qm) return;
      with(*qm, "gpus",
           [&](const YAML::Node& v, const std::string& vp) { t.quota_gpus = count(v, vp, 0); });
    });
    with(*m, "priority", [&](const YAML::Node& n, const std::string& p) {
      read_tenant_priority(n, p, t.priority);
    });
    with(*m, "queue",
         [&](const YAML::Node& n, const std::string& p) { t.queue = read_queue(n, p); });
    with(*m, "dra",
         [&](const YAML::Node& n, const std::string& p) { read_tenant_dra(n, p, t.dra); });
    with(*m, "enforcement", [&](const YAML::Node& n, const std::string& p) {
      read_tenant_enforcement(n, p, t.enforcement);
    });
    policy_.tenants.push_back(std::move(t));
  }

  void read_tenant_name(const MapView& m, const std::string& tp, Tenant& t, TenantNames& seen) {
    const Field* f = m.get("name");
    if (f == nullptr) {
      missing(m, "name");
      return;
    }
    const std::string np = child(tp, "name");
    auto s = nonempty_string(f->value, np);
    if (!s) return;
    t.name = *s;
    auto dup =
        std::find_if(seen.begin(), seen.end(), [&](const auto& s2) { return s2.first == *s; });
    if (dup != seen.end()) {
      add(f->value, np, "duplicate tenant name " + quote(*s) + " (also " + dup->second + ")");
    } else {
      seen.emplace_back(*s, tp);
    }
  }

  // defaultClass and allowedClasses: references checked once every class is read, and the
  // default class must be one of the allowed ones.
  void read_tenant_classes(const MapView& m, Tenant& t) {
    std::optional<Ref> default_class;
    with(m, "defaultClass", [&](const YAML::Node& n, const std::string& p) {
      if (auto s = nonempty_string(n, p)) {
        t.default_class = *s;
        default_class = Ref{p, n.Mark(), *s};
        class_refs_.push_back(*default_class);
      }
    });
    with(m, "allowedClasses", [&](const YAML::Node& n, const std::string& p) {
      std::vector<Ref> refs = names(n, p);
      std::vector<std::string> allowed;
      for (Ref& r : refs) {
        allowed.push_back(r.name);
        class_refs_.push_back(std::move(r));
      }
      if (n.IsSequence()) {
        if (default_class) {
          class_members_.push_back(MemberRef{*default_class, "allowedClasses", p, allowed});
        }
        t.allowed_classes = std::move(allowed);
      }
    });
  }

  void read_tenant_defaults(const YAML::Node& n, const std::string& p, TenantDefaults& d) {
    auto dm = map(n, p, {"request", "limit", "perGPU"});
    if (!dm) return;
    std::vector<YAML::Mark> request_marks;
    with(*dm, "request", [&](const YAML::Node& r, const std::string& rp) {
      d.request = resources(r, rp, &request_marks);
    });
    with(*dm, "limit",
         [&](const YAML::Node& r, const std::string& rp) { d.limit = resources(r, rp); });
    with(*dm, "perGPU",
         [&](const YAML::Node& r, const std::string& rp) { d.per_gpu = resources(r, rp); });
    // LimitRange rejects a defaultRequest above the default limit; so do we.
    for (size_t i = 0; i < d.request.size(); ++i) {
      const auto& [name, q] = d.request[i];
      for (const auto& [lname, lq] : d.limit) {
        if (lname == name && q > lq) {
          add(request_marks[i], key_path(child(p, "request"), name),
              "default request " + q.to_string() + " is above the default limit " + lq.to_string());
        }
      }
    }
  }

  void read_tenant_limits(const YAML::Node& n, const std::string& p, TenantLimits& limits) {
    auto lm = map(n, p, {"maxGPUsPerContainer", "maxGPUsPerPod"});
    if (!lm) return;
    with(*lm, "maxGPUsPerContainer", [&](const YAML::Node& v, const std::string& vp) {
      limits.max_gpus_per_container = count(v, vp, 0);
    });
    with(*lm, "maxGPUsPerPod", [&](const YAML::Node& v, const std::string& vp) {
      limits.max_gpus_per_pod = count(v, vp, 0);
    });
  }

  // `queue: {name: team-a, require: true}`: the LocalQueue name becomes a label value
  // (kueue.x-k8s.io/queue-name), so it must be both a LocalQueue name (DNS subdomain) and a
  // label value (at most 63 characters).
  std::optional<TenantQueue> read_queue(const YAML::Node& node, const std::string& path) {
    auto m = map(node, path, {"name", "require"});
    if (!m) return std::nullopt;
    TenantQueue q;
    with(*m, "name", [&](const YAML::Node& n, const std::string& p) {
      auto s = nonempty_string(n, p);
      if (s && !is_dns_subdomain(*s, 63)) {
        add(n, p,
            "invalid LocalQueue name " + quote(*s) +
                ": must be a lowercase DNS subdomain of at most 63 characters (it is written as "
                "the kueue.x-k8s.io/queue-name label)");
      } else if (s) {
        q.name = *s;
      }
    });
    with(*m, "require", [&](const YAML::Node& n, const std::string& p) {
      if (auto b = boolean(n, p)) q.require = *b;
    });
    if (node.size() == 0) {  // an unknown key is reported as such
      add(node, path, "set name (the tenant's LocalQueue), require: true, or both");
    }
    return q;
  }

  void read_tenant_priority(const YAML::Node& node, const std::string& path, TenantPriority& tp) {
    auto m = map(node, path, {"default", "byWorkload", "allowed"});
    if (!m) return;
    std::vector<Ref> used;  // default and byWorkload values: must be in `allowed` when it is set
    with(*m, "default", [&](const YAML::Node& n, const std::string& p) {
      if (auto s = nonempty_string(n, p)) {
        tp.default_class = *s;
        used.push_back(Ref{p, n.Mark(), *s});
      }
    });
    with(*m, "byWorkload", [&](const YAML::Node& n, const std::string& p) {
      auto bm = free_map(n, p);
      if (!bm) return;
      for (const Field& f : bm->fields) {
        const std::string wp = key_path(p, f.key);
        if (auto s = nonempty_string(f.value, wp)) {
          tp.by_workload.emplace_back(f.key, *s);
          used.push_back(Ref{wp, f.value.Mark(), *s});
        }
      }
    });
    for (const Ref& r : used) priority_refs_.push_back(r);
    with(*m, "allowed", [&](const YAML::Node& n, const std::string& p) {
      std::vector<Ref> refs = names(n, p);
      std::vector<std::string> allowed;
      for (Ref& r : refs) {
        allowed.push_back(r.name);
        priority_refs_.push_back(std::move(r));
      }
      if (!n.IsSequence()) return;
      for (const Ref& r : used) priority_members_.push_back(MemberRef{r, "allowed", p, allowed});
      tp.allowed = std::move(allowed);
    });
  }

  // A tenant's staged rollout (docs/rollout.md): mode, mutate, per-rule actions.
  void read_tenant_enforcement(const YAML::Node& node, const std::string& path,
                               TenantEnforcement& te) {
    auto m = map(node, path, {"mode", "mutate", "rules"});
    if (!m) return;
    with(*m, "mode", [&](const YAML::Node& n, const std::string& p) {
      if (auto s = nonempty_string(n, p)) {
        if (*s == "audit" || *s == "enforce") {
          te.audit = *s == "audit";
        } else {
          add(n, p, "must be enforce or audit, got " + quote(*s));
        }
      }
    });
    with(*m, "mutate", [&](const YAML::Node& n, const std::string& p) {
      if (auto b = boolean(n, p)) te.mutate = *b;
    });
    with(*m, "rules", [&](const YAML::Node& n, const std::string& p) {
      auto rm = free_map(n, p);
      if (!rm) return;
      for (const Field& f : rm->fields) {
        const std::string rp = key_path(p, f.key);
        if (!is_rule_id(f.key)) {
          add(f.key_node, rp,
              "unknown rule " + quote(f.key) + ": rule ids are GPU001 to GPU0" +
                  std::to_string(kLastRuleNumber));
          continue;
        }
        if (auto a = action(f.value, rp, {"deny", "warn", "off"})) te.rules.emplace_back(f.key, *a);
      }
    });
  }

  void read_enforcement(const YAML::Node& node, const std::string& path) {
    auto m = map(node, path,
                 {"requestsEqualLimits", "nonGpuOnGpuPool", "fragmentation", "rules", "exempt",
                  "gpuVisibility", "mutationFailurePolicy"});
    if (!m) return;
    Enforcement& e = policy_.enforcement;
    with(*m, "requestsEqualLimits", [&](const YAML::Node& n, const std::string& p) {
      if (auto a = action(n, p, {"fix", "deny", "warn"})) e.requests_equal_limits = *a;
    });
    with(*m, "nonGpuOnGpuPool", [&](const YAML::Node& n, const std::string& p) {
      if (auto a = action(n, p, {"deny", "strip", "warn", "off"})) e.non_gpu_on_gpu_pool = *a;
    });
    with(*m, "fragmentation", [&](const YAML::Node& n, const std::string& p) {
      if (auto a = action(n, p, {"deny", "warn", "off"})) e.fragmentation = *a;
    });
    with(*m, "gpuVisibility", [&](const YAML::Node& n, const std::string& p) {
      if (auto a = action(n, p, {"fix", "deny", "warn", "off"})) e.gpu_visibility = *a;
    });
    with(*m, "mutationFailurePolicy", [&](const YAML::Node& n, const std::string& p) {
      if (auto v = one_of(n, p, {"Fail", "Ignore"})) {
        e.mutation_failure_policy = *v == "Fail" ? FailurePolicy::kFail : FailurePolicy::kIgnore;
      }
    });
    with(*m, "rules", [&](const YAML::Node& n, const std::string& p) {
      auto rm = free_map(n, p);
      if (!rm) return;
      for (const Field& f : rm->fields) {
        const std::string rp = key_path(p, f.key);
        if (!is_rule_id(f.key)) {
          add(f.key_node, rp,
              "unknown rule " + quote(f.key) + ": rule ids are GPU001 to GPU0" +
                  std::to_string(kLastRuleNumber));
          continue;
        }
        if (auto a = action(f.value, rp, {"deny", "warn", "off"})) e.rules.emplace_back(f.key, *a);
      }
    });
    with(*m, "exempt", [&](const YAML::Node& n, const std::string& p) {
      auto xm = map(n, p, {"namespaces"});
      if (!xm) return;
      with(*xm, "namespaces", [&](const YAML::Node& v, const std::string& vp) {
        e.exempt_namespaces = patterns(v, vp);
      });
    });
  }

  static bool is_rule_id(std::string_view id) {
    if (id.size() != 6 || id.substr(0, 3) != "GPU" ||
        !std::isdigit(static_cast<unsigned char>(id[3])) ||
        !std::isdigit(static_cast<unsigned char>(id[4])) ||
        !std::isdigit(static_cast<unsigned char>(id[5]))) {
      return false;
    }
    const int n = std::stoi(std::string(id.substr(3)));
    return n >= 1 && n <= kLastRuleNumber;
  }

  // "spec.workers[*].template.spec": keys separated by '.', `*` for any map key, a `[*]`
  // suffix for every list element (SPEC §6).
  static bool is_pod_spec_path(std::string_view path) {
    if (path.empty()) return false;
    size_t start = 0;
    while (start <= path.size()) {
      size_t dot = path.find('.', start);
      std::string_view seg =
          path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
      while (seg.size() >= 3 && seg.substr(seg.size() - 3) == "[*]") seg.remove_suffix(3);
      if (seg.empty() || seg.find_first_of("[]*") != std::string_view::npos) {
        if (seg != "*") return false;
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    return path.back() != '.';
  }

  void read_workloads(const YAML::Node& node, const std::string& path) {
    auto items = list(node, path);
    if (!items) return;
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string wp = index_path(path, i);
      auto m = map((*items)[i], wp, {"apiVersion", "kind", "podSpecs"});
      if (!m) continue;
      WorkloadDecl w;
      if (const Field* f = m->get("apiVersion")) {
        if (auto s = nonempty_string(f->value, child(wp, "apiVersion"))) w.api_version = *s;
      } else {
        missing(*m, "apiVersion");
      }
      if (const Field* f = m->get("kind")) {
        if (auto s = nonempty_string(f->value, child(wp, "kind"))) w.kind = *s;
      } else {
        missing(*m, "kind");
      }
      if (const Field* f = m->get("podSpecs")) {
        const std::string pp = child(wp, "podSpecs");
        if (auto paths = list(f->value, pp)) {
          if (paths->empty()) add(f->value, pp, "must list at least one pod spec path");
          for (size_t j = 0; j < paths->size(); ++j) {
            const std::string ip = index_path(pp, j);
            auto s = string((*paths)[j], ip);
            if (!s) continue;
            if (!is_pod_spec_path(*s)) {
              add((*paths)[j], ip,
                  "invalid pod spec path " + quote(*s) +
                      ": keys separated by '.', '*' for any key, '[*]' for every list element "
                      "(e.g. spec.workers[*].template.spec)");
              continue;
            }
            w.pod_specs.push_back(*s);
          }
        }
      } else {
        missing(*m, "podSpecs");
      }
      policy_.workloads.push_back(std::move(w));
    }
  }

  // ---- cross-field checks ------------------------------------------------------------------

  void check_references() {
    std::set<std::string, std::less<>> classes;
    for (const GpuClass& c : policy_.classes) classes.insert(c.name);
    std::set<std::string, std::less<>> priorities;
    for (const PriorityClassDecl& pc : policy_.priority_classes) priorities.insert(pc.name);
    for (const Ref& r : class_refs_) {
      if (!classes.count(r.name)) add(r.mark, r.path, "unknown class " + quote(r.name));
    }
    for (const Ref& r : priority_refs_) {
      if (!priorities.count(r.name)) add(r.mark, r.path, "unknown priority class " + quote(r.name));
    }
    auto check_members = [&](const std::vector<MemberRef>& members, const auto& known,
                             std::string_view what) {
      for (const MemberRef& m : members) {
        if (!known.count(m.ref.name)) continue;  // already reported as unknown
        if (std::find(m.list.begin(), m.list.end(), m.ref.name) != m.list.end()) continue;
        add(m.ref.mark, m.ref.path,
            std::string(what) + " " + quote(m.ref.name) + " is not in " + m.list_path);
      }
    };
    check_members(class_members_, classes, "class");
    check_members(priority_members_, priorities, "priority class");
    check_device_classes();
  }

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

}  // namespace

PolicyLoadResult load_policy(std::string_view yaml_text, std::string_view file_name) {
  try {
    return Loader(std::string(file_name)).load(yaml_text);
  } catch (const std::exception& e) {
    PolicyLoadResult result;
    result.errors.push_back(
        PolicyError{"", std::string("internal error while loading the policy: ") + e.what(),
                    std::string(file_name), 0, 0});
    return result;
  } catch (...) {
    PolicyLoadResult result;
    result.errors.push_back(
        PolicyError{"", "internal error while loading the policy", std::string(file_name), 0, 0});
    return result;
  }
}

PolicyLoadResult load_policy_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    PolicyLoadResult result;
    result.errors.push_back(
        PolicyError{"", "cannot read the policy file: it is a directory; pass the policy YAML file",
                    path, 0, 0});
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    PolicyLoadResult result;
    result.errors.push_back(PolicyError{
        "", "cannot read the policy file: " + std::string(std::strerror(errno)), path, 0, 0});
    return result;
  }
  // Read at most one byte past the limit: load_policy reports the size without a huge read.
  std::string text;
  text.resize(kMaxInputBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    PolicyLoadResult result;
    result.errors.push_back(PolicyError{"", "cannot read the policy file", path, 0, 0});
    return result;
  }
  return load_policy(text, path);
}

CompiledLoadResult load_compiled_policy(const std::string& path) {
  PolicyLoadResult loaded = path.empty()
                                ? load_policy(default_policy_text(), "<embedded default policy>")
                                : load_policy_file(path);
  CompiledLoadResult result;
  result.errors = std::move(loaded.errors);
  if (result.errors.empty() && loaded.policy) {
    try {
      result.policy = CompiledPolicy::compile(std::move(*loaded.policy));
    } catch (const std::exception& e) {
      result.errors.push_back(
          PolicyError{"", std::string("cannot compile the policy: ") + e.what(), path, 0, 0});
    }
  }
  return result;
}

}  // namespace gpuadmit
