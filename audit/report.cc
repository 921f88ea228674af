#include "audit/report.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "engine/finding.h"
#include "engine/join.h"

namespace gpuadmit::audit {
namespace {

std::string label(const AuditObject& o) {
  std::string text = o.kind + " " + (o.ns.empty() ? o.name : o.ns + "/" + o.name);
  if (o.folded > 0) text += " (+" + std::to_string(o.folded) + " owned)";
  return text;
}

std::string mutation_message(const AuditObject& o) {
  return "the mutating webhook would now change it: " + join(o.mutations) +
         " (admitted before gpuadmit or before the policy changed)";
}

std::string plural(size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

}  // namespace

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  if (name == "text") return OutputFormat::kText;
  if (name == "json") return OutputFormat::kJson;
  if (name == "policyreport") return OutputFormat::kPolicyReport;
  return std::nullopt;
}

std::string text_report(const AuditResult& result) {
  std::string out;
  for (const fleet::InputError& e : result.errors) {
    out += e.file + ":" + std::to_string(e.line) + ": error PARSE: " + e.message + "\n";
  }
  for (const AuditObject& o : result.objects) {
    if (!o.reported()) continue;
    const std::string where = o.file + ":" + std::to_string(o.line) + ": ";
    for (const AuditFinding& f : o.findings) {
      out += where + std::string(severity_name(f.severity)) + " " + f.rule + " " + label(o) + ": " +
             f.message;
      if (!f.path.empty()) out += " [" + f.path + "]";
      out += "\n";
    }
    if (o.would_change) out += where + "mutation " + label(o) + ": " + mutation_message(o) + "\n";
  }
  out += std::to_string(result.deny) + " deny, " + std::to_string(result.warn) + " warn, " +
         plural(result.error, "error") + " in " + plural(result.reported, "object") + " (" +
         std::to_string(result.folded) + " more reported at their owner); " +
         std::to_string(result.would_change) + " would be changed by the webhook; " +
         plural(result.errors.size(), "input error") + "\n";
  return out;
}

Json json_report(const AuditResult& result) {
  Json objects = empty_array();
  for (const AuditObject& o : result.objects) {
    if (!o.reported() || (o.findings.empty() && !o.would_change)) continue;
    Json j = empty_object();
    j["file"] = o.file;
    j["line"] = o.line;
    j["apiVersion"] = o.api_version;
    j["kind"] = o.kind;
    j["namespace"] = o.ns;
    j["name"] = o.name;
    j["uid"] = o.uid;
    j["owned"] = o.folded;
    j["wouldChange"] = o.would_change;
    j["mutations"] = empty_array();
    for (const std::string& m : o.mutations) j["mutations"].push_back(m);
    j["findings"] = empty_array();
    for (const AuditFinding& f : o.findings) {
      Json jf = empty_object();
      jf["rule"] = f.rule;
      jf["severity"] = std::string(severity_name(f.severity));
      jf["message"] = f.message;
      jf["path"] = f.path;
      j["findings"].push_back(std::move(jf));
    }
    objects.push_back(std::move(j));
  }
  Json errors = empty_array();
  for (const fleet::InputError& e : result.errors) {
    Json je = empty_object();
    je["file"] = e.file;
    je["line"] = e.line;
    je["message"] = e.message;
    errors.push_back(std::move(je));
  }
  Json summary = empty_object();
  summary["objects"] = result.reported + result.folded;
  summary["reported"] = result.reported;
  summary["owned"] = result.folded;
  summary["deny"] = result.deny;
  summary["warn"] = result.warn;
  summary["error"] = result.error;
  summary["wouldChange"] = result.would_change;
  summary["inputErrors"] = result.errors.size();
  summary["exitCode"] = result.exit_code();
  Json out = empty_object();
  out["objects"] = std::move(objects);
  out["errors"] = std::move(errors);
  out["summary"] = std::move(summary);
  return out;
}

// PolicyReports: the wgpolicyk8s.io/v1alpha2 types of kubernetes-sigs/wg-policy-prototypes
// (policy-report/apis/wgpolicyk8s.io/v1alpha2/policyreport_types.go, whose CRD Kyverno ships and
// Policy Reporter reads): PolicyReport {scope (an ObjectReference), summary
// {pass, fail, warn, error, skip}, results[] {source, policy, rule, category, severity
// (critical|high|medium|low|info), timestamp {seconds, nanos}, result
// (pass|fail|warn|error|skip), scored, resources[] (ObjectReference), message, properties
// (string → string)}}; ClusterPolicyReport is the same, cluster-scoped. "warn: the policy
// requirements are not met and the policy is not scored": warn (and skip) results have scored
// false.
namespace {

struct ReportResults {
  std::vector<std::pair<int, Json>>
      results;  // (order: 0 fail/error, 1 warn, 2 pass, 3 skip; result)
  size_t pass = 0, fail = 0, warn = 0, error = 0, skip = 0;
};

Json resource_ref(const AuditObject& o) {
  Json r = empty_object();
  r["apiVersion"] = o.api_version;
  r["kind"] = o.kind;
  if (!o.ns.empty()) r["namespace"] = o.ns;
  r["name"] = o.name;
  if (!o.uid.empty()) r["uid"] = o.uid;
  return r;
}

Json base_result(const AuditObject& o, const PolicyReportOptions& options, std::string rule,
                 std::string_view outcome, std::string_view severity, std::string message) {
  Json r = empty_object();
  r["source"] = "gpuadmit";
  r["policy"] = options.policy;
  r["rule"] = std::move(rule);
  r["category"] = "GPU workloads";
  r["severity"] = std::string(severity);
  Json ts = empty_object();
  ts["seconds"] = options.timestamp_seconds;
  ts["nanos"] = 0;
  r["timestamp"] = std::move(ts);
  r["result"] = std::string(outcome);
  r["scored"] = outcome == "pass" || outcome == "fail" || outcome == "error";
  r["resources"] = empty_array();
  r["resources"].push_back(resource_ref(o));
  r["message"] = std::move(message);
  Json properties = empty_object();
  properties["file"] = o.file + ":" + std::to_string(o.line);
  if (o.folded > 0) properties["ownedObjects"] = std::to_string(o.folded);
  r["properties"] = std::move(properties);
  return r;
}

void add_results(const AuditObject& o, const PolicyReportOptions& options, ReportResults& into) {
  for (const AuditFinding& f : o.findings) {
    const bool warn = f.severity == Severity::kWarn;
    const std::string_view outcome = warn                             ? "warn"
                                     : f.severity == Severity::kError ? "error"
                                                                      : "fail";
    Json r = base_result(o, options, f.rule, outcome, warn ? "medium" : "high", f.message);
    if (!f.path.empty()) r["properties"]["path"] = f.path;
    if (warn) {
      ++into.warn;
    } else if (f.severity == Severity::kError) {
      ++into.error;
    } else {
      ++into.fail;
    }
    into.results.emplace_back(warn ? 1 : 0, std::move(r));
  }
  if (o.would_change) {
    Json r = base_result(o, options, "mutation", "warn", "info", mutation_message(o));
    r["properties"]["mutations"] = join(o.mutations);
    ++into.warn;
    into.results.emplace_back(1, std::move(r));
  }
  if (o.exempt) {  // nothing judged: "skip: the policy was not selected" (the v1alpha2 types)
    ++into.skip;
    into.results.emplace_back(3, base_result(o, options, "all-rules", "skip", "info",
                                             "namespace " + o.ns +
                                                 " is exempt from gpuadmit "
                                                 "(enforcement.exempt.namespaces)"));
    return;
  }
  if (o.findings.empty() && !o.would_change) {
    ++into.pass;
    into.results.emplace_back(
        2, base_result(o, options, "all-rules", "pass", "info", "every rule of the policy passes"));
  }
}

Json make_report(const std::string& ns, ReportResults& r, const PolicyReportOptions& options) {
  Json report = empty_object();
  report["apiVersion"] = "wgpolicyk8s.io/v1alpha2";
  report["kind"] = ns.empty() ? "ClusterPolicyReport" : "PolicyReport";
  Json metadata = empty_object();
  metadata["name"] = ns.empty() ? "gpuadmit-cluster" : "gpuadmit-" + ns;
  if (!ns.empty()) metadata["namespace"] = ns;
  metadata["labels"] = Json{{"app.kubernetes.io/managed-by", "gpuadmit"}};
  const size_t omitted =
      r.results.size() > options.max_results ? r.results.size() - options.max_results : 0;
  if (omitted > 0) {
    metadata["annotations"] = Json{{"gpuadmit.io/results-omitted", std::to_string(omitted)}};
  }
  report["metadata"] = std::move(metadata);
  if (!ns.empty()) {
    report["scope"] = Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"name", ns}};
  }
  Json summary = empty_object();
  summary["pass"] = r.pass;
  summary["fail"] = r.fail;
  summary["warn"] = r.warn;
  summary["error"] = r.error;
  summary["skip"] = r.skip;
  report["summary"] = std::move(summary);
  std::stable_sort(r.results.begin(), r.results.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Json results = empty_array();
  for (size_t i = 0; i < r.results.size() && i < options.max_results; ++i) {
    results.push_back(std::move(r.results[i].second));
  }
  report["results"] = std::move(results);
  return report;
}

}  // namespace

Json policy_reports(const AuditResult& result, const PolicyReportOptions& options) {
  std::map<std::string, ReportResults> by_namespace;  // "" : cluster-scoped
  for (const AuditObject& o : result.objects) {
    if (o.reported()) add_results(o, options, by_namespace[o.ns]);
  }
  Json list = empty_object();
  list["apiVersion"] = "v1";
  list["kind"] = "List";
  Json items = empty_array();
  for (auto& [ns, r] : by_namespace) {
    if (!ns.empty()) items.push_back(make_report(ns, r, options));
  }
  if (auto it = by_namespace.find(""); it != by_namespace.end()) {
    items.push_back(make_report("", it->second, options));
  }
  list["items"] = std::move(items);
  return list;
}

}  // namespace gpuadmit::audit
