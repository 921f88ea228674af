#pragma once
// `gpuadmit lint`: manifests through the same Pipeline as the webhook (mutate=true, CREATE, as the
// mutating webhook's early deny sees them), plus lint's document rules and the namespace GPU
// quota sum. Streams: one document in memory at a time; results go to a Reporter as each file
// is done, fixed documents to a FixWriter in input order.
//
//   Linter linter(policy, pipeline, document_rules, options, reporter, &fix_writer);
//   linter.lint_file("deploy/train.yaml", "deploy/train.yaml");
//   LintSummary summary = linter.finish();   // exit code: summary.exit_code()
//
// lint_files() spreads files over worker threads (`--jobs`) with the same output, in input order.

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/document_rule.h"
#include "engine/finding.h"
#include "engine/json.h"
#include "engine/pipeline.h"
#include "lint/manifest_claims.h"
#include "policies/compiled_policy.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {

// A finding with its place in the input. `rule` is GPU0xx, PARSE (unreadable input; a duplicate
// key is a PARSE warning), or the engine's PODSPEC/PATCH.
struct LintFinding {
  std::string file;
  int line = 0;           // the offending field's line when found, else the document's
  int document_line = 0;  // the first content line of the object's document (or List item)
  std::string api_version, kind, ns, name;
  std::string rule;
  Severity severity = Severity::kDeny;
  std::string message;
  std::string path;              // dotted JSON path in the object
  std::string policy_path = {};  // the policy field that caused it (Finding::policy_path)
};

// One object lint looked at: a workload, a LimitRange/ResourceQuota, a DRA ResourceClaim or
// ResourceClaimTemplate, or an unreadable document.
struct ObjectResult {
  std::string file;
  int line = 0;  // document line
  std::string api_version, kind, ns, name;
  bool is_workload = false;
  bool unreadable = false;    // a PARSE error: the document could not be read
  bool would_change = false;  // the mutating webhook would patch it (`--fix` changes it)
  std::vector<LintFinding> findings;
};

// GPU013's namespace sum (SPEC §5): every workload of a namespace, replicas × per-pod GPUs,
// against its tenant's quota.gpus.
struct NamespaceQuotaResult {
  std::string ns, tenant;
  int64_t quota = 0;
  int64_t total = 0;
  std::vector<std::string> contributors;  // "Deployment train: 2 × 4 GPUs", the largest first
  std::optional<LintFinding> finding;     // set when total > quota and GPU013 is not off
};

struct LintSummary {
  size_t files = 0;
  size_t documents = 0;  // non-empty documents read (a List counts once)
  size_t workloads = 0;  // workload objects (List items counted one by one)
  size_t deny = 0, warn = 0, errors = 0;
  size_t fixable = 0;        // objects the webhook would patch
  bool input_error = false;  // a PARSE error or an unreadable path
  // Files read whole that held no document (only comments and whitespace, or nothing): lint
  // passes them, and says so in a note (cli: on stderr), so an emptied manifest is not silent.
  std::vector<std::string> empty_files;
  // 2: input errors; 1: deny- or error-level findings; 0 otherwise (docs/lint.md).
  int exit_code() const {
    if (input_error) return 2;
    return (deny > 0 || errors > 0) ? 1 : 0;
  }
};

// Receives results as the linter goes. Calls: begin_file, object*, end_file per input, then
// namespace_result* and end once.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin_file(const std::string& /*file*/) {}
  virtual void object(const ObjectResult& result) = 0;
  virtual void end_file(const std::string& /*file*/) {}
  virtual void namespace_result(const NamespaceQuotaResult& /*result*/) {}
  virtual void end(const LintSummary& summary) = 0;
};

// A document as --fix writes it, rendered apart from the writing (so that lint's worker threads
// render and the thread that keeps input order writes). `skip`: nothing to write.
struct FixChunk {
  std::string text;
  bool carries_marker = false;  // the text starts with its own `---` line
  bool skip = false;
};

