// spec.workloads (policies/policy_reader.h).

#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {

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

}  // namespace gpuadmit::policy_reader
