#include "lint/linter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>

#include "engine/controllers.h"
#include "engine/dra.h"
#include "engine/pod_view.h"
#include "engine/resources.h"
#include "engine/saturating.h"
#include "engine/workload.h"
#include "engine/workload_kinds.h"

namespace gpuadmit::lint {
namespace {

constexpr size_t kNoFinding = std::numeric_limits<size_t>::max();
constexpr size_t kMaxContributors = 5;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_json_name(std::string_view path) {
  if (path.size() < 5) return false;
  std::string ext(path.substr(path.size() - 5));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".json";
}

// kubectl expands v1 List and typed lists (PodList, ...) into their items.
bool is_list(const Json& object) {
  if (!ends_with(string_member(object, "kind"), "List")) return false;
  const Json* items = find_member(object, "items");
  return items != nullptr && items->is_array();
}

LintFinding finding_base(const ObjectResult& r) {
  LintFinding f;
  f.file = r.file;
  f.api_version = r.api_version;
  f.kind = r.kind;
  f.ns = r.ns;
  f.name = r.name;
  return f;
}

// Regular files up to this size are read whole, in one read: their documents are then spans
// of one buffer, copied once each rather than line by line from a stream's chunks. Larger files
// (and pipes) stream, so memory stays bounded by the largest document.
constexpr off_t kWholeFileBytes = 1 << 20;

// The whole of `fd` when it is a small regular file read without error; false otherwise, with
// the file back at its start for streaming (which then reports any read error). Read with the
// descriptor itself: one read when it holds the size fstat gave (no stdio buffer, no second
// fstat, no read of the end).
bool read_small_file(int fd, std::string& text) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kWholeFileBytes) {
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  text.resize(size + 1);  // one byte more: a file that grew shows
  size_t n = 0;
  while (n < text.size()) {
    const ssize_t got = ::read(fd, text.data() + n, text.size() - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ::lseek(fd, 0, SEEK_SET);
      return false;
    }
    if (got == 0) break;
    n += static_cast<size_t>(got);
    if (n == size) break;  // all fstat counted (a first read of one byte more shows growth)
  }
  if (n == text.size()) {
    ::lseek(fd, 0, SEEK_SET);
    return false;
  }
  text.resize(n);
  return true;
}

}  // namespace

Linter::Linter(PolicyPtr policy, const Pipeline& pipeline,
               const std::vector<std::unique_ptr<const DocumentRule>>& document_rules,
               LintOptions options, Reporter& reporter, FixSink* fix)
    : policy_(std::move(policy)),
      pipeline_(pipeline),
      document_rules_(document_rules),
      options_(std::move(options)),
      reporter_(reporter),
      fix_(fix) {
  if (options_.default_namespace.empty()) options_.default_namespace = "default";
}

void Linter::tally(const LintFinding& f) {
  switch (f.severity) {
    case Severity::kDeny:
      ++summary_.deny;
      break;
    case Severity::kWarn:
      ++summary_.warn;
      break;
    case Severity::kError:
      ++summary_.errors;
      break;
  }
}

void Linter::input_error(const std::string& display, const std::string& message) {
  ++summary_.files;
  reporter_.begin_file(display);
  unreadable(display, message);
  reporter_.end_file(display);
}

void Linter::unreadable(const std::string& display, const std::string& message) {
  summary_.input_error = true;
  ObjectResult r;
  r.file = display;
  r.line = 1;
  r.unreadable = true;
  LintFinding f = finding_base(r);
  f.line = f.document_line = 1;
  f.rule = "PARSE";
  f.severity = Severity::kError;
  f.message = message;
  tally(f);
  r.findings.push_back(std::move(f));
  reporter_.object(r);
}

void Linter::lint_file(const std::string& path, const std::string& display) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::FILE* file = nullptr;
  std::string text;
  if (fd >= 0 && read_small_file(fd, text)) {
    ::close(fd);
    lint_text(text, display, is_json_name(path));
    return;
  }
  if (fd >= 0) file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    input_error(display,
                std::string("cannot open the file: ") + std::strerror(error) + "; check the path");
    return;
  }
  lint_stream(file, display, is_json_name(path));
  std::fclose(file);
}

void Linter::lint_stream(std::FILE* file, const std::string& display, bool json_file) {
  yaml::DocumentStream stream(file);
  lint_documents(stream, display, json_file);
}

