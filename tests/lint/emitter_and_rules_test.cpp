// The --fix YAML emitter (round trips over the whole corpus) and the document rules GPU016 and
// GPU017 (table-driven, exact messages).

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "lint/yaml_emitter.h"
#include "lint/yaml_reader.h"
#include "lint/yaml_scalar.h"
#include "policies/loader.h"
#include "rules/document_rules.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit::lint {
namespace {

namespace fs = std::filesystem;

Json read_back(const std::string& yaml) {
  SourceDocument source;
  source.text = yaml;
  ParsedDocument d = parse_document(source, false);
  INFO(yaml);
  REQUIRE_FALSE(d.error);
  return d.value;
}

TEST_CASE("emitted YAML reads back as the same JSON, for every corpus document",
          "[lint][emitter]") {
  size_t documents = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GPUADMIT_SHARED_DIR) / "corpus")) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    const std::string text = testing::read_file(e.path().string());
    DocumentStream stream(text);
    SourceDocument source;
    while (stream.next(source)) {
      ParsedDocument d = parse_document(source, e.path().extension() == ".json");
      if (d.empty || d.error) continue;
      std::string yaml;
      emit_yaml(d.value, yaml);
      INFO(e.path().string() << ":" << source.first_line);
      CHECK(read_back(yaml) == d.value);
      // Idempotent: emitting the read-back document gives the same text.
      std::string again;
      emit_yaml(read_back(yaml), again);
      CHECK(again == yaml);
      ++documents;
    }
  }
  CHECK(documents > 150);
}

TEST_CASE("the emitter keeps key order, block style and quantities as strings", "[lint][emitter]") {
  Json v = Json::parse(R"({"z": 1, "a": {"cpu": "500m", "nvidia.com/gpu": "1", "on": "yes"},
    "list": [{"k": "v", "n": 2.5}, [], "multi\nline\n", "", null, true, {}]})");
  std::string yaml;
  emit_yaml(v, yaml);
  CHECK(yaml ==
        "z: 1\n"
        "a:\n"
        "  cpu: 500m\n"
        "  nvidia.com/gpu: \"1\"\n"
        "  \"on\": \"yes\"\n"
        "list:\n"
        "- k: v\n"
        "  \"n\": 2.5\n"  // go-yaml v2 reads a plain n as false
        "- []\n"
        "- |\n"
        "  multi\n"
        "  line\n"
        "- \"\"\n"
        "- null\n"
        "- true\n"
        "- {}\n");
  CHECK(read_back(yaml) == v);
}

TEST_CASE("the emitter quotes what go-yaml v2 (kubectl) would read differently",
          "[lint][emitter]") {
  // +.inf is a float and << a merge key to go-yaml v2; NEL, LS and PS are line breaks in YAML 1.1,
  // a BOM is stripped, DEL and C1 controls may not appear raw: all are escaped in double quotes.
  Json v = Json::object();
  v["a"] = "+.inf";
  v["<<"] = "<<";
  v["b"] = "+5x";
  v["ls"] = "x\u2028y";
  v["ps"] = "x\u2029y";
  v["nel"] = "x\u0085y";
  v["bom"] = "\ufeffz";
  v["del"] = "x\u007fy\u009b";
  v["block"] = "l1\nl2\u2028\n";
  v["ok"] = "caf\u00e9 \u2014 \U0001F680";
  std::string yaml;
  emit_yaml(v, yaml);
  CHECK(yaml ==
        "a: \"+.inf\"\n"
        "\"<<\": \"<<\"\n"
        "b: \"+5x\"\n"
        "ls: \"x\\u2028y\"\n"
        "ps: \"x\\u2029y\"\n"
        "nel: \"x\\u0085y\"\n"
        "bom: \"\\ufeffz\"\n"
        "del: \"x\\u007fy\\u009b\"\n"
        "block: \"l1\\nl2\\u2028\\n\"\n"
        "ok: caf\u00e9 \u2014 \U0001F680\n");
  CHECK(read_back(yaml) == v);
  const std::vector<std::string> plain = {"+.inf", "<<", "x\u2028y", "x\u0085y", "\ufeffz"};
  for (const std::string& s : plain) {
    INFO(s);
    CHECK_FALSE(plain_scalar_is_safe(s));
  }
}

struct RuleCase {
  std::string name;
  std::string object;  // YAML
  std::vector<std::string> paths;
};

std::vector<Violation> run_rules(const std::string& yaml, const CompiledPolicy& policy) {
  const Json object = read_back(yaml);
  std::vector<Violation> out;
  DocumentContext ctx;
  ctx.policy = &policy;
  ctx.ns = "ml";
  for (const auto& rule : default_document_rules()) {
    if (rule->handles(string_member(object, "apiVersion"), string_member(object, "kind"))) {
      rule->check(object, ctx, out);
    }
  }
  return out;
}

TEST_CASE("GPU016 and GPU017 find the LimitRange and ResourceQuota traps", "[lint][rules]") {
  auto loaded = load_compiled_policy("");
  REQUIRE(loaded.policy);
  const std::vector<RuleCase> cases = {
      {"max without default",
       "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: "
       "Container\n    max: {nvidia.com/gpu: 2, cpu: 4}\n",
       {"spec.limits[0].max[\"nvidia.com/gpu\"]"}},
      {"max with default is fine",
       "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: "
       "Container\n    max: {nvidia.com/gpu: 2}\n    default: {nvidia.com/gpu: 0}\n",
       {}},
      {"min without defaults; MIG resources count",
       "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: "
       "Container\n    min: {nvidia.com/mig-1g.10gb: 1}\n",
       {"spec.limits[0].min[\"nvidia.com/mig-1g.10gb\"]"}},
      {"zero max and Pod items are not traps",
       "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: "
       "Container\n    max: {nvidia.com/gpu: 0}\n  - type: Pod\n    max: {nvidia.com/gpu: 8}\n",
       {}},
      {"malformed LimitRange",
       "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits: [1, {max: 3}]\n",
       {}},
      {"bare and limits. quota keys",
       "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard:\n    "
       "nvidia.com/gpu: 4\n    limits.nvidia.com/gpu.shared: 2\n    limits.cpu: 8\n",
       {"spec.hard[\"nvidia.com/gpu\"]", "spec.hard[\"limits.nvidia.com/gpu.shared\"]"}},
      {"the requests. form makes the quota effective",
       "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard:\n    "
       "requests.nvidia.com/gpu: 4\n    limits.nvidia.com/gpu: 4\n",
       {}},
  };
  for (const RuleCase& c : cases) {
    INFO(c.name);
    std::vector<std::string> paths;
    for (const Violation& v : run_rules(c.object, *loaded.policy)) paths.push_back(v.path);
    CHECK(paths == c.paths);
  }
  const auto v = run_rules(cases[5].object, *loaded.policy);
  REQUIRE(v.size() == 2);
  CHECK(v[0].message ==
        "ResourceQuota q in namespace ml sets hard[\"nvidia.com/gpu\"]: 4, which Kubernetes does "
        "not enforce: extended resources are counted only as requests.nvidia.com/gpu; rename the "
        "key to requests.nvidia.com/gpu");
}

}  // namespace
}  // namespace gpuadmit::lint
