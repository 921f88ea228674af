// Same engine as the webhook, checked from the outside: for every object of the golden inputs and
// of the shared corpus, `gpuadmit lint --fix` prints exactly the object that `gpuadmit review`'s
// JSON Patch produces (key order included), and lint's verdict is the webhook's: the object is
// denied iff lint reports deny/error findings for it, with the same messages, and the webhook's
// warnings are lint's warn findings.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/join.h"
#include "engine/json.h"
#include "tests/support/process.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {
namespace webhook_parity_test {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) { return "'" + s + "'"; }
const std::string kBinary = quote(GPUADMIT_BINARY);

std::string base64_decode(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int value = 0, bits = -8;
  for (char c : in) {
    if (c == '=') break;
    const size_t d = kAlphabet.find(c);
    REQUIRE(d != std::string::npos);
    value = (value << 6) + static_cast<int>(d);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((value >> bits) & 0xff);
      bits -= 8;
    }
  }
  return out;
}

bool is_list(const Json& v) {
  const std::string_view kind = string_member(v, "kind");
  return kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" && v.contains("items") &&
         v["items"].is_array();
}

// The files lint reads under a folder, in lint's order.
std::vector<std::string> manifest_files(const fs::path& dir) {
  if (fs::is_regular_file(dir)) return {dir.string()};  // a file is linted whatever its name
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The readable, non-empty documents of a text, in order.
std::vector<Json> documents_of(const std::string& text, bool json_file) {
  std::vector<Json> docs;
  yaml::DocumentStream stream(text);
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument d = yaml::parse_document(source, json_file);
    if (!d.empty && !d.error) docs.push_back(std::move(d.value));
  }
  return docs;
}

// Lint's findings for one object, as the webhook words them.
struct Verdict {
  std::vector<std::string> deny;  // "GPU001: ..." (deny and error findings)
  std::vector<std::string> warn;  // "GPU014: ..."
};
using ObjectKey = std::tuple<std::string, std::string, std::string, std::string>;

