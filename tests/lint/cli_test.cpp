// `gpuadmit lint` as CI runs it: the whole shared corpus, stdin, exit codes, every output format
// checked structurally, --write, and usage errors.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "engine/json.h"
#include "lint/report.h"
#include "tests/support/process.h"

namespace gpuadmit::lint {
namespace cli_test {
namespace {

namespace fs = std::filesystem;

std::string gpuadmit() { return std::string("'") + GPUADMIT_BINARY + "'"; }
std::string corpus() { return std::string("'") + GPUADMIT_SHARED_DIR + "/corpus'"; }

constexpr const char* kGpuPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: cuda
    resources:
      limits:
        nvidia.com/gpu: 1
)";

constexpr const char* kLimitRangeTrap = R"(apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: ml}
spec:
  limits:
  - type: Container
    max: {nvidia.com/gpu: "4"}
)";

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

long attribute(const std::string& element, const std::string& name) {
  const size_t at = element.find(" " + name + "=\"");
  REQUIRE(at != std::string::npos);
  return std::stol(element.substr(at + name.size() + 3));
}

TEST_CASE("the whole corpus is read without a crash or hang, the invalid file is a PARSE finding",
          "[lint][cli][corpus]") {
  const auto r =
      testing::run_command("timeout 120 " + gpuadmit() + " lint --output json " + corpus());
  INFO(r.err);
  CHECK(r.exit_code == 2);  // the upstream-invalid file is an input error
  const Json report = Json::parse(r.out);
  size_t parse_errors = 0;
  for (const Json& f : report["findings"]) {
    if (f["rule"] == "PARSE" && f["severity"] == "error") {
      ++parse_errors;
      CHECK(f["file"].get<std::string>().find("kserve__custom_torchserve_gpu.yaml") !=
            std::string::npos);
      CHECK(f["line"] == 8);
    }
  }
  CHECK(parse_errors == 1);
  // Everything else was linted: every file's documents are counted.
  CHECK(report["summary"]["files"].get<int>() >= 138);
  CHECK(report["summary"]["documents"].get<int>() >= 190);
  CHECK(report["summary"]["workloads"].get<int>() >= 90);

  // Each corpus file alone, also through --fix, with a time limit: no crash, no hang.
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GPUADMIT_SHARED_DIR) / "corpus")) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    const auto one = testing::run_command("timeout 20 " + gpuadmit() + " lint --fix '" +
                                          e.path().string() + "' >/dev/null");
    INFO(e.path().string() << "\n" << one.err);
    CHECK((one.exit_code == 0 || one.exit_code == 1 || one.exit_code == 2));
  }
}

// The files under a folder with their contents, by path relative to it.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      files[fs::relative(e.path(), dir).string()] = testing::slurp(e.path().string());
    }
  }
  return files;
}

