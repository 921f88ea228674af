#pragma once
// lint's reports (SPEC §8 --output): text for people (grouped by file, colour only on a
// terminal), JSON (SPEC §8's schema), SARIF 2.1.0 (GitHub code scanning) and JUnit XML (one
// testcase per workload). Each writes as results arrive, so memory does not grow with the input
// (JUnit buffers one file's testsuite and spools the rest to a temporary file for its totals).
//
//   auto reporter = make_reporter(OutputFormat::kSarif, stdout, {.rules = lint_rule_table(...)});

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/linter.h"

namespace gpuadmit::lint {

enum class OutputFormat { kText, kJson, kSarif, kJunit };

// "text" | "json" | "sarif" | "junit".
std::optional<OutputFormat> parse_output_format(std::string_view name);

struct ReportOptions {
  std::vector<RuleInfo> rules;  // SARIF's rule table
  bool color = false;           // text: ANSI colours
  std::string version;          // the tool version SARIF names
  // --explain: the policy document (lint/explain.h); text adds a "because:" line under each
  // finding, JSON a "policyPath" member. Null: no explanation.
  std::optional<Json> explain_policy;
};

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::FILE* out, ReportOptions options);

// A finding as SPEC §8's JSON object (plus "documentLine").
Json finding_json(const LintFinding& f);

// A file name as a SARIF artifact URI: relative paths stay relative ('/'-separated,
// percent-encoded); absolute ones under `base_dir` (the working directory, normally the
// repository root in CI) become relative to it, as GitHub code scanning requires; other
// absolute ones become file:// URIs.
std::string sarif_uri(std::string_view path, std::string_view base_dir = {});

}  // namespace gpuadmit::lint
