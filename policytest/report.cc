#include "policytest/report.h"

#include <algorithm>

#include "xml/escape.h"

namespace gpuadmit::policytest {
namespace {

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string where(const SuiteOutcome& outcome, const CaseResult& c) {
  return outcome.file + (c.line > 0 ? ":" + std::to_string(c.line) : "");
}

}  // namespace

std::string suite_text(const SuiteOutcome& outcome, bool verbose) {
  std::string out;
  if (outcome.bad()) return "FAIL\t" + outcome.file + "\t[bad suite]\n";
  for (const CaseResult& c : outcome.cases) {
    const std::string id = outcome.name + "/" + c.name;
    if (verbose) out += "=== RUN   " + id + "\n";
    if (c.passed()) {
      if (verbose) out += "--- PASS: " + id + "\n";
      continue;
    }
    out += "--- FAIL: " + id + " (" + where(outcome, c) + ")\n";
    for (const std::string& why : c.failures) out += "    " + why + "\n";
  }
  const size_t failed = outcome.failed();
  if (failed == 0) {
    out += "ok  \t" + outcome.file + "\t" + plural(outcome.cases.size(), "case", "cases") + "\n";
  } else {
    out += "FAIL\t" + outcome.file + "\t" + std::to_string(failed) + " of " +
           plural(outcome.cases.size(), "case", "cases") + " failed\n";
  }
  return out;
}

std::string summary_text(const std::vector<SuiteOutcome>& outcomes) {
  size_t cases = 0, failed = 0, bad = 0;
  for (const SuiteOutcome& o : outcomes) {
    cases += o.cases.size();
    failed += o.failed();
    bad += o.bad();
  }
  if (failed == 0 && bad == 0) {
    return "ok\t" + plural(outcomes.size(), "suite", "suites") + ", " +
           plural(cases, "case", "cases") + "\n";
  }
  std::string out = "FAIL\t";
  if (failed > 0)
    out += std::to_string(failed) + " of " + plural(cases, "case", "cases") + " failed";
  if (bad > 0) out += std::string(failed > 0 ? ", " : "") + plural(bad, "bad suite", "bad suites");
  return out + "\n";
}

std::string junit_xml(const std::vector<SuiteOutcome>& outcomes) {
  size_t tests = 0, failures = 0, errors = 0;
  std::string body;
  for (const SuiteOutcome& o : outcomes) {
    const std::string name = xml::escape(o.name), file = xml::escape(o.file);
    if (o.bad()) {
      ++tests;
      ++errors;
      std::string text;
      for (const SuiteError& e : o.errors) text += e.to_string() + "\n";
      body += "  <testsuite name=\"" + name + "\" file=\"" + file +
              "\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
              "    <testcase classname=\"" +
              name + "\" name=\"(suite)\" file=\"" + file + "\">\n      <error message=\"" +
              xml::escape(o.errors.front().to_string()) + "\">" + xml::escape(text) +
              "</error>\n    </testcase>\n  </testsuite>\n";
      continue;
    }
    tests += o.cases.size();
    failures += o.failed();
    body += "  <testsuite name=\"" + name + "\" file=\"" + file + "\" tests=\"" +
            std::to_string(o.cases.size()) + "\" failures=\"" + std::to_string(o.failed()) +
            "\" errors=\"0\">\n";
    for (const CaseResult& c : o.cases) {
      body += "    <testcase classname=\"" + name + "\" name=\"" + xml::escape(c.name) +
              "\" file=\"" + file + "\" line=\"" + std::to_string(c.line) + "\"";
      if (c.passed()) {
        body += "/>\n";
        continue;
      }
      std::string text;
      for (const std::string& why : c.failures) text += why + "\n";
      body += ">\n      <failure message=\"" + xml::escape(c.failures.front()) + "\">" +
              xml::escape(text) + "</failure>\n    </testcase>\n";
    }
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpuadmit test\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(errors) + "\">\n" + body + "</testsuites>\n";
}

}  // namespace gpuadmit::policytest
