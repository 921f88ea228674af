#pragma once
// `gpuadmit test`'s reports: text shaped like `go test` (a "--- FAIL: suite/case (file:line)"
// block per failed case, an "ok"/"FAIL" line per suite file and one for the run; -v adds
// "=== RUN" and "--- PASS" lines), or JUnit XML (a testsuite per suite file, a testcase per case;
// a bad suite is one testcase with an <error>).

#include <string>
#include <vector>

#include "policytest/runner.h"
#include "policytest/suite.h"

namespace gpuadmit::policytest {

// The text for one suite file (its errors go to standard error, written by the caller).
std::string suite_text(const SuiteOutcome& outcome, bool verbose);
// The run's last line: "ok\t3 suites, 36 cases" or "FAIL\t1 of 36 cases failed, 1 bad suite".
std::string summary_text(const std::vector<SuiteOutcome>& outcomes);
std::string junit_xml(const std::vector<SuiteOutcome>& outcomes);

}  // namespace gpuadmit::policytest
