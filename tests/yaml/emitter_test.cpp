// The YAML emitter of `lint --fix` and `render` (yaml/emitter.h): round trips over the whole
// corpus, key order and quoting as go-yaml v2 (kubectl) reads it.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/yaml_to_json.h"
#include "yaml/emitter.h"
#include "yaml/reader.h"
#include "yaml/scalar.h"

namespace gpuadmit::yaml {
namespace emitter_test {
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
          "[yaml][emitter]") {
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

TEST_CASE("the emitter keeps key order, block style and quantities as strings", "[yaml][emitter]") {
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
          "[yaml][emitter]") {
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

}  // namespace
}  // namespace emitter_test
}  // namespace gpuadmit::yaml