void Linter::lint_text(std::string_view text, const std::string& display, bool json_file) {
  yaml::DocumentStream stream(text);
  lint_documents(stream, display, json_file);
}

// --jobs: what a worker's lint of one file sent to its reporter, its fix sink and GPU013.
struct Linter::FileRecord {
  bool done = false;  // guarded by lint_files' mutex
  std::vector<ObjectResult> objects;
  bool fix_began = false, fix_discarded = false, fix_ended = false;
  std::vector<FixChunk> chunks;
  std::vector<QuotaCall> quotas;
  LintSummary summary;
};

// A worker's reporter and fix sink: keeps what it is given; --fix documents are rendered here,
// on the worker, by the real sink's render().
class Linter::Recorder final : public Reporter, public FixSink {
 public:
  Recorder(FileRecord& record, const FixSink* renderer) : record_(record), renderer_(renderer) {}
  void object(const ObjectResult& result) override { record_.objects.push_back(result); }
  void end(const LintSummary& /*summary*/) override {}
  void begin_file(const std::string& /*file*/, bool /*json_file*/) override {
    record_.fix_began = true;
  }
  FixChunk render(const yaml::SourceDocument& source, const yaml::ParsedDocument& parsed,
                  const Json* replacement, bool json_file) const override {
    return renderer_->render(source, parsed, replacement, json_file);
  }
  void write(const FixChunk& chunk) override { record_.chunks.push_back(chunk); }
  void end_file() override { record_.fix_ended = true; }
  void discard_file() override { record_.fix_discarded = true; }

 private:
  FileRecord& record_;
  const FixSink* renderer_;
};

void Linter::record_file(const FileInput& input, FileRecord& record) const {
  Recorder recorder(record, fix_);
  Linter worker(policy_, pipeline_, document_rules_, options_, recorder,
                fix_ != nullptr ? &recorder : nullptr);
  worker.quota_log_ = &record.quotas;
  worker.lint_file(input.path, input.display);
  record.summary = std::move(worker.summary_);
}

void Linter::replay(FileRecord& record) {
  // The order lint_file calls them in; the reporter and the fix sink write to different places.
  for (const ObjectResult& r : record.objects) reporter_.object(r);
  if (fix_ != nullptr) {
    for (const FixChunk& chunk : record.chunks) fix_->write(chunk);
    if (record.fix_discarded) {
      fix_->discard_file();
    } else if (record.fix_ended) {
      fix_->end_file();
    }
  }
  for (const QuotaCall& q : record.quotas) count_quota(q.gpus, q.description, q.ns, q.where);
  const LintSummary& s = record.summary;
  summary_.files += s.files;
  summary_.documents += s.documents;
  summary_.workloads += s.workloads;
  summary_.deny += s.deny;
  summary_.warn += s.warn;
  summary_.errors += s.errors;
  summary_.fixable += s.fixable;
  summary_.input_error = summary_.input_error || s.input_error;
  summary_.empty_files.insert(summary_.empty_files.end(), s.empty_files.begin(),
                              s.empty_files.end());
}

// --jobs: the files in order, shared by the workers and the reporting thread. Workers run at
// most `window` files ahead of the one being reported, so memory stays bounded: file i's record
// is slot i % window, free again once file i - window is reported. Two signals, each sent only
// to whom waits for it (a context switch per file costs as much as linting a small one):
// `done_`, the file being reported is recorded; `room_`, a slot is free.
class Linter::FileQueue {
 public:
  FileQueue(const Linter& linter, const std::vector<FileInput>& files, unsigned jobs)
      : linter_(linter), files_(files), window_(size_t{jobs} * 4), records_(window_) {}

