#include "lint/manifest_claims.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "engine/dra.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {
namespace {

// The words every kept document holds (add_documents parses only documents that mention one):
// claims, and the Kueue objects GPU034 reads.
constexpr std::string_view kKeptWords[] = {"ResourceClaim", "ResourceFlavor", "LocalQueue"};
constexpr size_t kLongestWord = 14;

bool mentions_kept(std::string_view text) {
  for (std::string_view word : kKeptWords)
    if (text.find(word) != std::string_view::npos) return true;
  return false;
}

bool is_kueue_object(std::string_view api_version, std::string_view kind) {
  return (kind == "ResourceFlavor" || kind == "LocalQueue") &&
         api_version.starts_with("kueue.x-k8s.io/");
}

// Whether the rest of `fd` mentions a kept word (or could not be read: the document pass then
// sees the same error). Most files hold no claim: one scan of their bytes settles them without
// splitting them into documents, which cost ~5% of lint's instructions. Read with the
// descriptor itself: no stdio buffer, no second fstat.
bool mentions_claims(int fd) {
  char buffer[1 << 16];
  size_t kept = 0;  // the previous block's tail: the word may straddle two blocks
  while (true) {
    const ssize_t got = ::read(fd, buffer + kept, sizeof buffer - kept);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return got < 0;
    const size_t n = static_cast<size_t>(got);
    const std::string_view text(buffer, kept + n);
    if (mentions_kept(text)) return true;
    kept = std::min(text.size(), kLongestWord - 1);
    std::memmove(buffer, buffer + text.size() - kept, kept);
  }
}

}  // namespace

ManifestClaims::ManifestClaims(std::string default_namespace)
    : default_namespace_(default_namespace.empty() ? "default" : std::move(default_namespace)) {}

std::string ManifestClaims::key(ClaimKind kind, std::string_view ns, std::string_view name) {
  std::string k(kind == ClaimKind::kTemplate ? "T/" : "C/");
  k += ns;
  k += '/';
  k += name;
  return k;
}

void ManifestClaims::add(const Json& object) {
  if (!object.is_object()) return;
  const std::string_view kind = string_member(object, "kind");
  if (kind.size() >= 4 && kind.substr(kind.size() - 4) == "List") {  // List, PodList, ...
    if (const Json* items = find_member(object, "items"); items != nullptr && items->is_array()) {
      for (const Json& item : *items) add(item);
    }
    return;
  }
  const std::string_view api_version = string_member(object, "apiVersion");
  if (is_kueue_object(api_version, kind)) {
    add_kueue(kind, object);
    return;
  }
  if (!is_claim_object(api_version, kind)) return;
  const Json* spec = claim_spec_of(object, kind, nullptr);
  if (spec == nullptr) return;
  std::string ns;
  std::string name;
  if (const Json* metadata = find_member(object, "metadata")) {
    ns = std::string(string_member(*metadata, "namespace"));
    name = std::string(string_member(*metadata, "name"));
  }
  if (name.empty()) return;  // generateName: nothing can reference it
  if (ns.empty()) ns = default_namespace_;
  const ClaimKind k = kind == "ResourceClaimTemplate" ? ClaimKind::kTemplate : ClaimKind::kClaim;
  entries_.emplace(key(k, ns, name), Entry{*spec, std::string(api_version)});
}

void ManifestClaims::add_kueue(std::string_view kind, const Json& object) {
  std::string ns, name;
  if (const Json* metadata = find_member(object, "metadata")) {
    ns = std::string(string_member(*metadata, "namespace"));
    name = std::string(string_member(*metadata, "name"));
  }
  if (name.empty()) return;
  const Json* spec = find_member(object, "spec");
  if (kind == "ResourceFlavor") {  // cluster-scoped
    const Json* labels = spec != nullptr ? find_member(*spec, "nodeLabels") : nullptr;
    kueue_.flavor_labels.emplace(
        name, labels != nullptr && labels->is_object() ? *labels : Json::object());
    return;
  }
  if (ns.empty()) ns = default_namespace_;
  std::string cluster_queue =
      spec != nullptr ? std::string(string_member(*spec, "clusterQueue")) : std::string();
  if (cluster_queue.empty()) return;
  kueue_.local_queues.emplace(ns + "/" + name,
                              KueueRunObjects::LocalQueue{ns, name, std::move(cluster_queue)});
}

template <typename Stream>
void ManifestClaims::add_documents(Stream& stream, bool json_file) {
  yaml::SourceDocument source;
  while (stream.next(source)) {
    if (!mentions_kept(source.text)) continue;
    yaml::ParsedDocument doc = yaml::parse_document(source, json_file);
    if (doc.empty || doc.error) continue;
    add(doc.value);
  }
}

void ManifestClaims::add_stream(std::FILE* file, bool json_file) {
  yaml::DocumentStream stream(file);
  add_documents(stream, json_file);
}

void ManifestClaims::add_text(std::string_view text, bool json_file) {
  yaml::DocumentStream stream(text);
  add_documents(stream, json_file);
}

bool ManifestClaims::add_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool json_file = path.size() >= 5 && (path.substr(path.size() - 5) == ".json" ||
                                              path.substr(path.size() - 5) == ".JSON");
  // Scanned first only when it can be read again (not a pipe).
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (!mentions_claims(fd) || ::lseek(fd, 0, SEEK_SET) != 0)) {
    ::close(fd);
    return true;
  }
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    ::close(fd);
    return false;
  }
  add_stream(file, json_file);
  std::fclose(file);
  return true;
}

void ManifestClaims::add_files(const std::vector<std::string>& paths, unsigned jobs) {
  if (jobs <= 1 || paths.size() <= 1) {
    for (const std::string& path : paths) add_file(path);
    return;
  }
  std::vector<ManifestClaims> parts(paths.size(), ManifestClaims(default_namespace_));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) parts[i].add_file(paths[i]);
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < std::min<size_t>(jobs, paths.size()); ++j) workers.emplace_back(work);
  for (std::thread& t : workers) t.join();
  for (ManifestClaims& part : parts) {
    for (auto& [key, entry] : part.entries_) entries_.emplace(key, std::move(entry));
    for (auto& [key, labels] : part.kueue_.flavor_labels)
      kueue_.flavor_labels.emplace(key, std::move(labels));
    for (auto& [key, queue] : part.kueue_.local_queues)
      kueue_.local_queues.emplace(key, std::move(queue));
  }
}

ResolvedClaim ManifestClaims::resolve(ClaimKind kind, std::string_view ns,
                                      std::string_view name) const {
  ResolvedClaim r;
  auto it = entries_.find(key(kind, ns, name));
  if (it == entries_.end()) {
    r.status = ClaimLookup::kNotFound;
    r.error = "not among the manifests read";
    return r;
  }
  r.status = ClaimLookup::kFound;
  r.spec = it->second.spec;
  r.api_version = it->second.api_version;
  return r;
}

}  // namespace gpuadmit::lint