// Receives every document of every input in order, with its replacement when the webhook would
// mutate it. document() is render() then write(); render() must be safe to call from several
// threads at once (it reads only what begin_file's caller passes).
class FixSink {
 public:
  virtual ~FixSink() = default;
  virtual void begin_file(const std::string& /*file*/, bool /*json_file*/) {}
  virtual FixChunk render(const yaml::SourceDocument& source, const yaml::ParsedDocument& parsed,
                          const Json* replacement, bool json_file) const = 0;
  virtual void write(const FixChunk& chunk) = 0;
  void document(const yaml::SourceDocument& source, const yaml::ParsedDocument& parsed,
                const Json* replacement, bool json_file) {
    write(render(source, parsed, replacement, json_file));
  }
  virtual void end_file() {}
  // Instead of end_file when reading the input failed part-way: its output would be truncated.
  virtual void discard_file() { end_file(); }
};

struct LintOptions {
  std::string default_namespace = "default";  // --namespace: for objects without one
  // Resolves pods' DRA claim references (docs/dra.md). The linter adds every claim object it
  // lints, so a claim earlier in the input resolves even without a pre-pass (stdin); null: none
  // resolve.
  ManifestClaims* claims = nullptr;
};

class Linter {
 public:
  Linter(PolicyPtr policy, const Pipeline& pipeline,
         const std::vector<std::unique_ptr<const DocumentRule>>& document_rules,
         LintOptions options, Reporter& reporter, FixSink* fix);

  // Lints a file; a file that cannot be opened or read is an input error with a PARSE finding.
  // `display`: the name findings carry.
  void lint_file(const std::string& path, const std::string& display);
  // Lints an open stream (stdin).
  void lint_stream(std::FILE* file, const std::string& display, bool json_file);
  // Lints text held in memory (tests, benchmarks).
  void lint_text(std::string_view text, const std::string& display, bool json_file);
  // Lints files on `jobs` threads: each file read and evaluated by a worker, its results
  // reported, its --fix output written and its GPUs counted in input order, so the output is
  // byte for byte lint_file's on each in turn (docs/lint.md "--jobs"). At most a few files per
  // worker wait in memory. jobs <= 1: lint_file on each, on this thread. Claims are only
  // resolved (LintOptions::claims, filled by the pre-pass), never added.
  struct FileInput {
    std::string path, display;
  };
  void lint_files(const std::vector<FileInput>& files, unsigned jobs);
  // A path that names nothing lint can read.
  void input_error(const std::string& display, const std::string& message);

  // Namespace sums, then the reporter's end. Call once.
  LintSummary finish();

 private:
  struct NamespaceUsage {
    const Tenant* tenant = nullptr;
    int64_t total = 0;
    size_t workloads = 0;
    std::vector<std::pair<int64_t, std::string>> contributors;
    std::optional<LintFinding> crossing;  // the object that took the total over the quota
  };

  struct QuotaCall {
    int64_t gpus;
    std::string description, ns;
    LintFinding where;
  };
  struct FileRecord;
  class Recorder;
  class FileQueue;
  // A worker's lint of one file, into `record` (lint_files).
  void record_file(const FileInput& input, FileRecord& record) const;
  // Reports, writes and counts a recorded file as lint_file would have.
  void replay(FileRecord& record);