  // A worker: lints files until none is left.
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      std::optional<size_t> i = claim();
      while (!i && next_ < files_.size()) {
        ++waiting_for_room_;
        room_.wait(lock);
        --waiting_for_room_;
        i = claim();
      }
      if (!i) return;
      lint_one(lock, *i);
    }
  }

  // The reporting thread: file i's record, once recorded. Rather than sleep until a worker has
  // it, this thread lints the next file waiting (perhaps file i) itself.
  FileRecord& record_of(size_t i) {
    FileRecord& record = records_[i % window_];
    std::unique_lock lock(mutex_);
    while (!record.done) {
      if (const std::optional<size_t> mine = claim()) {
        lint_one(lock, *mine);
      } else {
        done_.wait(lock);
      }
    }
    return record;
  }

  // File i is reported: its slot is free for file i + window.
  void reported(size_t i) {
    records_[i % window_] = FileRecord{};
    std::lock_guard lock(mutex_);
    reported_ = i + 1;
    if (waiting_for_room_ > 0) room_.notify_one();
  }

 private:
  // The next file to lint, when there is one and room for its record (under the lock).
  std::optional<size_t> claim() {
    if (next_ >= files_.size() || next_ >= reported_ + window_) return std::nullopt;
    return next_++;
  }

  void lint_one(std::unique_lock<std::mutex>& lock, size_t i) {
    lock.unlock();
    linter_.record_file(files_[i], records_[i % window_]);
    lock.lock();
    records_[i % window_].done = true;
    if (i == reported_) done_.notify_one();
  }

  const Linter& linter_;
  const std::vector<FileInput>& files_;
  const size_t window_;
  std::vector<FileRecord> records_;
  std::mutex mutex_;
  std::condition_variable done_, room_;
  size_t next_ = 0, reported_ = 0, waiting_for_room_ = 0;
};

void Linter::lint_files(const std::vector<FileInput>& files, unsigned jobs) {
  if (jobs <= 1 || files.size() <= 1) {
    for (const FileInput& f : files) lint_file(f.path, f.display);
    return;
  }
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, files.size()));
  FileQueue queue(*this, files, jobs);
  // jobs - 1 workers; this thread is the last one, and reports in input order.
  std::vector<std::thread> workers;
  for (unsigned j = 1; j < jobs; ++j) workers.emplace_back([&queue] { queue.work(); });
  for (size_t i = 0; i < files.size(); ++i) {
    FileRecord& record = queue.record_of(i);
    // Begin and end as lint_file: the reporter's file events around the recorded objects.
    reporter_.begin_file(files[i].display);
    if (fix_ != nullptr && record.fix_began) {
      fix_->begin_file(files[i].display, is_json_name(files[i].path));
    }
    replay(record);
    reporter_.end_file(files[i].display);
    queue.reported(i);
  }
  for (std::thread& t : workers) t.join();
}

void Linter::lint_documents(yaml::DocumentStream& stream, const std::string& display,
                            bool json_file) {
  ++summary_.files;
  reporter_.begin_file(display);
  if (fix_ != nullptr) fix_->begin_file(display, json_file);
  yaml::SourceDocument source;
  const size_t documents_before = summary_.documents;
  while (stream.next(source)) lint_document(source, display, json_file);
  if (!stream.read_error() && summary_.documents == documents_before) {
    summary_.empty_files.push_back(display);
  }
  if (stream.read_error()) {
    unreadable(display, std::string("reading the input failed: ") +
                            std::strerror(stream.read_errno()) + "; check the file");
    if (fix_ != nullptr) fix_->discard_file();
  } else if (fix_ != nullptr) {
    fix_->end_file();
  }
  reporter_.end_file(display);
}

void Linter::lint_document(const yaml::SourceDocument& source, const std::string& display,
                           bool json_file) {
  yaml::ParsedDocument doc = yaml::parse_document(source, json_file);
  if (doc.empty) {
    if (fix_ != nullptr) fix_->document(source, doc, nullptr, json_file);
    return;
  }
  ++summary_.documents;
  if (doc.error) {
    report_unreadable_document(source, doc, display);
    return;
  }
  DocumentLint lint = lint_objects(doc, display);
  add_duplicate_key_warnings(doc, display, lint.results);
  place_lines(source, doc, lint);
  count_document_quotas(lint.results);
  for (const ObjectResult& r : lint.results) reporter_.object(r);
  if (fix_ != nullptr) {
    const Json* replacement = lint.replacement         ? &*lint.replacement
                              : lint.replaced_in_place ? &doc.value
                                                       : nullptr;
    fix_->document(source, doc, replacement, json_file);
  }
  // Children first is cheaper than the destructors (engine/json.h).
  if (lint.replacement) free_json(*lint.replacement);
  free_json(doc.value);
}

