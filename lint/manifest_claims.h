#pragma once
// The ResourceClaims and ResourceClaimTemplates among the manifests lint reads (and `review
// --claims` loads), as the engine's ClaimResolver (engine/claim_resolver.h): a pod's claim
// reference resolves to the object of that kind and name in the pod's namespace, across every
// file given, whatever the order (docs/dra.md). Only claim objects are kept — a few per
// workload — so lint's memory stays independent of the number of other manifests.
// It also keeps the Kueue ResourceFlavors and LocalQueues (a few per cluster) that GPU034 judges
// a ClusterQueue against (engine/document_rule.h KueueRunObjects).
//
//   ManifestClaims claims("default");
//   claims.add_file("deploy/");                  // pre-pass: only claim documents are parsed
//   options.claims = &claims;

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/claim_resolver.h"
#include "engine/document_rule.h"
#include "engine/json.h"

namespace gpuadmit::lint {

class ManifestClaims final : public ClaimResolver {
 public:
  // Objects without metadata.namespace live in `default_namespace` (lint's --namespace).
  explicit ManifestClaims(std::string default_namespace);

  // Keeps the object when it is a ResourceClaim or ResourceClaimTemplate, a Kueue ResourceFlavor
  // or LocalQueue (also inside a List); the first of two with one kind, namespace and name wins,
  // as the second would fail to create.
  void add(const Json& object);
  // Reads a manifest stream and keeps its claim and Kueue objects. Documents that mention none of
  // "ResourceClaim", "ResourceFlavor" and "LocalQueue" are not parsed; unreadable documents are
  // skipped (lint reports them when it lints the file).
  void add_stream(std::FILE* file, bool json_file);
  void add_text(std::string_view text, bool json_file);
  // A file; false when it cannot be opened. A regular file whose bytes do not mention
  // "ResourceClaim" is scanned once, not split into documents.
  bool add_file(const std::string& path);
  // The files read on `jobs` threads, each into claims of its own, then kept in the files' order:
  // the same claims as add_file on each in turn (the first of two with one key wins).
  void add_files(const std::vector<std::string>& paths, unsigned jobs);

  ResolvedClaim resolve(ClaimKind kind, std::string_view ns, std::string_view name) const override;
  size_t size() const { return entries_.size(); }
  const KueueRunObjects& kueue() const { return kueue_; }

 private:
  struct Entry {
    Json spec;
    std::string api_version;
  };
  template <typename Stream>
  void add_documents(Stream& stream, bool json_file);
  void add_kueue(std::string_view kind, const Json& object);
  static std::string key(ClaimKind kind, std::string_view ns, std::string_view name);

  std::string default_namespace_;
  std::map<std::string, Entry, std::less<>> entries_;
  KueueRunObjects kueue_;
};

}  // namespace gpuadmit::lint
