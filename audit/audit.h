#pragma once
// `gpuadmit audit` (docs/audit.md): what already runs, judged by the engine as the webhook would
// judge it now. An export (`kubectl get <kinds> -A -o json|yaml`) is read object by object with
// fleet's reader; each workload (every kind of engine/workload_kinds.h and the policy's own,
// Pods included) goes through the Pipeline as lint sends it (CREATE, mutate=true: its findings
// and whether the mutating webhook would patch it now), each DRA ResourceClaim /
// ResourceClaimTemplate through the claim rules. finish() then folds controller-owned objects
// into their top-level owner in the export (fold_owners) so each is reported once.
//
//   Auditor auditor(policy, pipeline, &claims);
//   auditor.read_file("export.json");
//   AuditResult result = auditor.finish();   // exit code: result.exit_code()

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/finding.h"
#include "engine/json.h"
#include "engine/pipeline.h"
#include "fleet/live_read.h"
#include "fleet/read.h"
#include "lint/manifest_claims.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::audit {

inline constexpr size_t kReportedHere = std::numeric_limits<size_t>::max();

struct AuditFinding {
  std::string rule;  // GPU0xx, PODSPEC, MUTATION
  Severity severity = Severity::kDeny;
  std::string message;
  std::string path;  // dotted JSON path in the object
};

// metadata.ownerReferences' entry with `controller: true` (engine/controllers.h).
struct OwnerRef {
  std::string api_version, kind, name, uid;
};

// One object the audit judged.
struct AuditObject {
  std::string file;
  int line = 0;  // the object's line in the export (its List item's)
  std::string api_version, kind, ns, name, uid;  // ns "": cluster-scoped
  std::optional<OwnerRef> owner;
  bool exempt = false;  // in an exempt namespace (enforcement.exempt): gpuadmit leaves it alone
  bool would_change = false;           // the mutating webhook would patch it now
  std::vector<std::string> mutations;  // which mutations, in the order they apply
  std::vector<AuditFinding> findings;  // in the pipeline's order
  // fold_owners: the index of the object this one is reported at (its top-level owner in the
  // export), or kReportedHere; `folded` counts the objects reported at this one.
  size_t reported_at = kReportedHere;
  size_t folded = 0;
  bool reported() const { return reported_at == kReportedHere; }
};

struct AuditResult {
  std::vector<AuditObject> objects;       // every object judged, in input order
  std::vector<fleet::InputError> errors;  // unreadable inputs and documents
  // Over the reported objects only (a folded object's findings are its owner's).
  size_t reported = 0, folded = 0;
  size_t deny = 0, warn = 0, error = 0, would_change = 0;
  // 2: an input error; 1: a deny- or error-level finding; 0 otherwise (lint's codes).
  int exit_code() const {
    if (!errors.empty()) return 2;
    return (deny > 0 || error > 0) ? 1 : 0;
  }
};

// Controller-owned objects folded into their owners (docs/audit.md "Owners"). An object is
// reported where its controller is reported when all of these hold: its controller's uid is the
// uid of exactly one object of the export, of the same kind, API group, name and namespace;
// every finding of the object (rule and message) is also a finding of that owner; and every
// mutation the webhook would make to it, it would make to the object its owner is reported at.
// ownerReferences are written by whoever creates the object, so a forged owner can fold only an
// object whose findings and drift its claimed owner already reports: it can never hide one.
// Cycles of owners fold nothing. Sets reported_at / folded.
void fold_owners(std::vector<AuditObject>& objects);

class Auditor final : public fleet::ObjectSink {
 public:
  // `claims`: resolves pods' DRA claim references; the audit adds each ResourceClaim and
  // ResourceClaimTemplate it reads, so a claim resolves for the pods after it in the export
  // (`kubectl get resourceclaims,resourceclaimtemplates,...,pods`). Null: none resolve.
  // `pipelined`: objects are judged on a second thread while this one reads the next ones
  // (the reading and the pipeline cost about the same); results, order and output are the same.
  Auditor(PolicyPtr policy, const Pipeline& pipeline, lint::ManifestClaims* claims,
          bool pipelined = false);
  ~Auditor() override;
  Auditor(const Auditor&) = delete;
  Auditor& operator=(const Auditor&) = delete;

  void read_file(const std::string& path);
  void read_stream(std::FILE* file, const std::string& display);
  void read_text(std::string_view text, const std::string& display);
  // A path that names nothing the audit can read.
  void input_error(const std::string& display, const std::string& message);

  // fleet::ObjectSink: an object of the export (a List's items one by one).
  void add(Json object, const std::string& file, int line) override;
  bool whole() const override { return true; }

  // Folds owners and counts. Call once.
  AuditResult finish();

 private:
  struct Item {
    Json object;
    const std::string* file;  // into Queue::files
    int line;
  };
  struct Queue;
  // An object (a List's items expanded) to judge: judged here, or queued for the judging thread.
  void take(Json object, const std::string& file, int line);
  void judge(Json& object, const std::string& file, int line);
  void judge_queued();  // the judging thread's loop
  void stop();          // the judging thread drained and joined

  PolicyPtr policy_;
  const Pipeline& pipeline_;
  lint::ManifestClaims* claims_;
  AuditResult result_;
  std::unique_ptr<Queue> queue_;  // set when pipelined
};

}  // namespace gpuadmit::audit
