// The GPUPolicy loader's entry points, and the walk of the document itself (apiVersion, kind,
// metadata, spec) and the cross-field checks; the sections of spec are read in loader_*.cc
// (policies/policy_reader.h).

#include "policies/loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "policies/policy_reader.h"
#include "yaml/yaml_cpp_scan.h"

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

namespace policy_reader {

PolicyLoadResult PolicyReader::load(std::string_view text) {
  PolicyLoadResult result;
  if (text.size() > kMaxInputBytes) {
    add(YAML::Mark::null_mark(), "",
        "the policy is larger than " + std::to_string(kMaxInputBytes / (1024 * 1024)) +
            " MiB; a GPUPolicy is a few hundred lines, check that this is the right file");
    result.errors = std::move(errors_);
    return result;
  }
  // Scanned before it is loaded: yaml-cpp 0.7's LoadAll never returns on some inputs
  // (yaml/yaml_cpp_scan.h).
  const yaml::YamlScan scan = yaml::scan_yaml_documents(text, {kMaxDocuments, kMaxNodes});
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
      doc = yaml::load_yaml_document(text, scan.first_content);
    } catch (const YAML::Exception& e) {
      add(e.mark, "", "invalid YAML: " + e.msg);
    }
    if (errors_.empty()) {
      read_policy(doc);
      check_references();
    }
  }
  std::stable_sort(errors_.begin(), errors_.end(), [](const PolicyError& a, const PolicyError& b) {
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

void PolicyReader::read_policy(const YAML::Node& root) {
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

void PolicyReader::read_metadata(const YAML::Node& node) {
  auto m = map(node, "metadata", {"name", "labels", "annotations"});
  if (!m) return;
  if (const Field* f = m->get("name")) {
    if (auto s = nonempty_string(f->value, "metadata.name")) policy_.name = *s;
  } else {
    missing(*m, "name");
  }
  // Accepted (the policy may be kept as a Kubernetes-style object) and otherwise unused, but for
  // the annotation gpuadmit.io/generation.
  for (std::string_view key : {"labels", "annotations"}) {
    with(*m, key, [&](const YAML::Node& n, const std::string& p) {
      if (auto kv = free_map(n, p)) {
        for (const Field& f : kv->fields) {
          const std::string path = key_path(p, f.key);
          auto value = string(f.value, path);
          if (value && key == "annotations" && f.key == kGenerationAnnotation) {
            read_generation(f.value, path, *value);
          }
        }
      }
    });
  }
}

// An annotation's value is a string ("7", as Kubernetes stores annotations): a whole number.
void PolicyReader::read_generation(const YAML::Node& node, const std::string& path,
                                   const std::string& text) {
  std::uint64_t generation = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), generation);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    add(node, path, "must be a whole number (a string such as \"7\"), not " + quote(text));
    return;
  }
  policy_.generation = generation;
}

void PolicyReader::read_spec(const YAML::Node& node, const std::string& path) {
  auto m = map(node, path,
               {"gpuResources", "classes", "priorityClasses", "tenants", "enforcement", "workloads",
                "controllers", "nvidiaRuntimeClasses", "cudaImages"});
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
  with(*m, "cudaImages",
       [&](const YAML::Node& n, const std::string& p) { read_cuda_images(n, p); });
  with(*m, "priorityClasses",
       [&](const YAML::Node& n, const std::string& p) { read_priority_classes(n, p); });
  with(*m, "tenants", [&](const YAML::Node& n, const std::string& p) { read_tenants(n, p); });
  with(*m, "enforcement",
       [&](const YAML::Node& n, const std::string& p) { read_enforcement(n, p); });
  with(*m, "workloads", [&](const YAML::Node& n, const std::string& p) { read_workloads(n, p); });
  with(*m, "controllers",
       [&](const YAML::Node& n, const std::string& p) { read_controllers(n, p); });
  with(*m, "nvidiaRuntimeClasses",
       [&](const YAML::Node& n, const std::string& p) { read_nvidia_runtime_classes(n, p); });
}

void PolicyReader::check_references() {
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

}  // namespace policy_reader

PolicyLoadResult load_policy(std::string_view yaml_text, std::string_view file_name) {
  try {
    return policy_reader::PolicyReader(std::string(file_name)).load(yaml_text);
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
  text.resize(policy_reader::kMaxInputBytes + 1);
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