void Linter::report_unreadable_document(const yaml::SourceDocument& source,
                                        const yaml::ParsedDocument& doc,
                                        const std::string& display) {
  summary_.input_error = true;
  ObjectResult r;
  r.file = display;
  r.line = doc.error->line;
  r.unreadable = true;
  LintFinding f = finding_base(r);
  f.line = doc.error->line;
  f.document_line = doc.line;
  f.rule = "PARSE";
  f.severity = Severity::kError;
  f.message = "cannot read this document: " + doc.error->message;
  if (doc.error->column > 0) {
    f.message += " (line " + std::to_string(doc.error->line) + ", column " +
                 std::to_string(doc.error->column) + ")";
  }
  f.message += "; fix the syntax (the other documents are still linted)";
  tally(f);
  r.findings.push_back(std::move(f));
  reporter_.object(r);
  // json_file only matters for a replacement.
  if (fix_ != nullptr) fix_->document(source, doc, nullptr, /*json_file=*/false);
}

Linter::DocumentLint Linter::lint_objects(yaml::ParsedDocument& doc, const std::string& display) {
  DocumentLint lint;
  pending_quota_.clear();
  const Json& value = doc.value;
  if (value.is_object() && is_list(value)) {
    const Json& items = value["items"];
    for (size_t i = 0; i < items.size(); ++i) {
      std::optional<Json> mutated = add_object(
          lint_object(items[i], display, doc.line, "items[" + std::to_string(i) + "]"), lint);
      if (mutated) {
        if (!lint.replacement) lint.replacement = value;
        (*lint.replacement)["items"][i] = std::move(*mutated);
      }
    }
  } else if (value.is_object()) {
    ObjectLint o = lint_object(value, display, doc.line, "", &doc.value);
    lint.replaced_in_place = o.replaced_in_place;
    lint.replacement = add_object(std::move(o), lint);
  }
  return lint;
}

std::optional<Json> Linter::add_object(ObjectLint o, DocumentLint& lint) {
  if (!o.result) return std::nullopt;
  const size_t index = lint.results.size();
  for (auto& [path, finding] : o.locate) {
    lint.paths.push_back(std::move(path));
    lint.refs.emplace_back(index, finding.value_or(kNoFinding));
  }
  if (o.quota) {
    o.quota->result = index;
    pending_quota_.push_back(std::move(*o.quota));
  }
  lint.results.push_back(std::move(*o.result));
  return std::move(o.replacement);
}

// Duplicate-key warnings belong to the document: to its object when it is one, else to a result
// of their own (a List, or a document lint does not otherwise look at).
void Linter::add_duplicate_key_warnings(const yaml::ParsedDocument& doc, const std::string& display,
                                        std::vector<ObjectResult>& results) {
  if (doc.warnings.empty()) return;
  size_t warning_result = 0;
  if (results.size() != 1) {
    ObjectResult r;
    r.file = display;
    r.line = doc.line;
    if (doc.value.is_object()) {
      r.api_version = std::string(string_member(doc.value, "apiVersion"));
      r.kind = std::string(string_member(doc.value, "kind"));
      r.name = object_name(doc.value);
    }
    warning_result = results.size();
    results.push_back(std::move(r));
  }
  for (const yaml::ParseIssue& w : doc.warnings) {
    ObjectResult& r = results[warning_result];
    LintFinding f = finding_base(r);
    f.line = w.line;
    f.rule = "PARSE";
    f.severity = Severity::kWarn;
    f.message = w.message;
    tally(f);
    r.findings.push_back(std::move(f));
  }
}

// Lines: each List item's, then each finding's field (one extra pass over the text, only for
// documents with findings).
void Linter::place_lines(const yaml::SourceDocument& source, const yaml::ParsedDocument& doc,
                         DocumentLint& lint) {
  std::vector<int> lines;
  if (!lint.paths.empty()) lines = yaml::locate_paths(source, doc, lint.paths);
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto [result, finding] = lint.refs[k];
    if (finding == kNoFinding && lines[k] > 0) lint.results[result].line = lines[k];
  }
  for (ObjectResult& r : lint.results) {
    if (r.line == 0) r.line = doc.line;
    for (LintFinding& f : r.findings) {
      f.document_line = r.line;
      if (f.line == 0) f.line = r.line;
    }
  }
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto [result, finding] = lint.refs[k];
    if (finding != kNoFinding && lines[k] > 0)
      lint.results[result].findings[finding].line = lines[k];
  }
}

