#include "lint/linter.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>
#include <variant>

#include "engine/dra.h"
#include "engine/pod_view.h"
#include "engine/resources.h"
#include "engine/saturating.h"
#include "engine/workload.h"

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
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    input_error(display,
                std::string("cannot open the file: ") + std::strerror(errno) + "; check the path");
    return;
  }
  lint_stream(file, display, is_json_name(path));
  std::fclose(file);
}

void Linter::lint_stream(std::FILE* file, const std::string& display, bool json_file) {
  DocumentStream stream(file);
  lint_documents(stream, display, json_file);
}

void Linter::lint_text(std::string_view text, const std::string& display, bool json_file) {
  DocumentStream stream(text);
  lint_documents(stream, display, json_file);
}

void Linter::lint_documents(DocumentStream& stream, const std::string& display, bool json_file) {
  ++summary_.files;
  reporter_.begin_file(display);
  if (fix_ != nullptr) fix_->begin_file(display, json_file);
  SourceDocument source;
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

void Linter::lint_document(const SourceDocument& source, const std::string& display,
                           bool json_file) {
  ParsedDocument doc = parse_document(source, json_file);
  if (doc.empty) {
    if (fix_ != nullptr) fix_->document(source, doc, nullptr);
    return;
  }
  ++summary_.documents;
  if (doc.error) {
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
    if (fix_ != nullptr) fix_->document(source, doc, nullptr);
    return;
  }

  std::vector<ObjectResult> results;
  std::vector<std::string> paths;
  std::vector<std::pair<size_t, size_t>> refs;  // per path: (result, finding or kNoFinding)
  pending_quota_.clear();
  // An object's result joins the document's; returns its mutated object, if any.
  auto add = [&](ObjectLint o) -> std::optional<Json> {
    if (!o.result) return std::nullopt;
    const size_t index = results.size();
    for (auto& [path, finding] : o.locate) {
      paths.push_back(std::move(path));
      refs.emplace_back(index, finding.value_or(kNoFinding));
    }
    if (o.quota) {
      o.quota->result = index;
      pending_quota_.push_back(std::move(*o.quota));
    }
    results.push_back(std::move(*o.result));
    return std::move(o.replacement);
  };
  std::optional<Json> replacement;
  const Json& value = doc.value;
  if (value.is_object() && is_list(value)) {
    const Json& items = value["items"];
    for (size_t i = 0; i < items.size(); ++i) {
      std::optional<Json> mutated =
          add(lint_object(items[i], display, doc.line, "items[" + std::to_string(i) + "]"));
      if (mutated) {
        if (!replacement) replacement = value;
        (*replacement)["items"][i] = std::move(*mutated);
      }
    }
  } else if (value.is_object()) {
    replacement = add(lint_object(value, display, doc.line, ""));
  }

  // Duplicate-key warnings belong to the document: to its object when it is one, else to a
  // result of their own (a List, or a document lint does not otherwise look at).
  size_t warning_result = 0;
  if (!doc.warnings.empty() && results.size() != 1) {
    ObjectResult r;
    r.file = display;
    r.line = doc.line;
    if (value.is_object()) {
      r.api_version = std::string(string_member(value, "apiVersion"));
      r.kind = std::string(string_member(value, "kind"));
      r.name = object_name(value);
    }
    warning_result = results.size();
    results.push_back(std::move(r));
  }
  for (const ParseIssue& w : doc.warnings) {
    ObjectResult& r = results[warning_result];
    LintFinding f = finding_base(r);
    f.line = w.line;
    f.rule = "PARSE";
    f.severity = Severity::kWarn;
    f.message = w.message;
    tally(f);
    r.findings.push_back(std::move(f));
  }

  // Lines: each List item's, then each finding's field (one extra pass over the text, only for
  // documents with findings).
  std::vector<int> lines;
  if (!paths.empty()) lines = locate_paths(source, doc, paths);
  for (size_t k = 0; k < lines.size(); ++k) {
    if (refs[k].second == kNoFinding && lines[k] > 0) results[refs[k].first].line = lines[k];
  }
  for (ObjectResult& r : results) {
    if (r.line == 0) r.line = doc.line;
    for (LintFinding& f : r.findings) {
      f.document_line = r.line;
      if (f.line == 0) f.line = r.line;
    }
  }
  for (size_t k = 0; k < lines.size(); ++k) {
    if (refs[k].second != kNoFinding && lines[k] > 0) {
      results[refs[k].first].findings[refs[k].second].line = lines[k];
    }
  }
  for (const PendingQuota& q : pending_quota_) {
    const ObjectResult& r = results[q.result];
    LintFinding where = finding_base(r);
    where.line = where.document_line = r.line;
    where.path = q.path;
    count_quota(q.gpus, q.description, r.ns, where);
  }
  for (const ObjectResult& r : results) reporter_.object(r);
  if (fix_ != nullptr) fix_->document(source, doc, replacement ? &*replacement : nullptr);
  // Children first is cheaper than the destructors (engine/json.h).
  if (replacement) free_json(*replacement);
  free_json(doc.value);
}

Linter::ObjectLint Linter::lint_object(const Json& object, const std::string& display, int line,
                                       const std::string& locate_prefix) {
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

  if (is_claim_object(r.api_version, r.kind)) {
    lint_claim(object, locate_prefix, out);
  } else if (is_workload_kind(r.api_version, r.kind, *policy_)) {
    lint_workload(object, locate_prefix, out);
  } else {
    lint_document_rules(object, locate_prefix, out);
  }
  return out;
}

void Linter::lint_workload(const Json& object, const std::string& locate_prefix, ObjectLint& out) {
  ObjectResult& r = *out.result;
  EvaluateOptions options;
  options.claims = options_.claims;
  options.ns = r.ns;
  options.operation = Operation::kCreate;
  options.mutate = true;
  options.patch = false;           // lint needs the mutated object, not the webhook's JSON Patch
  options.copy_unchanged = false;  // ... and only when the mutators edited a copy
  // A mutator that fails is an error finding, even where the webhook would admit (Ignore).
  options.apply_mutation_failure_policy = false;
  Evaluation e = pipeline_.evaluate(object, options, *policy_);
  const Json& evaluated = e.mutated.is_null() ? object : e.mutated;
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
    out.replacement = std::move(e.mutated);
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
    DocumentContext ctx;
    ctx.policy = policy_.get();
    ctx.ns = r.ns;
    rule->check(object, ctx, violations_);
    for (Violation& v : violations_) {
      LintFinding lf = finding_base(r);
      lf.rule = std::string(rule->id());
      lf.severity = severity_for(action);
      lf.message = std::move(v.message);
      lf.path = std::move(v.path);
      add_finding(std::move(lf), locate_prefix, out);
    }
  }
  if (!checked) {
    out.result.reset();
    return;
  }
  if (!locate_prefix.empty()) out.locate.emplace_back(locate_prefix, std::nullopt);
}

void Linter::lint_claim(const Json& object, const std::string& locate_prefix, ObjectLint& out) {
  if (options_.claims != nullptr) options_.claims->add(object);
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