TEST_CASE("lint --fix is idempotent over the whole corpus, on stdout and with --write",
          "[lint][cli][corpus][fix]") {
  const std::string policy =
      std::string("'") + GPUADMIT_SOURCE_DIR + "/tests/lint/cases/workloads_mix/policy.yaml'";
  const std::string lint = gpuadmit() + " lint --policy " + policy;
  const auto first = testing::run_command(lint + " --fix " + corpus());
  INFO(first.err);
  REQUIRE(first.exit_code == 2);  // the upstream-invalid file
  REQUIRE(first.err.find("would be changed by the webhook") != std::string::npos);

  // Linting the fixed manifests again: nothing left to fix, and --fix prints the same text.
  const auto report = testing::run_command(lint + " --output json -", first.out);
  const Json again = Json::parse(report.out);
  CHECK(again["summary"]["fixable"] == 0);
  CHECK(again["summary"]["workloads"].get<int>() >= 90);
  const auto second = testing::run_command(lint + " --fix -", first.out);
  CHECK(second.out == first.out);

  // The same through --write: a mirror of the corpus (*.json files stay JSON), which lints clean
  // of fixes and rewrites to identical files.
  const fs::path dir = fs::temp_directory_path() / "gpuadmit-lint-idempotence-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cd = "cd '" + dir.string() + "' && ";
  const auto written = testing::run_command(cd + "cp -r " + corpus() + " corpus && " + lint +
                                            " --fix --write one corpus");
  INFO(written.err);
  CHECK(written.exit_code == 2);
  const auto rewritten = testing::run_command(cd + lint + " --fix --write two one");
  const auto clean = testing::run_command(cd + lint + " --output json one");
  CHECK(Json::parse(clean.out)["summary"]["fixable"] == 0);
  const auto one = tree(dir / "one" / "corpus");
  const auto two = tree(dir / "two" / "one" / "corpus");
  CHECK(one.size() == tree(dir / "corpus").size() - 1);  // SOURCES.md is no manifest
  CHECK(one.size() == two.size());
  for (const auto& [path, text] : one) {
    INFO(path);
    CHECK(two.count(path) == 1);
    if (two.count(path) == 1) CHECK(two.at(path) == text);
    if (path.size() > 5 && path.substr(path.size() - 5) == ".json" &&
        text.find("gpuadmit.io/class") != std::string::npos) {
      CHECK_NOTHROW(Json::parse(text));  // a fixed JSON manifest is written as JSON
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("stdin is read with -, e.g. from helm template", "[lint][cli]") {
  const auto r =
      testing::run_command(gpuadmit() + " lint --output json --namespace team-a -", kGpuPod);
  CHECK(r.exit_code == 0);
  const Json report = Json::parse(r.out);
  CHECK(report["summary"]["workloads"] == 1);
  CHECK(report["summary"]["documents"] == 1);
  CHECK(report["summary"]["fixable"] == 1);

  const auto fixed = testing::run_command(gpuadmit() + " lint --fix -", kGpuPod);
  CHECK(fixed.out.find("nvidia.com/gpu: 1") != std::string::npos);
  CHECK(fixed.err.find("1 would be changed") != std::string::npos);  // report on stderr
}

TEST_CASE("exit codes: 0 clean, 1 deny findings, 2 input and usage errors", "[lint][cli]") {
  CHECK(testing::run_command(gpuadmit() + " lint -", kGpuPod).exit_code == 0);
  CHECK(testing::run_command(gpuadmit() + " lint -", kLimitRangeTrap).exit_code == 1);
  CHECK(testing::run_command(gpuadmit() + " lint -", "a: [\n").exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint -", std::string(kLimitRangeTrap) + "---\na: [\n")
            .exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint /nonexistent/x.yaml").exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint").exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint --output xml -", kGpuPod).exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint --write /tmp/x -", kGpuPod).exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint --bogus -", kGpuPod).exit_code == 2);
  CHECK(testing::run_command(gpuadmit() + " lint --policy /nonexistent/p.yaml -", kGpuPod)
            .exit_code == 2);
}

TEST_CASE(
    "unreadable inputs (a read error, a dangling link in a folder) are reported once, never "
    "written by --write",
    "[lint][cli]") {
  // /proc/self/mem opens but every read fails (EIO), even for root.
  const auto r = testing::run_command(gpuadmit() + " lint --output json /proc/self/mem");
  CHECK(r.exit_code == 2);
  const Json report = Json::parse(r.out);
  REQUIRE(report["findings"].size() == 1);
  CHECK(report["findings"][0]["file"] == "/proc/self/mem");
  CHECK(report["findings"][0]["rule"] == "PARSE");
  CHECK(report["findings"][0]["message"] ==
        "reading the input failed: Input/output error; check the file");
  CHECK(report["summary"]["files"] == 1);
  CHECK(report["summary"]["errors"] == 1);

  const fs::path dir = fs::temp_directory_path() / "gpuadmit-lint-unreadable-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "in" / "sub");
  { std::ofstream(dir / "in" / "pod.yaml") << kGpuPod; }
  fs::create_symlink(dir / "nowhere.yaml", dir / "in" / "sub" / "gone.yaml");
  const std::string cd = "cd '" + dir.string() + "' && ";
  const auto folder = testing::run_command(cd + gpuadmit() + " lint --output json in");
  CHECK(folder.exit_code == 2);
  const Json folder_report = Json::parse(folder.out);
  REQUIRE(folder_report["findings"].size() == 1);
  CHECK(folder_report["findings"][0]["file"] == "in/sub/gone.yaml");
  CHECK(folder_report["findings"][0]["message"] ==
        "cannot open the file: No such file or directory; check the path");
  CHECK(folder_report["summary"]["workloads"] == 1);  // the other file is still linted

  // --write never leaves a partial file for an input that could not be read.
  const auto written =
      testing::run_command(cd + gpuadmit() + " lint --fix --write out /proc/self/mem in/pod.yaml");
  CHECK(written.exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "out" / "proc" / "self" / "mem"));
  CHECK_FALSE(fs::exists(dir / "out" / "proc" / "self" / "mem.gpuadmit-tmp"));
  CHECK(fs::exists(dir / "out" / "in" / "pod.yaml"));
  fs::remove_all(dir);
}

TEST_CASE("findings in documents only yaml-cpp reads get their field's line (no crash)",
          "[lint][cli]") {
  const auto r = testing::run_command(
      gpuadmit() + " lint --output json -",
      "a: 1\n--- {apiVersion: v1, kind: Pod, metadata: {name: inline}, spec: {containers: [{name: "
      "c, resources: {limits: {nvidia.com/gpu: 3}, requests: {nvidia.com/gpu: 2}}}]}}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: &n anchored}\nspec:\n  containers:\n"
      "  - name: *n\n    resources:\n      limits: {nvidia.com/gpu: 3}\n"
      "      requests: {nvidia.com/gpu: 2}\n");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const Json report = Json::parse(r.out);
  REQUIRE(report["findings"].size() == 2);
  CHECK(report["findings"][0]["rule"] == "GPU001");
  CHECK(report["findings"][0]["name"] == "inline");
  CHECK(report["findings"][0]["line"] == 2);
  CHECK(report["findings"][1]["name"] == "anchored");
  CHECK(report["findings"][1]["line"] == 11);
  CHECK(report["findings"][1]["documentLine"] == 4);
}

TEST_CASE("the namespace is metadata.namespace, else --namespace, else default", "[lint][cli]") {
  const std::string input = std::string(kLimitRangeTrap) +  // namespace ml
                            "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr2}\n"
                            "spec:\n  limits:\n  - type: Container\n    max: {nvidia.com/gpu: 4}\n";
  for (const auto& [flag, expected] : std::vector<std::pair<std::string, std::string>>{
           {"", "default"}, {" --namespace team-a", "team-a"}}) {
    INFO(flag);
    const auto r = testing::run_command(gpuadmit() + " lint --output json" + flag + " -", input);
    const Json report = Json::parse(r.out);
    REQUIRE(report["findings"].size() == 2);
    CHECK(report["findings"][0]["namespace"] == "ml");
    CHECK(report["findings"][1]["namespace"] == expected);
    CHECK(report["findings"][1]["message"].get<std::string>().find(
              "every container in namespace " + expected + " ") != std::string::npos);
  }
}

TEST_CASE("lint --output json follows SPEC §8's schema", "[lint][cli][format]") {
  const auto r = testing::run_command(gpuadmit() + " lint --output json -", kLimitRangeTrap);
  const Json report = Json::parse(r.out);
  REQUIRE(report["findings"].size() == 1);
  const Json& f = report["findings"][0];
  // SPEC §8's keys in its order, then docs/lint.md's one addition; nothing else.
  std::vector<std::string> keys;
  for (auto it = f.begin(); it != f.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"file", "line", "apiVersion", "kind", "namespace", "name",
                                         "rule", "severity", "message", "path", "documentLine"});
  std::vector<std::string> summary_keys;
  for (auto it = report["summary"].begin(); it != report["summary"].end(); ++it) {
    summary_keys.push_back(it.key());
  }
  CHECK(summary_keys == std::vector<std::string>{"documents", "workloads", "deny", "warn", "errors",
                                                 "fixable", "files"});
  CHECK(f["line"].is_number_integer());
  CHECK(f["message"].is_string());
  CHECK(f["file"] == "<stdin>");
  CHECK(f["line"] == 7);
  CHECK(f["kind"] == "LimitRange");
  CHECK(f["namespace"] == "ml");
  CHECK(f["rule"] == "GPU016");
  CHECK(f["severity"] == "deny");
  CHECK(f["path"] == "spec.limits[0].max[\"nvidia.com/gpu\"]");
  for (const char* key : {"documents", "workloads", "deny", "warn", "errors"}) {
    INFO(key);
    CHECK(report["summary"].contains(key));
  }
  CHECK(report["summary"]["deny"] == 1);
}

TEST_CASE("lint --output sarif is SARIF 2.1.0 as GitHub code scanning reads it",
          "[lint][cli][format]") {
  const auto r = testing::run_command(gpuadmit() + " lint --output sarif -",
                                      std::string(kLimitRangeTrap) + "---\nx: [\n");
  const Json sarif = Json::parse(r.out);
  CHECK(sarif["version"] == "2.1.0");
  CHECK(sarif["$schema"].get<std::string>().find("sarif-2.1.0") != std::string::npos);
  REQUIRE(sarif["runs"].size() == 1);
  const Json& run = sarif["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "gpuadmit");
  const Json& rules = run["tool"]["driver"]["rules"];
  std::set<std::string> ids;
  for (const Json& rule : rules) {
    CHECK(ids.insert(rule["id"].get<std::string>()).second);  // one rule per id
    CHECK_FALSE(rule["shortDescription"]["text"].get<std::string>().empty());
    CHECK_FALSE(rule["help"]["text"].get<std::string>().empty());
  }
  for (const char* id : {"GPU001", "GPU013", "GPU016", "GPU017", "PARSE"}) CHECK(ids.count(id));
  REQUIRE(run["results"].size() == 2);
  for (const Json& result : run["results"]) {
    CHECK(ids.count(result["ruleId"].get<std::string>()));
    CHECK(rules[result["ruleIndex"].get<size_t>()]["id"] == result["ruleId"]);
    CHECK((result["level"] == "error" || result["level"] == "warning"));
    CHECK_FALSE(result["message"]["text"].get<std::string>().empty());
    const Json& location = result["locations"][0]["physicalLocation"];
    CHECK(location["artifactLocation"]["uri"] == "stdin");
    CHECK(location["region"]["startLine"].get<int>() >= 1);
  }
  CHECK(run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 7);
}

TEST_CASE("lint --output junit has one testcase per workload and consistent counts",
          "[lint][cli][format]") {
  const std::string input = std::string(kGpuPod) + "---\n" + kLimitRangeTrap +
                            "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\nx: [\n";
  const auto r = testing::run_command(gpuadmit() + " lint --output junit -", input);
  CHECK(r.out.rfind("<?xml", 0) == 0);
  const size_t root = r.out.find("<testsuites");
  REQUIRE(root != std::string::npos);
  const std::string root_tag = r.out.substr(root, r.out.find('>', root) - root);
  const size_t cases = count(r.out, "<testcase ");
  CHECK(cases == 3);  // the Pod, the LimitRange, the unreadable document (the Service is skipped)
  CHECK(attribute(root_tag, "tests") == static_cast<long>(cases));
  CHECK(attribute(root_tag, "failures") == static_cast<long>(count(r.out, "<failure ")));
  CHECK(attribute(root_tag, "errors") == static_cast<long>(count(r.out, "<error ")));
  CHECK(attribute(root_tag, "failures") == 1);
  CHECK(attribute(root_tag, "errors") == 1);
  const size_t suite = r.out.find("<testsuite ");
  const std::string suite_tag = r.out.substr(suite, r.out.find('>', suite) - suite);
  CHECK(attribute(suite_tag, "tests") == 3);
  CHECK(count(r.out, "</testsuite>") == count(r.out, "<testsuite "));

  // Over the whole corpus and the quota_sum golden input (many suites, the namespace quota suite
  // last, with two failing namespaces): every suite's counts match its elements, and the root's
  // are their sums.
  const std::string policy =
      std::string("'") + GPUADMIT_SOURCE_DIR + "/tests/lint/cases/workloads_mix/policy.yaml'";
  const auto all =
      testing::run_command(gpuadmit() + " lint --output junit --policy " + policy + " " + corpus() +
                           " '" + GPUADMIT_SOURCE_DIR + "/tests/lint/cases/quota_sum/input'");
  const std::string& xml = all.out;
  long tests = 0, failures = 0, errors = 0;
  size_t suites = 0;
  for (size_t at = xml.find("<testsuite "); at != std::string::npos;
       at = xml.find("<testsuite ", at + 1)) {
    const size_t end = xml.find("</testsuite>", at);
    REQUIRE(end != std::string::npos);
    const std::string body = xml.substr(at, end - at);
    const std::string tag = body.substr(0, body.find('>'));
    INFO(tag);
    CHECK(attribute(tag, "tests") == static_cast<long>(count(body, "<testcase ")));
    CHECK(attribute(tag, "failures") == static_cast<long>(count(body, "<failure ")));
    CHECK(attribute(tag, "errors") == static_cast<long>(count(body, "<error ")));
    tests += attribute(tag, "tests");
    failures += attribute(tag, "failures");
    errors += attribute(tag, "errors");
    ++suites;
  }
  CHECK(suites > 50);
  CHECK(xml.find("<testsuite name=\"namespace GPU quotas\"") != std::string::npos);
  const size_t all_root = xml.find("<testsuites");
  const std::string all_tag = xml.substr(all_root, xml.find('>', all_root) - all_root);
  CHECK(attribute(all_tag, "tests") == tests);
  CHECK(attribute(all_tag, "failures") == failures);
  CHECK(attribute(all_tag, "errors") == errors);
  CHECK(errors == 1);  // the upstream-invalid corpus file
  // (NVIDIA's DRA samples gpu-test-mps and gpu-test4 are GPU pods, no longer GPU009 failures.)
  CHECK(failures >= 8);
}

TEST_CASE("lint --output sarif: absolute paths under the working directory become relative URIs",
          "[lint][cli][format]") {
  const fs::path dir = fs::temp_directory_path() / "gpuadmit-lint-sarif-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "deploy dir");
  { std::ofstream(dir / "deploy dir" / "lr.yaml") << kLimitRangeTrap; }
  const auto r = testing::run_command("cd '" + dir.string() + "' && " + gpuadmit() +
                                      " lint --output sarif \"$PWD/deploy dir/lr.yaml\"");
  const Json sarif = Json::parse(r.out);
  REQUIRE(sarif["runs"][0]["results"].size() == 1);
  const Json& location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  CHECK(location["artifactLocation"]["uri"] == "deploy%20dir/lr.yaml");
  CHECK(location["region"]["startLine"] == 7);
  CHECK(sarif_uri("/repo/a/b.yaml", "/repo") == "a/b.yaml");
  CHECK(sarif_uri("/repo/a/b.yaml", "/repo/") == "a/b.yaml");
  CHECK(sarif_uri("/repository/b.yaml", "/repo") == "file:///repository/b.yaml");
  CHECK(sarif_uri("./x/y.yaml", "/repo") == "x/y.yaml");
  // No `.` or `..` segments (the SARIF Multitool's SARIF1002).
  CHECK(sarif_uri("/repo/../shared/c.yaml", "/repo") == "file:///shared/c.yaml");
  CHECK(sarif_uri("../shared/c.yaml", "/work/repo") == "file:///work/shared/c.yaml");
  CHECK(sarif_uri("a/./b/../c.yaml", "/repo") == "a/c.yaml");
  CHECK(sarif_uri("<stdin>", "/repo") == "stdin");
  fs::remove_all(dir);
}

TEST_CASE("lint --output junit stays valid UTF-8 XML for any file name, and names the failing rule",
          "[lint][cli][format]") {
  const fs::path dir = fs::temp_directory_path() / "gpuadmit-lint-junit-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A duplicate key (a PARSE warning) next to the deny finding, in a file named with a non-UTF-8
  // byte and XML markup.
  const std::string name = "a<&\"\xff.yaml";
  {
    std::ofstream(dir / name) << std::string(kLimitRangeTrap)
                                     .replace(0, 14,
                                              "apiVersion: v1\n"
                                              "apiVersion: v1");
  }
  const auto r = testing::run_command("cd '" + dir.string() + "' && " + gpuadmit() +
                                      " lint --output junit a*.yaml");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find('\xff') == std::string::npos);
  CHECK(r.out.find("<testsuite name=\"a&lt;&amp;&quot;\xef\xbf\xbd.yaml\"") != std::string::npos);
  CHECK(r.out.find("<failure type=\"GPU016\" message=\"GPU016: LimitRange lr ") !=
        std::string::npos);
  CHECK(r.out.find("<system-out>a&lt;&amp;&quot;\xef\xbf\xbd.yaml:2: warn PARSE: duplicate key") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "exit codes: a duplicate-key warning alone is 0, and a PARSE error wins over deny findings",
    "[lint][cli]") {
  const auto warned = testing::run_command(gpuadmit() + " lint --output json -",
                                           std::string(kGpuPod) + "kind: Pod\n");
  CHECK(warned.exit_code == 0);
  const Json report = Json::parse(warned.out);
  REQUIRE(report["findings"].size() == 1);
  CHECK(report["findings"][0]["rule"] == "PARSE");
  CHECK(report["findings"][0]["severity"] == "warn");
  CHECK(report["findings"][0]["line"] == 12);
  // Another file's PARSE error makes the run incomplete: 2, though deny findings exist too.
  const fs::path dir = fs::temp_directory_path() / "gpuadmit-lint-exit-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "a.yaml") << kLimitRangeTrap; }
  { std::ofstream(dir / "b.yaml") << "a: [\n"; }
  const auto both = testing::run_command(gpuadmit() + " lint --output json '" + dir.string() + "'");
  CHECK(both.exit_code == 2);
  CHECK(Json::parse(both.out)["summary"]["deny"] == 1);
  CHECK(Json::parse(both.out)["summary"]["errors"] == 1);
  fs::remove_all(dir);
}

TEST_CASE("lint --output text groups by file, without colour when not on a terminal",
          "[lint][cli][format]") {
  const auto r = testing::run_command(gpuadmit() + " lint -", kLimitRangeTrap);
  CHECK(r.out.rfind("<stdin>\n  7:  deny   GPU016  LimitRange ml/lr: ", 0) == 0);
  CHECK(r.out.find("\x1b[") == std::string::npos);
  CHECK(r.out.find("1 deny, 0 warn, 0 errors in 1 document (0 workloads) from 1 file") !=
        std::string::npos);
}

TEST_CASE("lint --output text is coloured on a terminal, unless --no-color or NO_COLOR",
          "[lint][cli][format]") {
  if (testing::run_command("command -v script").exit_code != 0) {
    WARN("util-linux script(1) is missing: no pseudo-terminal to test colour with");
    return;
  }
  const fs::path file = fs::temp_directory_path() / "gpuadmit-lint-colour-test.yaml";
  { std::ofstream(file) << kLimitRangeTrap; }
  const auto on_tty = [&](const std::string& env, const std::string& flags) {
    return testing::run_command(env + " script -qec \"" + gpuadmit() + " lint" + flags + " '" +
                                file.string() + "'\" /dev/null")
        .out;
  };
  const std::string coloured = on_tty("", "");
  CHECK(coloured.find("\x1b[31mdeny \x1b[0m  GPU016") != std::string::npos);
  CHECK(coloured.find("\x1b[1m") != std::string::npos);  // the file name
  CHECK(on_tty("", " --no-color").find("\x1b[") == std::string::npos);
  CHECK(on_tty("NO_COLOR=1", "").find("\x1b[") == std::string::npos);
  fs::remove(file);
}

TEST_CASE("lint --fix --write mirrors the input paths", "[lint][cli]") {
  // A directory of its own: a fixed name would be shared with other checkouts testing at once.
  std::string dir_template = (fs::temp_directory_path() / "gpuadmit-lint-write-XXXXXX").string();
  REQUIRE(mkdtemp(dir_template.data()) != nullptr);
  const fs::path dir = dir_template;
  fs::create_directories(dir / "in" / "sub");
  { std::ofstream(dir / "in" / "sub" / "pod.yaml") << kGpuPod; }
  {
    std::ofstream(dir / "in" / "pod.json")
        << R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}})";
  }
  const auto r = testing::run_command("cd '" + dir.string() + "' && " + gpuadmit() +
                                      " lint --fix --write out in");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("2 would be changed") != std::string::npos);  // the report on stdout
  const std::string yaml = testing::slurp((dir / "out" / "in" / "sub" / "pod.yaml").string());
  CHECK(yaml.find("tolerations:") != std::string::npos);
  const Json json = Json::parse(testing::slurp((dir / "out" / "in" / "pod.json").string()));
  CHECK(json["spec"].contains("tolerations"));
  fs::remove_all(dir);
}