void Linter::count_document_quotas(const std::vector<ObjectResult>& results) {
  for (const PendingQuota& q : pending_quota_) {
    const ObjectResult& r = results[q.result];
    LintFinding where = finding_base(r);
    where.line = where.document_line = r.line;
    where.path = q.path;
    count_quota(q.gpus, q.description, r.ns, where);
  }
}

Linter::ObjectLint Linter::lint_object(const Json& object, const std::string& display, int line,
                                       const std::string& locate_prefix, Json* writable) {
  ObjectLint out;
  if (!object.is_object()) return out;
  ObjectResult& r = out.result.emplace();
  r.file = display;
  r.api_version = std::string(string_member(object, "apiVersion"));
  r.kind = std::string(string_member(object, "kind"));
  r.name = object_name(object);
  if (const Json* metadata = find_member(object, "metadata")) {
    r.ns = std::string(string_member(*metadata, "namespace"));
  }
  if (r.ns.empty()) r.ns = options_.default_namespace;
  r.line = locate_prefix.empty() ? line : 0;

  // Standard input has no pre-pass: its Kueue objects count for the ClusterQueues after them.
  if (options_.claims != nullptr && quota_log_ == nullptr &&
      (r.kind == "ResourceFlavor" || r.kind == "LocalQueue")) {
    options_.claims->add(object);
  }
  if (is_claim_object(r.api_version, r.kind)) {
    lint_claim(object, locate_prefix, out);
  } else if (is_workload_kind(r.api_version, r.kind, *policy_) ||
             queued_without_pod_specs(r.api_version, r.kind)) {
    lint_workload(object, locate_prefix, out, writable);
  } else {
    lint_document_rules(object, locate_prefix, out);
  }
  return out;
}

void Linter::lint_workload(const Json& object, const std::string& locate_prefix, ObjectLint& out,
                           Json* writable) {
  ObjectResult& r = *out.result;
  EvaluateOptions options;
  options.claims = options_.claims;
  options.ns = r.ns;
  options.operation = Operation::kCreate;
  options.mutate = true;
  // As the webhook: a controller's copy (ownerReferences) is judged, never fixed
  // (engine/controllers.h, docs/decisions.md "Controllers converge").
  options.judge_only = template_treatment(object, Operation::kCreate, TemplateMode::kMutate) ==
                       TemplateTreatment::kJudge;
  options.patch = false;           // lint needs the mutated object, not the webhook's JSON Patch
  options.copy_unchanged = false;  // ... and only when the mutators edited a copy
  // A mutator that fails is an error finding, even where the webhook would admit (Ignore).
  options.apply_mutation_failure_policy = false;
  // In place when the object is lint's own and its edits are kept: the mutators write into it,
  // and the pipeline copies only what they may write (engine/mutation_skeleton.h), not the
  // whole object. A judged-only object is evaluated on a copy: its edits must not stay.
  const bool in_place = writable != nullptr && !options.judge_only;
  Evaluation e = in_place ? pipeline_.evaluate_in_place(*writable, options, *policy_)
                          : pipeline_.evaluate(object, options, *policy_);
  // The object as the mutators left it (in place: `object` itself; a failed mutation is undone).
  const Json& evaluated = in_place || e.mutated.is_null() ? object : e.mutated;
  // An exempt namespace returns before the pod specs are looked for.
  r.is_workload = e.is_workload || (e.exempt && !find_pod_specs(object, *policy_).empty());
  if (!r.is_workload) {
    out.result.reset();
    return;
  }
  ++summary_.workloads;
  if (!locate_prefix.empty()) out.locate.emplace_back(locate_prefix, std::nullopt);
  add_findings(e.findings, locate_prefix, out);
  if (!e.exempt) out.quota = workload_quota(evaluated, r);
  if (e.changed()) {
    r.would_change = true;
    ++summary_.fixable;
    if (in_place) {
      out.replaced_in_place = true;
    } else {
      out.replacement = std::move(e.mutated);
    }
  }
}

