#pragma once
// The ResourceClaims and ResourceClaimTemplates among the manifests lint reads (and `review
// --claims` loads), as the engine's ClaimResolver (engine/claim_resolver.h): a pod's claim
// reference resolves to the object of that kind and name in the pod's namespace, across every
// file given, whatever the order (docs/dra.md). Only claim objects are kept — a few per
// workload — so lint's memory stays independent of the number of other manifests.
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
#include "engine/json.h"

namespace gpuadmit::lint {

class ManifestClaims final : public ClaimResolver {
 public:
  // Objects without metadata.namespace live in `default_namespace` (lint's --namespace).
  explicit ManifestClaims(std::string default_namespace);

  // Keeps the object when it is a ResourceClaim or ResourceClaimTemplate (also inside a List);
  // the first of two with one kind, namespace and name wins, as the second would fail to create.
  void add(const Json& object);
  // Reads a manifest stream and keeps its claim objects. Documents that do not mention
  // "ResourceClaim" are not parsed; unreadable documents are skipped (lint reports them when it
  // lints the file).
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

 private:
  struct Entry {
    Json spec;
    std::string api_version;
  };
  template <typename Stream>
  void add_documents(Stream& stream, bool json_file);
  static std::string key(ClaimKind kind, std::string_view ns, std::string_view name);

  std::string default_namespace_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace gpuadmit::lint
