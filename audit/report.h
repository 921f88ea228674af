#pragma once
// `gpuadmit audit`'s outputs (docs/audit.md "Outputs"): text for people, JSON (a documented,
// stable shape) and PolicyReports (wgpolicyk8s.io/v1alpha2, as Kyverno and Policy Reporter read
// them). Each is built from a finished AuditResult.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "audit/audit.h"
#include "engine/json.h"

namespace gpuadmit::audit {

enum class OutputFormat { kText, kJson, kPolicyReport };

// "text" | "json" | "policyreport".
std::optional<OutputFormat> parse_output_format(std::string_view name);

// One line per finding of a reported object, per pending mutation and per input error, then a
// summary line.
std::string text_report(const AuditResult& result);

// {"objects": [...], "errors": [...], "summary": {...}} (docs/audit.md "JSON").
Json json_report(const AuditResult& result);

struct PolicyReportOptions {
  std::string policy = "gpuadmit";  // results' `policy`: the policy's name
  int64_t timestamp_seconds = 0;    // results' `timestamp` (the audit's time)
  // Results listed per report at most (summary counts stay exact): fail and error results
  // first, then warn, then pass, then skip (objects of exempt namespaces).
  size_t max_results = 1000;
};

// A v1 List of a PolicyReport per namespace (sorted by namespace) and, when any reported object
// is cluster-scoped, one ClusterPolicyReport.
Json policy_reports(const AuditResult& result, const PolicyReportOptions& options);

}  // namespace gpuadmit::audit