std::optional<Linter::PendingQuota> Linter::workload_quota(const Json& evaluated,
                                                           const ObjectResult& r) {
  const Tenant* tenant = policy_->tenant_for(r.ns);
  if (tenant == nullptr || !tenant->quota_gpus) return std::nullopt;
  int64_t gpus = 0;
  std::string description, path;
  for (const PodSpecLocation& location : find_pod_specs(evaluated, *policy_)) {
    auto made = PodView::make(evaluated, location);
    if (!made) continue;
    const PodView& pod = *made;
    // DRA claims count like extended resources (each claim once per pod).
    const int64_t per_pod =
        saturating_add(effective_pod_gpus(pod, *policy_),
                       resolve_pod_claims(pod, *policy_, options_.claims, r.ns).pod_units);
    if (per_pod <= 0) continue;
    gpus = saturating_add(gpus, saturating_mul(location.replicas, per_pod));
    if (!description.empty()) description += " + ";
    description += std::to_string(location.replicas) + " × " + std::to_string(per_pod);
    if (path.empty()) path = location.path;
  }
  if (gpus <= 0) return std::nullopt;
  return PendingQuota{0, gpus, r.kind + " " + r.name + ": " + description + " GPUs", path};
}

void Linter::lint_document_rules(const Json& object, const std::string& locate_prefix,
                                 ObjectLint& out) {
  ObjectResult& r = *out.result;
  bool checked = false;
  for (const auto& rule : document_rules_) {
    if (!rule->handles(r.api_version, r.kind)) continue;
    checked = true;
    const Action action = policy_->action_for(rule->id(), rule->default_action());
    if (action == Action::kOff) continue;
    violations_.clear();
    warnings_.clear();
    DocumentContext ctx;
    ctx.policy = policy_.get();
    ctx.ns = r.ns;
    ctx.kueue = options_.claims != nullptr ? &options_.claims->kueue() : nullptr;
    ctx.warnings = &warnings_;
    rule->check(object, ctx, violations_);
    for (auto* list : {&violations_, &warnings_}) {
      for (Violation& v : *list) {
        LintFinding lf = finding_base(r);
        lf.rule = std::string(rule->id());
        lf.severity = list == &warnings_ ? Severity::kWarn : severity_for(action);
        lf.message = std::move(v.message);
        lf.path = std::move(v.path);
        add_finding(std::move(lf), locate_prefix, out);
      }
    }
  }
  if (!checked) {
    out.result.reset();
    return;
  }
  if (!locate_prefix.empty()) out.locate.emplace_back(locate_prefix, std::nullopt);
}

void Linter::lint_claim(const Json& object, const std::string& locate_prefix, ObjectLint& out) {
  if (options_.claims != nullptr && quota_log_ == nullptr) options_.claims->add(object);
  EvaluateOptions options;
  options.ns = out.result->ns;
  options.mutate = false;
  options.patch = false;
  options.copy_unchanged = false;
  Evaluation e = pipeline_.evaluate(object, options, *policy_);
  if (!locate_prefix.empty()) out.locate.emplace_back(locate_prefix, std::nullopt);
  add_findings(e.findings, locate_prefix, out);
}

void Linter::add_findings(std::vector<Finding>& findings, const std::string& locate_prefix,
                          ObjectLint& out) {
  for (Finding& f : findings) {
    LintFinding lf = finding_base(*out.result);
    lf.rule = std::move(f.rule);
    lf.severity = f.severity;
    lf.message = std::move(f.message);
    lf.path = std::move(f.path);
    lf.policy_path = std::move(f.policy_path);
    add_finding(std::move(lf), locate_prefix, out);
  }
}

void Linter::add_finding(LintFinding lf, const std::string& locate_prefix, ObjectLint& out) {
  tally(lf);
  std::vector<LintFinding>& findings = out.result->findings;
  if (!lf.path.empty()) {
    out.locate.emplace_back(locate_prefix.empty() ? lf.path : locate_prefix + "." + lf.path,
                            findings.size());
  }
  findings.push_back(std::move(lf));
}