// The webhook's answer for one object: the patched object and its verdict.
// `claims`: " --claims FILE" for each file whose DRA claims the object may reference (lint
// resolves them across all its input; docs/dra.md).
Json review(const Json& object, const std::string& ns, const std::string& policy, Verdict& verdict,
            const std::string& claims = "", const Json& user_info = Json()) {
  const std::string api_version(string_member(object, "apiVersion"));
  const size_t slash = api_version.find('/');
  Json request = {
      {"uid", "parity-1"},
      {"kind",
       {{"group", slash == std::string::npos ? "" : api_version.substr(0, slash)},
        {"version", slash == std::string::npos ? api_version : api_version.substr(slash + 1)},
        {"kind", object.value("kind", "")}}},
      {"operation", "CREATE"},
      {"namespace", ns},
      {"object", object}};
  if (!user_info.is_null()) request["userInfo"] = user_info;
  const Json body = {
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
  const auto r =
      testing::run_command(kBinary + " review --endpoint mutate --policy " + quote(policy) + claims,
                           body.dump(-1, ' ', false, Json::error_handler_t::replace));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json response = Json::parse(r.out)["response"];
  if (response.contains("warnings")) {
    for (const Json& w : response["warnings"]) verdict.warn.push_back(w.get<std::string>());
  }
  if (!response["allowed"].get<bool>()) {
    // "gpuadmit denied Kind ns/name: GPU001: ...; GPU004: ..."
    const std::string message = response["status"]["message"];
    const std::string prefix = "gpuadmit denied " + object.value("kind", "") + " " + ns + "/";
    CHECK(message.rfind(prefix, 0) == 0);
    const size_t colon = message.find(": ", prefix.size());
    REQUIRE(colon != std::string::npos);
    verdict.deny.push_back(message.substr(colon + 2));
    CHECK_FALSE(response.contains("patch"));
    return object;
  }
  if (!response.contains("patch")) return object;
  CHECK(response["patchType"] == "JSONPatch");
  const Json patch = Json::parse(base64_decode(response["patch"].get<std::string>()));
  return object.patch(patch);
}

// Lints `inputs` (from `cwd`) with --fix and --output json, then replays every object through
// `gpuadmit review`.
// Returns the number of objects the webhook patched.
size_t check_parity(const fs::path& cwd, const std::string& input, const std::string& policy) {
  const std::string cd = "cd " + quote(cwd.string()) + " && ";
  const auto fixed =
      testing::run_command(cd + kBinary + " lint --policy " + quote(policy) + " --fix " + input);
  const auto json = testing::run_command(cd + kBinary + " lint --policy " + quote(policy) +
                                         " --output json " + input);
  INFO(fixed.err);
  REQUIRE((fixed.exit_code >= 0 && fixed.exit_code <= 2));
  const Json report = Json::parse(json.out);

  // Lint's per-object verdicts. The webhook never sees the objects of the document rules
  // (LimitRange, ResourceQuota, the GPU stack's configs: GPU016/017, GPU028–031, GPU034), the
  // namespace sum (GPU013 "namespace ...") or the manifest text (PARSE).
  std::map<ObjectKey, Verdict> linted;
  static const std::set<std::string> kLintOnly = {"PARSE",  "GPU016", "GPU017", "GPU028",
                                                  "GPU029", "GPU030", "GPU031", "GPU034"};
  for (const Json& f : report["findings"]) {
    const std::string rule = f["rule"];
    const std::string message = f["message"];
    if (kLintOnly.count(rule)) continue;
    if (rule == "GPU013" && message.rfind("namespace ", 0) == 0) continue;
    Verdict& v = linted[{f["file"], f["kind"], f["namespace"], f["name"]}];
    (f["severity"] == "warn" ? v.warn : v.deny).push_back(rule + ": " + message);
  }

  std::vector<Json> expected;
  std::map<ObjectKey, Verdict> reviewed;
  size_t patched = 0;
  // The files with DRA claim objects or references, which lint resolves references against:
  // given to review too, so both judge a reference to a claim none of them holds (GPU023).
  std::string claims;
  for (const std::string& file : manifest_files(cwd / input)) {
    if (testing::slurp(file).find("esourceClaim") != std::string::npos) {
      claims += " --claims " + quote(file);
    }
  }
  for (const std::string& file : manifest_files(cwd / input)) {
    const std::string display = fs::relative(file, cwd).string();
    const bool json_file = fs::path(file).extension() == ".json";
    for (Json& doc : documents_of(testing::slurp(file), json_file)) {
      std::vector<Json*> objects;
      if (doc.is_object() && is_list(doc)) {
        for (Json& item : doc["items"]) objects.push_back(&item);
      } else {
        objects.push_back(&doc);
      }
      for (Json* object : objects) {
        if (!object->is_object() || !object->contains("kind")) continue;
        std::string ns;
        if (const Json* m = find_member(*object, "metadata")) ns = string_member(*m, "namespace");
        if (ns.empty()) ns = "default";
        std::string name;
        if (const Json* m = find_member(*object, "metadata")) name = string_member(*m, "name");
        if (const Json* m = find_member(*object, "metadata"); m != nullptr && name.empty()) {
          name = string_member(*m, "generateName");
        }
        Verdict v;
        Json after = review(*object, ns, policy, v, claims);
        patched += after != *object;
        Verdict& merged = reviewed[{display, object->value("kind", ""), ns, name}];
        merged.deny.insert(merged.deny.end(), v.deny.begin(), v.deny.end());
        merged.warn.insert(merged.warn.end(), v.warn.begin(), v.warn.end());
        *object = std::move(after);
      }
      expected.push_back(std::move(doc));
    }
  }

  const std::vector<Json> printed = documents_of(fixed.out, false);
  REQUIRE(printed.size() == expected.size());
  for (size_t i = 0; i < printed.size(); ++i) {
    INFO("document " << i << " of the --fix output");
    CHECK(printed[i].dump() == expected[i].dump());  // exact, key order included
  }
  CHECK(report["summary"]["fixable"].get<size_t>() == patched);

  for (const auto& [key, v] : reviewed) {
    INFO(std::get<0>(key) << ": " << std::get<1>(key) << " " << std::get<2>(key) << "/"
                          << std::get<3>(key));
    const auto it = linted.find(key);
    const Verdict none;
    const Verdict& l = it == linted.end() ? none : it->second;
    CHECK(join(l.deny, "; ") == join(v.deny, "; "));
    CHECK(l.warn == v.warn);
  }
  for (const auto& [key, v] : linted) {
    INFO(std::get<0>(key) << ": " << std::get<1>(key) << " " << std::get<3>(key));
    CHECK(reviewed.count(key) == 1);  // every finding belongs to an object the webhook saw
  }
  return patched;
}

TEST_CASE(
    "lint --fix equals applying gpuadmit review's patch, and verdicts agree, on the golden "
    "inputs",
    "[lint][parity]") {
  const fs::path cases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "lint" / "cases";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(cases)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 3);
  size_t patched = 0;
  for (const fs::path& dir : dirs) {
    INFO("case " << dir.filename().string());
    patched += check_parity(dir, "input", (dir / "policy.yaml").string());
  }
  CHECK(patched >= 3);
}

