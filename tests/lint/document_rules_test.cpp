// The document rules GPU016 and GPU017 (table-driven, exact messages); GPU028–GPU031 have their
// own tests in tests/rules/.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"
#include "rules/document_rules.h"
#include "yaml/reader.h"

namespace gpuadmit::lint {
namespace document_rules_test {
namespace {

Json read_back(const std::string& yaml) {
  yaml::SourceDocument source;
  source.text = yaml;
  yaml::ParsedDocument d = yaml::parse_document(source, false);
  INFO(yaml);
  REQUIRE_FALSE(d.error);
  return d.value;
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
}  // namespace document_rules_test
}  // namespace gpuadmit::lint
