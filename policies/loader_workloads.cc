// spec.workloads and spec.controllers (policies/policy_reader.h).

#include <algorithm>
#include <cctype>

#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {
namespace {

// An API version written where the group belongs (`v1/Pod`, `v1beta1/Job`): "v" digits, then
// optionally alpha or beta and digits (apimachinery's version naming).
bool is_version(std::string_view s) {
  if (s.size() < 2 || s[0] != 'v' || !std::isdigit(static_cast<unsigned char>(s[1]))) return false;
  size_t i = 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == s.size()) return true;
  const std::string_view rest = s.substr(i);
  for (std::string_view stage : {"alpha", "beta"}) {
    if (rest.size() > stage.size() && rest.substr(0, stage.size()) == stage) {
      const std::string_view n = rest.substr(stage.size());
      return std::all_of(n.begin(), n.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    }
  }
  return false;
}

}  // namespace

void PolicyReader::read_workloads(const YAML::Node& node, const std::string& path) {
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
      read_pod_spec_paths(f->value, child(wp, "podSpecs"), w);
    } else {
      missing(*m, "podSpecs");
    }
    policy_.workloads.push_back(std::move(w));
  }
}

void PolicyReader::read_pod_spec_paths(const YAML::Node& node, const std::string& path,
                                       WorkloadDecl& w) {
  auto paths = list(node, path);
  if (!paths) return;
  if (paths->empty()) add(node, path, "must list at least one pod spec path");
  for (size_t j = 0; j < paths->size(); ++j) {
    const std::string ip = index_path(path, j);
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

bool PolicyReader::is_pod_spec_path(std::string_view path) {
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

void PolicyReader::read_controllers(const YAML::Node& node, const std::string& path) {
  auto items = list(node, path);
  if (!items) return;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string cp = index_path(path, i);
    auto m = map((*items)[i], cp, {"username", "kinds"});
    if (!m) continue;
    ControllerIdentity c;
    if (const Field* f = m->get("username")) {
      if (auto s = nonempty_string(f->value, child(cp, "username"))) c.username = *s;
    } else {
      missing(*m, "username");
    }
    if (const Field* f = m->get("kinds")) {
      read_controller_kinds(f->value, child(cp, "kinds"), c);
    } else {
      missing(*m, "kinds");
    }
    policy_.controllers.push_back(std::move(c));
  }
}

void PolicyReader::read_controller_kinds(const YAML::Node& node, const std::string& path,
                                         ControllerIdentity& c) {
  auto kinds = list(node, path);
  if (!kinds) return;
  if (kinds->empty()) add(node, path, "must list at least one kind (group/Kind)");
  for (size_t j = 0; j < kinds->size(); ++j) {
    const std::string kp = index_path(path, j);
    auto s = nonempty_string((*kinds)[j], kp);
    if (!s) continue;
    const std::optional<GroupKind> gk = parse_group_kind(*s);
    if (!gk) {
      add((*kinds)[j], kp,
          "invalid kind " + quote(*s) +
              ": write group/Kind (kubeflow.org/PyTorchJob), or Kind alone for the core "
              "group (Pod)");
      continue;
    }
    const bool seen = std::any_of(c.kinds.begin(), c.kinds.end(), [&](const GroupKind& k) {
      return k.group == gk->group && k.kind == gk->kind;
    });
    if (seen) {
      add((*kinds)[j], kp, "duplicate kind " + quote(*s));
      continue;
    }
    c.kinds.push_back(*gk);
  }
}

std::optional<GroupKind> PolicyReader::parse_group_kind(std::string_view text) {
  const size_t slash = text.rfind('/');
  const std::string_view group = slash == std::string_view::npos ? "" : text.substr(0, slash);
  const std::string_view kind = slash == std::string_view::npos ? text : text.substr(slash + 1);
  if (slash != std::string_view::npos && (!is_dns_subdomain(group) || is_version(group))) {
    return std::nullopt;
  }
  // Kinds are CamelCase identifiers (apimachinery's naming: the Go type's name).
  if (kind.empty() || kind.size() > 63 || !std::isupper(static_cast<unsigned char>(kind[0]))) {
    return std::nullopt;
  }
  for (char ch : kind) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) return std::nullopt;
  }
  return GroupKind{std::string(group), std::string(kind)};
}

}  // namespace gpuadmit::policy_reader
