// The guarded yaml-cpp reader (yaml/yaml_cpp_scan.h): what the scan counts, where it stops,
// and that it stops on the inputs yaml-cpp 0.7 never finishes (issue 11).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "yaml/yaml_cpp_scan.h"

namespace gpuadmit::yaml {
namespace yaml_cpp_scan_test {
namespace {

TEST_CASE("yaml scan: counts documents, the content ones and where the second starts",
          "[policy][yaml]") {
  const std::string text = "---\n# Source: x\n---\na: 1\n---\n- b\n...\n";
  const YamlScan scan = scan_yaml_documents(text, {});
  REQUIRE_FALSE(scan.problem);
  CHECK(scan.documents == 3);
  CHECK(scan.content_documents == 2);
  CHECK(scan.first_content == 1);
  CHECK(scan.second_content.line == 5);  // 0-based: the `- b` line
  CHECK(scan.second_content.column == 0);
  CHECK(scan.nodes == 6);  // null; map, a, 1; sequence, b
  const YAML::Node doc = load_yaml_document(text, scan.first_content);
  CHECK(doc.IsMap());
  CHECK(doc.size() == 1);
  CHECK(doc.Mark().line == 3);
  CHECK(load_yaml_document(text, 0).IsNull());
}

TEST_CASE("yaml scan: a document that consumes nothing stops the scan (yaml-cpp #1040)",
          "[policy][yaml][issue11]") {
  struct Case {
    std::string text;
    int line, column;
    std::string message;
  };
  const Case cases[] = {
      {",a: 1", 0, 0, "did not find expected node content (found \",\")"},
      {"...\n\n,", 2, 0, "did not find expected node content (found \",\")"},
      {"- x\n,", 1, 0, "did not find expected node content (found \",\")"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const YamlScan scan = scan_yaml_documents(c.text, {});
    REQUIRE(scan.problem);
    CHECK(scan.problem->kind == YamlProblem::Kind::kSyntax);
    CHECK(scan.problem->mark.line == c.line);
    CHECK(scan.problem->mark.column == c.column);
    CHECK(scan.problem->message == c.message);
    CHECK(scan.documents <= 2);
  }
}

TEST_CASE("yaml scan: the document and node budgets", "[policy][yaml]") {
  std::string many_documents;
  for (int i = 0; i < 10; ++i) many_documents += "---\n";
  YamlScan scan = scan_yaml_documents(many_documents, {.max_documents = 4, .max_nodes = 100});
  REQUIRE(scan.problem);
  CHECK(scan.problem->kind == YamlProblem::Kind::kTooManyDocuments);
  CHECK(scan.problem->mark.line == 4);  // the fifth document
  CHECK(scan.documents == 4);

  scan = scan_yaml_documents("[a, b, c, d, e]", {.max_documents = 4, .max_nodes = 3});
  REQUIRE(scan.problem);
  CHECK(scan.problem->kind == YamlProblem::Kind::kTooManyNodes);
  CHECK(scan.problem->mark.column == 7);  // the fourth node: c
  CHECK(scan.nodes == 3);
}

TEST_CASE("yaml scan: yaml-cpp's own errors keep their message and mark", "[policy][yaml]") {
  const YamlScan scan = scan_yaml_documents("a: b\n  c: d\n", {});
  REQUIRE(scan.problem);
  CHECK(scan.problem->kind == YamlProblem::Kind::kSyntax);
  CHECK(scan.problem->message == "illegal map value");
  CHECK(scan.problem->mark.line == 1);
  CHECK(scan.problem->mark.column == 3);
}

}  // namespace
}  // namespace yaml_cpp_scan_test
}  // namespace gpuadmit::yaml

namespace gpuadmit::yaml {
namespace yaml_cpp_scan_test {
namespace {

// Exhaustive over short texts of YAML indicators: every scan ends, and progresses — no more
// documents than bytes + 1. (Length 5 over this alphabet, 5.4M texts, was run once by hand.)
TEST_CASE("yaml scan: every text of up to 3 YAML indicators ends, with progress",
          "[policy][yaml][issue11]") {
  const std::string alphabet = ",[]{}:-?&*!|>'\"#\n a%.\t";
  size_t texts = 0, problems = 0;
  for (size_t length = 1; length <= 3; ++length) {
    std::vector<size_t> digits(length, 0);
    for (;;) {
      std::string text;
      for (size_t d : digits) text += alphabet[d];
      const YamlScan scan = scan_yaml_documents(text, {});
      if (scan.documents > text.size() + 1) FAIL_CHECK("no progress on [" << text << "]");
      problems += scan.problem ? 1 : 0;
      ++texts;
      size_t k = length;
      while (k > 0 && ++digits[k - 1] == alphabet.size()) digits[--k] = 0;
      if (k == 0) break;
    }
  }
  CHECK(texts == 22 + 22 * 22 + 22 * 22 * 22);
  CHECK(problems > 0);
}

}  // namespace
}  // namespace yaml_cpp_scan_test
}  // namespace gpuadmit::yaml