  void lint_documents(yaml::DocumentStream& stream, const std::string& display, bool json_file);
  // A PARSE error for an input that cannot be read, inside the current file's report.
  void unreadable(const std::string& display, const std::string& message);
  void lint_document(const yaml::SourceDocument& source, const std::string& display,
                     bool json_file);
  struct PendingQuota {
    size_t result;  // index in the document's results
    int64_t gpus;
    std::string description;
    std::string path;
  };
  // One object's lint, before its lines are located in the document's text.
  struct ObjectLint {
    std::optional<ObjectResult> result;  // none: lint does not look at this object
    // Field paths to locate in the text ("items[2].spec..."), each with the index of its finding
    // in `result`, or none for the object itself (a List item).
    std::vector<std::pair<std::string, std::optional<size_t>>> locate;
    std::optional<Json> replacement;    // the mutated object, when the webhook would patch it
    bool replaced_in_place = false;     // ... or the object itself, mutated in place
    std::optional<PendingQuota> quota;  // GPU013's sum; `result` is set by the caller
  };
  // One document's objects, linted: their results, the field paths whose lines are still to be
  // found in the text, and the document as --fix writes it when the webhook would change it.
  struct DocumentLint {
    std::vector<ObjectResult> results;
    std::vector<std::string> paths;
    std::vector<std::pair<size_t, size_t>> refs;  // per path: (result, finding or kNoFinding)
    std::optional<Json> replacement;
    bool replaced_in_place = false;  // the document's object, mutated in place, is the replacement
  };
  // lint_document's steps: a document that cannot be read is one PARSE error; otherwise its
  // objects (a List's items) are linted, its duplicate keys reported, every result and finding
  // given its line, and its workloads counted against their namespaces' quotas.
  void report_unreadable_document(const yaml::SourceDocument& source,
                                  const yaml::ParsedDocument& doc, const std::string& display);
  // A document's own object is evaluated in place (doc.value is lint's to change: no copy of
  // it), a List's items on copies.
  DocumentLint lint_objects(yaml::ParsedDocument& doc, const std::string& display);
  // An object's result joins the document's; returns its mutated object, if any.
  std::optional<Json> add_object(ObjectLint o, DocumentLint& lint);
  void add_duplicate_key_warnings(const yaml::ParsedDocument& doc, const std::string& display,
                                  std::vector<ObjectResult>& results);
  void place_lines(const yaml::SourceDocument& source, const yaml::ParsedDocument& doc,
                   DocumentLint& lint);
  void count_document_quotas(const std::vector<ObjectResult>& results);
  // Lints one object; `locate_prefix`: its path in the document ("" for the document itself).
  // `writable`: `object` itself, which the mutators may then edit in place; null: they edit a copy.
  ObjectLint lint_object(const Json& object, const std::string& display, int line,
                         const std::string& locate_prefix, Json* writable = nullptr);
  // A workload: the pipeline, as the webhook runs it, and the GPUs it counts against its quota.
  void lint_workload(const Json& object, const std::string& locate_prefix, ObjectLint& out,
                     Json* writable);
  std::optional<PendingQuota> workload_quota(const Json& evaluated, const ObjectResult& r);
  // A ResourceClaim / ResourceClaimTemplate: the pipeline's claim rules; kept for resolution.
  void lint_claim(const Json& object, const std::string& locate_prefix, ObjectLint& out);
  // LimitRange, ResourceQuota, ...: the document rules that handle the kind.
  void lint_document_rules(const Json& object, const std::string& locate_prefix, ObjectLint& out);
  // The pipeline's findings as the object's, each located at its path.
  void add_findings(std::vector<Finding>& findings, const std::string& locate_prefix,
                    ObjectLint& out);
  void add_finding(LintFinding lf, const std::string& locate_prefix, ObjectLint& out);
  // GPU013's sum: adds a workload's GPUs to its namespace; `where` locates the finding.
  void count_quota(int64_t gpus, const std::string& description, const std::string& ns,
                   const LintFinding& where);
  void tally(const LintFinding& f);

  PolicyPtr policy_;
  const Pipeline& pipeline_;
  const std::vector<std::unique_ptr<const DocumentRule>>& document_rules_;
  LintOptions options_;
  Reporter& reporter_;
  FixSink* fix_;
  LintSummary summary_;
  std::map<std::string, NamespaceUsage> namespaces_;
  std::vector<Violation> violations_;        // reused
  std::vector<Violation> warnings_;          // reused: DocumentContext::warnings
  std::vector<PendingQuota> pending_quota_;  // of the current document
  // A worker's Linter (record_file): GPU013's counts are logged for replay, not summed, and
  // claims are not added (the main Linter's pre-pass holds them; workers only read).
  std::vector<QuotaCall>* quota_log_ = nullptr;
};

// Every rule id lint can report with its one-line help text and default severity, for SARIF's
// rule table: the pipeline's rules, the document rules, PARSE, PODSPEC and PATCH.
struct RuleInfo {
  std::string id;
  std::string
      name;  // readable identifier (SARIF reportingDescriptor.name): "GpuRequestsEqualLimits"
  std::string summary;
  Severity default_severity = Severity::kDeny;
};
std::vector<RuleInfo> lint_rule_table(
    const Pipeline& pipeline, const std::vector<std::unique_ptr<const DocumentRule>>& rules);

}  // namespace gpuadmit::lint
