// gpuadmit lint: manifests in CI, through the webhook's own pipeline (docs/lint.md).

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input_paths.h"
#include "engine/pipeline.h"
#include "lint/explain.h"
#include "lint/fix_writer.h"
#include "lint/linter.h"
#include "lint/report.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "rules/document_rules.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kLintUsage =
    "usage: gpuadmit lint [--policy P] [--namespace NS] [--output text|json|sarif|junit]\n"
    "                     [--fix [--write DIR]] [--no-color] [--explain] [--jobs N] PATH...\n"
    "PATH: a file, a folder (recursive *.yaml, *.yml, *.json) or - for standard input\n"
    "--jobs N: files linted on N threads (default: the hardware threads; 1: one thread); the\n"
    "          output is the same, in input order\n";

// The pre-pass for DRA (docs/dra.md): the claim objects of every file given, so that a pod's
// claim reference resolves whatever the file order. Standard input is read once, by the lint
// itself: there a claim resolves when it comes before the pods that use it.
void collect_claims(const std::vector<InputEntry>& inputs, unsigned jobs,
                    lint::ManifestClaims& claims) {
  std::vector<std::string> paths;
  for (const InputEntry& input : inputs) {
    if (!input.is_stdin && input.error.empty()) paths.push_back(input.path);
  }
  claims.add_files(paths, jobs);
}

// --jobs: a positive number; absent, the hardware threads.
std::optional<unsigned> jobs_option(const Args& args) {
  const auto value = args.value("jobs");
  if (!value) return std::max(1u, std::thread::hardware_concurrency());
  unsigned jobs = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), jobs);
  if (ec != std::errc() || end != value->data() + value->size() || jobs == 0 || jobs > 1024) {
    return std::nullopt;
  }
  return jobs;
}

// The inputs in order: runs of files go to lint_files (on `jobs` threads); standard input and
// paths that name nothing readable are linted between them, on this thread, in their place.
void lint_inputs(const std::vector<InputEntry>& inputs, unsigned jobs, lint::Linter& linter) {
  std::vector<lint::Linter::FileInput> run;
  auto flush = [&] {
    linter.lint_files(run, jobs);
    run.clear();
  };
  for (const InputEntry& input : inputs) {
    if (!input.is_stdin && !input.missing && input.error.empty()) {
      run.push_back({input.path, input.path});
      continue;
    }
    flush();
    if (input.is_stdin) {
      linter.lint_stream(stdin, "<stdin>", false);
    } else if (input.missing) {
      std::cerr << "gpuadmit lint: " << input.path << ": no such file or folder\n";
      linter.input_error(input.path, "no such file or folder; check the path");
    } else {
      std::cerr << "gpuadmit lint: " << input.path << ": " << input.error << "\n";
      linter.input_error(input.path, input.error);
    }
  }
  flush();
}

// The command line's mistakes, told on standard error with the fix: false when there is one.
bool arguments_valid(const Args& args) {
  if (args.positional().empty()) {
    std::cerr << "gpuadmit lint: no manifests given; name files, folders or - (stdin)\n"
              << kLintUsage;
    return false;
  }
  const std::string output_name = args.value_or("output", "text");
  if (!lint::parse_output_format(output_name)) {
    std::cerr << "gpuadmit lint: --output must be text, json, sarif or junit, not \"" << output_name
              << "\"\n";
    return false;
  }
  if (args.value("write") && !args.has("fix")) {
    std::cerr << "gpuadmit lint: --write needs --fix (it is where the fixed files go)\n";
    return false;
  }
  if (!jobs_option(args)) {
    std::cerr << "gpuadmit lint: --jobs must be a number from 1 to 1024, not \""
              << args.value_or("jobs", "") << "\"\n";
    return false;
  }
  if (stdin_repeated(args.positional())) {
    std::cerr << "gpuadmit lint: - (standard input) may be given only once\n";
    return false;
  }
  return true;
}

// How the report is written to `report_out`: the rule table, colour (a terminal, without
// --no-color or NO_COLOR), and with --explain the policy behind each finding.
lint::ReportOptions report_options_for(
    const Args& args, const Pipeline& pipeline,
    const std::vector<std::unique_ptr<const DocumentRule>>& document_rules, std::FILE* report_out) {
  const char* no_color = std::getenv("NO_COLOR");
  lint::ReportOptions report_options;
  report_options.rules = lint::lint_rule_table(pipeline, document_rules);
  report_options.color = !args.has("no-color") && (no_color == nullptr || *no_color == '\0') &&
                         isatty(fileno(report_out)) == 1;
  report_options.version = "0.1.0";
  if (args.has("explain")) {
    // --explain (docs/explain.md): text and JSON name the policy field behind each finding.
    report_options.explain_policy = lint::policy_document(args.value_or("policy", ""));
    if (!report_options.explain_policy) report_options.explain_policy = Json::object();
  }
  return report_options;
}

// The exit code once every input is linted: the findings', or 2 when a fixed file could not be
// written.
int finish_lint(lint::Linter& linter, const lint::FixWriter* fix_writer) {
  const lint::LintSummary summary = linter.finish();
  for (const std::string& file : summary.empty_files) {
    std::cerr << "gpuadmit lint: note: " << file
              << " holds no documents, only comments and whitespace\n";
  }
  int code = summary.exit_code();
  if (fix_writer) {
    for (const std::string& e : fix_writer->errors()) {
      std::cerr << "gpuadmit lint: cannot write " << e << "\n";
      code = 2;
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}

}  // namespace

int lint_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(argv, {"policy", "namespace", "output", "write", "jobs"},
                               {"fix", "no-color", "explain"}, args)) {
    std::cerr << "gpuadmit lint: " << *error << "\n" << kLintUsage;
    return 2;
  }
  if (args.help()) return print_usage(kLintUsage);
  if (!arguments_valid(args)) return 2;
  const auto format = lint::parse_output_format(args.value_or("output", "text"));
  const bool fix = args.has("fix");
  const auto write_dir = args.value("write");

  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    std::cerr << "gpuadmit lint: the policy is invalid; fix the errors above\n";
    return 2;
  }

  const Pipeline pipeline(default_mutators(), default_rules());
  const auto document_rules = default_document_rules();

  // With --fix and no --write, standard output carries the fixed manifests (pipe them to
  // kubectl apply -f -), so the report goes to standard error.
  std::FILE* report_out = (fix && !write_dir) ? stderr : stdout;
  auto made = lint::make_reporter(*format, report_out,
                                  report_options_for(args, pipeline, document_rules, report_out));

  std::unique_ptr<lint::FixWriter> fix_writer;
  if (fix) {
    fix_writer = write_dir
                     ? std::make_unique<lint::FixWriter>(lint::FixWriter::Directory{*write_dir})
                     : std::make_unique<lint::FixWriter>(stdout);
  }
  lint::LintOptions options;
  options.default_namespace = args.value_or("namespace", "default");
  lint::ManifestClaims claims(options.default_namespace);
  const std::vector<InputEntry> inputs = expand_inputs(args.positional());
  const unsigned jobs = *jobs_option(args);
  collect_claims(inputs, jobs, claims);
  options.claims = &claims;
  lint::Linter linter(loaded.policy, pipeline, document_rules, options, *made, fix_writer.get());
  lint_inputs(inputs, jobs, linter);
  return finish_lint(linter, fix_writer.get());
}

}  // namespace gpuadmit::cli
