// lint's golden cases: tests/lint/cases/<name>/ holds
//   policy.yaml     the policy
//   input/          the manifests (linted as the folder `input`, from the case folder)
//   expected.json   `gpuadmit lint --output json input`, exactly
//   fixed.yaml      `gpuadmit lint --fix input` standard output, exactly
//   exit_code       the exit code (one number)
// The expected files are written by hand from the Kubernetes and NVIDIA behaviour the case is
// about (docs/golden-cases.md); the test never writes them. When the output differs, it writes
// what lint printed to golden-actual/lint/<case>/ in the build folder and fails, naming the diff
// to read. Independently of the files, each case checks that lint agrees with the webhook's
// pipeline: every workload's findings and --fix document equal Pipeline::evaluate's.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engine/dra.h"
#include "engine/pipeline.h"
#include "engine/workload.h"
#include "lint/manifest_claims.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "rules/document_rules.h"
#include "tests/support/process.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {
namespace golden_test {
namespace {

namespace fs = std::filesystem;
const fs::path kCases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "lint" / "cases";

bool ends_with_list(const Json& v) {
  const std::string_view kind = string_member(v, "kind");
  return kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" && v.contains("items") &&
         v["items"].is_array();
}

// Compares one expected file with what lint printed. On a difference, the output goes to
// golden-actual/lint/<case>/<file> (under the working directory, the build folder) for a person
// to diff and, if it is right, to copy by hand; a stale copy is removed when the output agrees.
void check_golden(const fs::path& dir, const std::string& file, const std::string& actual,
                  bool equal) {
  const fs::path out = fs::current_path() / "golden-actual" / "lint" / dir.filename() / file;
  std::error_code ec;
  if (equal) {
    fs::remove(out, ec);
    return;
  }
  fs::create_directories(out.parent_path(), ec);
  std::ofstream(out, std::ios::binary) << actual;
  FAIL_CHECK("lint's output differs from " << (dir / file).string() << ": review\n  diff -u '"
                                           << (dir / file).string() << "' '" << out.string()
                                           << "'\nand correct the code or, if the output is "
                                              "right, the expected file by hand");
}

std::vector<Json> documents_of(const std::string& text) {
  std::vector<Json> docs;
  yaml::DocumentStream stream(text);
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument d = yaml::parse_document(source, false);
    if (!d.empty && !d.error) docs.push_back(std::move(d.value));  // unreadable: printed as is
  }
  return docs;
}

std::vector<fs::path> input_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void check_case(const fs::path& dir) {
  const std::string name = dir.filename().string();
  INFO("case " << name);
  const std::string cd = "cd '" + dir.string() + "' && ";
  const std::string binary = std::string("'") + GPUADMIT_BINARY + "'";
  const auto json =
      testing::run_command(cd + binary + " lint --policy policy.yaml --output json input");
  const auto fixed = testing::run_command(cd + binary + " lint --policy policy.yaml --fix input");
  INFO(json.err);
  REQUIRE(json.exit_code >= 0);
  CHECK(fixed.exit_code == json.exit_code);
  const Json report = Json::parse(json.out);

  check_golden(dir, "expected.json",
               report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n",
               report == Json::parse(testing::slurp((dir / "expected.json").string())));
  check_golden(dir, "fixed.yaml", fixed.out,
               fixed.out == testing::slurp((dir / "fixed.yaml").string()));
  const std::string exit_code = std::to_string(json.exit_code) + "\n";
  check_golden(dir, "exit_code", exit_code,
               exit_code == testing::slurp((dir / "exit_code").string()));

  // Same engine, same verdicts: evaluate every input object with the webhook's pipeline.
  auto loaded = load_compiled_policy((dir / "policy.yaml").string());
  REQUIRE(loaded.policy);
  const Pipeline pipeline(default_mutators(), default_rules());
  std::vector<Json> expected_fixed;
  Json expected_findings = Json::array();
  // DRA claim references resolve across the whole input, as lint's pre-pass does (docs/dra.md).
  ManifestClaims claims("default");
  for (const fs::path& file : input_files(dir / "input")) claims.add_file(file.string());
  for (const fs::path& file : input_files(dir / "input")) {
    yaml::SourceDocument source;
    std::string text = testing::slurp(file.string());
    yaml::DocumentStream s2(text);
    while (s2.next(source)) {
      yaml::ParsedDocument d = yaml::parse_document(source, file.extension() == ".json");
      if (d.empty || d.error) continue;
      std::vector<Json*> objects;
      Json fixed_doc = d.value;
      if (ends_with_list(d.value)) {
        for (Json& item : fixed_doc["items"]) objects.push_back(&item);
      } else {
        objects.push_back(&fixed_doc);
      }
      for (Json* object : objects) {
        const std::string_view api_version = string_member(*object, "apiVersion");
        const std::string_view kind = string_member(*object, "kind");
        if (!is_workload_kind(api_version, kind, *loaded.policy) &&
            !is_claim_object(api_version, kind)) {
          continue;
        }
        std::string ns;
        if (const Json* m = find_member(*object, "metadata")) ns = string_member(*m, "namespace");
        EvaluateOptions options;
        options.ns = ns.empty() ? "default" : ns;
        options.claims = &claims;
        Evaluation e = pipeline.evaluate(*object, options, *loaded.policy);
        for (const Finding& f : e.findings) {
          expected_findings.push_back({{"rule", f.rule},
                                       {"severity", std::string(severity_name(f.severity))},
                                       {"message", f.message},
                                       {"path", f.path}});
        }
        if (e.changed()) *object = e.mutated;
      }
      expected_fixed.push_back(std::move(fixed_doc));
    }
  }
  std::set<std::string> lint_only;
  for (const auto& rule : default_document_rules()) lint_only.insert(std::string(rule->id()));
  Json lint_findings = Json::array();
  for (const Json& f : report["findings"]) {
    const std::string rule = f["rule"];
    // Lint only: the document rules (GPU016, GPU017, GPU028–GPU031, GPU034) judge objects the
    // webhook never receives.
    if (rule == "PARSE" || lint_only.count(rule)) continue;
    if (rule == "GPU013" && f["message"].get<std::string>().rfind("namespace ", 0) == 0) continue;
    lint_findings.push_back({{"rule", rule},
                             {"severity", f["severity"]},
                             {"message", f["message"]},
                             {"path", f["path"]}});
  }
  CHECK(lint_findings == expected_findings);
  const std::vector<Json> printed = documents_of(fixed.out);
  REQUIRE(printed.size() == expected_fixed.size());
  for (size_t i = 0; i < printed.size(); ++i) {
    INFO("document " << i);
    CHECK(printed[i] == expected_fixed[i]);
  }

  // --fix is idempotent: linting the fixed output changes nothing more.
  const auto again =
      testing::run_command(cd + binary + " lint --policy policy.yaml --fix -", fixed.out);
  CHECK(again.out == fixed.out);
  const auto again_json =
      testing::run_command(cd + binary + " lint --policy policy.yaml --output json -", fixed.out);
  CHECK(Json::parse(again_json.out)["summary"]["fixable"] == 0);
}

}  // namespace

TEST_CASE("lint golden cases", "[lint][golden]") {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kCases)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 3);
  for (const fs::path& dir : dirs) check_case(dir);
}

}  // namespace golden_test
}  // namespace gpuadmit::lint