// The pod-spec golden cases (tests/cases/<case>/input.yaml, with the case's policy or the shared
// one): the webhook (`review`) and lint reach the same object and verdict on each.
TEST_CASE(
    "lint --fix equals applying gpuadmit review's patch, and verdicts agree, on the pod-spec "
    "golden cases",
    "[lint][parity][cases]") {
  const fs::path cases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(cases)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 90);
  size_t patched = 0;
  for (const fs::path& dir : dirs) {
    INFO("case " << dir.filename().string());
    const fs::path policy =
        fs::exists(dir / "policy.yaml") ? dir / "policy.yaml" : cases / "policy.yaml";
    patched += check_parity(dir, "input.yaml", policy.string());
  }
  CHECK(patched >= 50);
}

// The DRA golden cases (tests/cases/*-dra-*): `gpuadmit review --claims claims.yaml` (the
// webhook's codec), lint over input.yaml and claims.yaml, and the case's findings.json (which the
// pipeline is held to by tests/cases) agree, finding for finding.
TEST_CASE("DRA golden cases: review, lint and the expected findings agree", "[lint][parity][dra]") {
  const fs::path cases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases";
  size_t checked = 0;
  for (const auto& e : fs::directory_iterator(cases)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.find("-dra-") == std::string::npos) continue;
    INFO("case " << name);
    const fs::path dir = e.path();
    const std::string policy =
        (fs::exists(dir / "policy.yaml") ? dir / "policy.yaml" : cases / "policy.yaml").string();
    std::string claims = " --claims " + quote((dir / "input.yaml").string());
    std::string lint_inputs = quote((dir / "input.yaml").string());
    if (fs::exists(dir / "claims.yaml")) {
      claims += " --claims " + quote((dir / "claims.yaml").string());
      lint_inputs += " " + quote((dir / "claims.yaml").string());
    }
    const Json input = documents_of(testing::slurp((dir / "input.yaml").string()), false).at(0);
    std::string ns = "default";
    if (const Json* m = find_member(input, "metadata")) {
      if (!string_member(*m, "namespace").empty()) ns = string_member(*m, "namespace");
    }
    // request.yaml: the AdmissionRequest's userInfo (the scheduler's claims, docs/dra.md).
    Json user_info;
    if (fs::exists(dir / "request.yaml")) {
      user_info =
          documents_of(testing::slurp((dir / "request.yaml").string()), false).at(0)["userInfo"];
    }
    Verdict reviewed;
    review(input, ns, policy, reviewed, claims, user_info);

    const auto linted = testing::run_command(kBinary + " lint --policy " + quote(policy) +
                                             " --output json " + lint_inputs);
    const Json report = Json::parse(linted.out);
    Verdict from_lint;
    for (const Json& f : report["findings"]) {
      if (f["file"] != (dir / "input.yaml").string()) continue;
      const std::string line =
          f["rule"].get<std::string>() + ": " + f["message"].get<std::string>();
      (f["severity"] == "warn" ? from_lint.warn : from_lint.deny).push_back(line);
    }
    Verdict expected;
    if (fs::exists(dir / "findings.json")) {
      for (const Json& f : Json::parse(testing::slurp((dir / "findings.json").string()))) {
        const std::string line =
            f["rule"].get<std::string>() + ": " + f["message"].get<std::string>();
        (f["severity"] == "warn" ? expected.warn : expected.deny).push_back(line);
      }
    }
    CHECK(join(reviewed.deny, "; ") == join(expected.deny, "; "));
    CHECK(reviewed.warn == expected.warn);
    ++checked;
    // Lint has no request, so no userInfo: a case that depends on who submits the object is
    // the webhook's alone (lint checks the scheduler's claims like a tenant's, as case 103).
    if (!user_info.is_null()) continue;
    CHECK(join(from_lint.deny, "; ") == join(expected.deny, "; "));
    CHECK(from_lint.warn == expected.warn);
  }
  CHECK(checked >= 13);
}

TEST_CASE("lint --fix equals applying gpuadmit review's patch, and verdicts agree, on the corpus",
          "[lint][parity][corpus]") {
  const fs::path policy =
      fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "lint" / "cases" / "workloads_mix" / "policy.yaml";
  CHECK(check_parity(fs::path(GPUADMIT_SHARED_DIR), "corpus", policy.string()) >= 35);
}

}  // namespace
}  // namespace webhook_parity_test
}  // namespace gpuadmit::lint