void Linter::count_quota(int64_t gpus, const std::string& description, const std::string& ns,
                         const LintFinding& where) {
  if (quota_log_ != nullptr) {
    quota_log_->push_back(QuotaCall{gpus, description, ns, where});
    return;
  }
  NamespaceUsage& usage = namespaces_[ns];
  usage.tenant = policy_->tenant_for(ns);
  if (usage.tenant == nullptr || !usage.tenant->quota_gpus) return;
  const int64_t quota = *usage.tenant->quota_gpus;
  const int64_t before = usage.total;
  usage.total = saturating_add(usage.total, gpus);
  ++usage.workloads;
  // Memory stays bounded: only the largest contributors are kept for the message.
  usage.contributors.emplace_back(gpus, description);
  std::stable_sort(usage.contributors.begin(), usage.contributors.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (usage.contributors.size() > kMaxContributors) usage.contributors.resize(kMaxContributors);
  if (before <= quota && usage.total > quota && !usage.crossing) usage.crossing = where;
}

LintSummary Linter::finish() {
  for (auto& [ns, usage] : namespaces_) {
    if (usage.tenant == nullptr || !usage.tenant->quota_gpus) continue;
    NamespaceQuotaResult result;
    result.ns = ns;
    result.tenant = usage.tenant->name;
    result.quota = *usage.tenant->quota_gpus;
    result.total = usage.total;
    for (const auto& c : usage.contributors) result.contributors.push_back(c.second);
    const Action action = policy_->action_for(usage.tenant, "GPU013", Action::kDeny);
    if (usage.total > result.quota && usage.crossing && action != Action::kOff) {
      LintFinding f = *usage.crossing;
      f.rule = "GPU013";
      // A tenant in audit mode is warned (docs/rollout.md).
      f.severity = usage.tenant->enforcement.audit ? Severity::kWarn : severity_for(action);
      std::string list;
      for (const std::string& c : result.contributors) {
        if (!list.empty()) list += "; ";
        list += c;
      }
      if (usage.workloads > result.contributors.size()) {
        list += "; and " + std::to_string(usage.workloads - result.contributors.size()) + " more";
      }
      f.message = "namespace " + ns + ": its workloads in this run ask for " +
                  std::to_string(usage.total) + " GPUs (replicas × GPUs per pod: " + list +
                  "), more than tenant " + result.tenant + "'s quota.gpus of " +
                  std::to_string(result.quota) + "; this " + f.kind + " takes the total over " +
                  "the quota. Lower replicas or GPUs, or raise the tenant's quota.gpus";
      tally(f);
      result.finding = std::move(f);
    }
    reporter_.namespace_result(result);
  }
  reporter_.end(summary_);
  return summary_;
}

std::vector<RuleInfo> lint_rule_table(
    const Pipeline& pipeline, const std::vector<std::unique_ptr<const DocumentRule>>& rules) {
  std::vector<RuleInfo> table;
  auto has = [&](std::string_view id) {
    return std::any_of(table.begin(), table.end(), [&](const RuleInfo& r) { return r.id == id; });
  };
  for (const auto& rule : pipeline.rules()) {
    table.push_back({std::string(rule->id()), std::string(rule->name()),
                     std::string(rule->summary()), severity_for(rule->default_action())});
  }
  if (!has("GPU013")) {
    table.push_back({"GPU013", "GpuQuota",
                     "a namespace's workloads must fit its tenant's quota.gpus (replicas × GPUs "
                     "per pod, summed by lint)",
                     Severity::kDeny});
  }
  for (const auto& rule : rules) {
    table.push_back({std::string(rule->id()), std::string(rule->name()),
                     std::string(rule->summary()), severity_for(rule->default_action())});
  }
  std::sort(table.begin(), table.end(),
            [](const RuleInfo& a, const RuleInfo& b) { return a.id < b.id; });
  table.push_back({"PARSE", "ReadableManifest",
                   "every manifest document must be readable YAML or JSON (a duplicate key is a "
                   "warning: the last value is used)",
                   Severity::kError});
  table.push_back({"PODSPEC", "InterpretablePodSpec",
                   "a workload's pod specs must have the shape of a Kubernetes PodSpec",
                   Severity::kError});
  table.push_back({"PATCH", "PatchReproducesMutation",
                   "internal: the JSON Patch gpuadmit computes must reproduce the mutated object",
                   Severity::kError});
  table.push_back({"MUTATION", "MutationCompletes",
                   "every mutator must complete: one that cannot leaves the object unmutated "
                   "(docs/mutations.md, \"When a mutator fails\")",
                   Severity::kError});
  return table;
}

}  // namespace gpuadmit::lint