// The GPU stack's configs (GPU028–GPU030, docs/lint.md) through the binary, with the default
// policy (one class `gpu`, whole GPUs, no MIG): a one-key device plugin ConfigMap that
// time-slices every GPU 4 ways contradicts it; a scheduler scoring GPUs with LeastAllocated is a
// warning; the exit code is deny's.
TEST_CASE("lint reads the device plugin's and the scheduler's configs", "[lint][cli]") {
  constexpr const char* kConfigs = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources:
        - {name: nvidia.com/gpu, weight: 1}
)";
  const auto r = testing::run_command(gpuadmit() + " lint --output json -", kConfigs);
  CHECK(r.exit_code == 1);
  const Json report = Json::parse(r.out);
  std::vector<std::string> seen;
  for (const Json& f : report["findings"]) {
    seen.push_back(f["rule"].get<std::string>() + " " + f["severity"].get<std::string>() + " " +
                   std::to_string(f["line"].get<int>()) + " " + f["path"].get<std::string>());
  }
  CHECK(seen == std::vector<std::string>{
                    "GPU028 deny 7 data[\"any\"].sharing.timeSlicing.resources[0].replicas",
                    "GPU030 warn 21 profiles[0].pluginConfig[0].args.scoringStrategy"});
}

// GPU034 on standard input, read once with no pre-pass (docs/lint.md): a ResourceFlavor counts
// for the ClusterQueues after it. Kueue assigns a resource only from a flavor whose resource
// group covers it (kueue pkg/scheduler/flavorassigner/flavorassigner.go), and class t4's pods
// request nvidia.com/gpu.shared (time-slicing renameByDefault).
TEST_CASE("lint: GPU034 on stdin reads the Kueue objects before the ClusterQueue",
          "[lint][cli][GPU034]") {
  const std::string policy =
      "'" + std::string(GPUADMIT_SOURCE_DIR) + "/tests/lint/cases/kueue_queues/policy.yaml'";
  const std::string flavor =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: t4}\nspec:\n  "
      "nodeLabels: {nvidia.com/gpu.product: Tesla-T4}\n";
  const std::string queue =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  "
      "resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: t4\n   "
      "   resources: [{name: nvidia.com/gpu, nominalQuota: 4}]\n";
  const auto after = testing::run_command(
      gpuadmit() + " lint --policy " + policy + " --output json -", flavor + "---\n" + queue);
  CHECK(after.exit_code == 1);
  const Json report = Json::parse(after.out);
  REQUIRE(report["findings"].size() == 2);
  CHECK(report["findings"][0]["rule"] == "GPU034");
  CHECK(report["findings"][0]["severity"] == "deny");
  CHECK(report["findings"][0]["path"] == "spec.resourceGroups[0].flavors[0].resources");
  CHECK(report["findings"][0]["line"] == 15);
  CHECK(report["findings"][1]["severity"] == "warn");
  CHECK(report["findings"][1]["path"] == "spec.resourceGroups[0].flavors[0].resources[0].name");
  // The ClusterQueue first: its flavor is not yet known, so nothing is judged.
  const auto before = testing::run_command(
      gpuadmit() + " lint --policy " + policy + " --output json -", queue + "---\n" + flavor);
  CHECK(before.exit_code == 0);
  CHECK(Json::parse(before.out)["findings"].empty());
}

}  // namespace
}  // namespace cli_test
}  // namespace gpuadmit::lint
