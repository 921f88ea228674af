// lint's manifest reader: document splitting, the fast path against yaml-cpp, scalar typing,
// duplicate keys, limits (billion laughs, deep nesting), field lines, and no crash on mangled
// corpus files.

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/yaml_to_json.h"
#include "yaml/reader.h"
#include "yaml/scalar.h"

namespace gpuadmit::yaml {
namespace reader_test {
namespace {

namespace fs = std::filesystem;

std::vector<SourceDocument> split(std::string_view text) {
  DocumentStream stream(text);
  std::vector<SourceDocument> docs;
  SourceDocument d;
  while (stream.next(d)) docs.push_back(d);
  return docs;
}

std::vector<ParsedDocument> parse_all(std::string_view text, bool json_file = false) {
  std::vector<ParsedDocument> out;
  for (const SourceDocument& d : split(text)) {
    ParsedDocument p = parse_document(d, json_file);
    if (!p.empty) out.push_back(std::move(p));
  }
  return out;
}

Json parse_one(std::string_view text) {
  auto docs = parse_all(text);
  REQUIRE(docs.size() == 1);
  INFO((docs[0].error ? docs[0].error->message : ""));
  REQUIRE_FALSE(docs[0].error);
  return docs[0].value;
}

// One YAML text read by parse_document (the fast path where it can) and by yaml-cpp.
std::pair<ParsedDocument, ParsedDocument> fast_and_yaml_cpp(const std::string& text) {
  SourceDocument source;
  source.text = text;
  return {parse_document(source, false), parse_document_yaml_cpp(source)};
}

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GPUADMIT_SHARED_DIR) / "corpus")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("documents are split at --- and ... lines with their first lines", "[lint][reader]") {
  auto docs = split("# header\n---\na: 1\n--- # c\nb: 2\r\n...\nc: 3\n---\n");
  REQUIRE(docs.size() == 5);
  CHECK(docs[0].text == "# header\n");
  CHECK(docs[1].text == "a: 1\n");
  CHECK(docs[1].first_line == 3);
  CHECK(docs[2].text == "b: 2\r\n");
  CHECK(docs[2].first_line == 5);
  CHECK(docs[3].text == "c: 3\n");
  CHECK(docs[3].first_line == 7);
  CHECK(docs[4].text.empty());

  auto carried = split("--- {a: 1}\n---\nb: 2");
  REQUIRE(carried.size() == 3);
  CHECK(carried[1].starts_with_marker);
  CHECK(carried[1].first_line == 1);
  CHECK(parse_document(carried[1], false).value == Json{{"a", 1}});
  CHECK(carried[2].text == "b: 2");
  // "----" or "---x" are not markers.
  CHECK(split("a: |\n  ---x\n").size() == 1);
}

// The same split from a file (read in chunks, line by line) as from text in memory (spans).
TEST_CASE("a file and the same text in memory split into the same documents", "[lint][reader]") {
  for (const std::string& text : {
           std::string("# header\n---\na: 1\n--- # c\nb: 2\r\n...\nc: 3\n---\n"),
           std::string("--- {a: 1}\n---\nb: 2"), std::string(""), std::string("a: 1"),
           std::string("---\n---\n...\n"), std::string("a: |\n  ---x\n----\n---x: 1\n"),
           "a: " + std::string(70000, 'x') + "\n---\nb: 1\n",  // a line longer than a chunk
       }) {
    INFO(text.substr(0, 60));
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    REQUIRE(std::fwrite(text.data(), 1, text.size(), file) == text.size());
    std::rewind(file);
    DocumentStream from_file(file);
    std::vector<SourceDocument> read;
    SourceDocument d;
    while (from_file.next(d)) read.push_back(d);
    std::fclose(file);
    const std::vector<SourceDocument> spans = split(text);
    REQUIRE(read.size() == spans.size());
    for (size_t i = 0; i < read.size(); ++i) {
      CHECK(read[i].text == spans[i].text);
      CHECK(read[i].first_line == spans[i].first_line);
      CHECK(read[i].starts_with_marker == spans[i].starts_with_marker);
      CHECK(read[i].too_large == spans[i].too_large);
    }
  }
}

TEST_CASE("empty, comment-only and trailing documents are empty", "[lint][reader]") {
  auto docs = parse_all("---\n# only a comment\n---\n   \n---\napiVersion: v1\n---\n");
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].line == 6);
}

TEST_CASE("scalars are typed as kubectl (go-yaml v2) types them", "[lint][reader]") {
  struct Row {
    std::string_view text;
    Json expected;
  };
  const std::vector<Row> rows = {
      {"yes", true},
      {"No", false},
      {"on", true},
      {"OFF", false},
      {"y", true},
      {"true", true},
      {"~", nullptr},
      {"null", nullptr},
      {"", nullptr},
      {"1", 1},
      {"-3", -3},
      {"+7", 7},
      {"0x1F", 31},
      {"0o17", 15},
      {"017", 15},
      {"1_000", 1000},
      {"08", 8},
      {"1e3", 1000},
      {"0.5", 0.5},
      {".5", 0.5},
      {"1.0", 1},
      {"500m", "500m"},
      {"4Gi", "4Gi"},
      {"2001-12-14", "2001-12-14"},
      {"1:20", "1:20"},
      {".inf", ".inf"},
      {"v1", "v1"},
      {"-", "-"},
      {"18446744073709551615", 18446744073709551615ull},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(resolve_plain_scalar(row.text) == row.expected);
  }
}

// sigs.k8s.io/yaml stringifies non-string keys of go-yaml v2 (yamlToJSON): booleans as "true" and
// "false", integers in decimal; a null key is an error ("unsupported map key").
TEST_CASE("plain keys are typed first, then turned into JSON object keys", "[lint][reader]") {
  struct Row {
    std::string_view text;
    std::optional<std::string> expected;  // none: refused
  };
  for (const Row& row : std::vector<Row>{
           {"name", "name"},       {"n", "false"},
           {"No", "false"},        {"nulls", "nulls"},
           {"yes", "true"},        {"Yes", "true"},
           {"YES", "true"},        {"yess", "yess"},
           {"on", "true"},         {"Off", "false"},
           {"of", "of"},           {"true", "true"},
           {"FALSE", "false"},     {"False", "false"},
           {"fals", "fals"},       {"tolerations", "tolerations"},
           {"null", std::nullopt}, {"NULL", std::nullopt},
           {"~", std::nullopt},    {"~x", "~x"},
           {"0x1F", "31"},         {"7", "7"},
       }) {
    INFO(row.text);
    CHECK(resolve_plain_key(row.text) == row.expected);
  }
}

TEST_CASE("the emitter's plain-scalar check quotes everything that would change type",
          "[lint][reader]") {
  for (std::string_view s : {"1", "true", "on", "0.5", "", "1e3", "0x10", "null", "~", "- a",
                             "a: b", "#x", " lead", "trail ", "1:20", ".5", "---", "{a}", "*x"}) {
    INFO(s);
    CHECK_FALSE(plain_scalar_is_safe(s));
  }
  for (std::string_view s : {"500m", "4Gi", "nvidia.com/gpu", "NoSchedule", "a b", "x:y", "v1"}) {
    INFO(s);
    CHECK(plain_scalar_is_safe(s));
  }
}

TEST_CASE("block and flow YAML, quoting, block scalars and CRLF read as yaml-cpp reads them",
          "[lint][reader]") {
  const std::vector<std::string> texts = {
      "a: 1\nb:\n  c: [x, 'y', \"z\\n\"]\n  d: {e: f, 'g': 2}\n",
      "list:\n- a\n- b: 1\n  c: 2\n-\n  - nested\n- - x\n  - y\n",
      "s: |\n  line1\n\n  line2\n\nt: >\n  folded\n  text\n\n  para\nu: |-\n  strip\nv: |+\n  "
      "keep\n\n",
      "k: \"esc \\t \\u00e9 \\x41 \\\\ \\\"\"\nq: 'it''s'\n",
      "a: 1\r\nb:\r\n  - x\r\n  - y # comment\r\n",
      "empty:\nnull_value: ~\nflow_empty: {}\nseq_empty: []\n",
      "cmd: [\"sh\", \"-c\", \"echo {{ .Values }}\"]\nurl: http://x:80/a#b\n",
      "a:\n  b:\n    c: d\n  e: f\ng: h",  // no final newline
      "key with spaces: value with spaces\n\"quoted key\": 1\n",
      "s: |\n  no final newline",
  };
  for (const std::string& text : texts) {
    INFO(text);
    const auto [fast, slow] = fast_and_yaml_cpp(text);
    REQUIRE_FALSE(fast.error);
    REQUIRE_FALSE(slow.error);
    CHECK(fast.parser == Parser::kFast);
    CHECK(fast.value == slow.value);
  }
}

// The key scan looks 16 bytes at a time for ':', '#', CR and LF: each stop character is put at
// every offset across two such blocks, in keys, in values and in comments.
TEST_CASE("a key's ':' and a line's '#' are found at any offset, as yaml-cpp finds them",
          "[lint][reader]") {
  for (size_t n = 0; n <= 40; ++n) {
    const std::string pad(n, 'k');
    const std::vector<std::string> texts = {
        pad + "x: 1\n",                         // the key's ':' at offset n + 1
        "a" + pad + ":b: 1\n",                  // a ':' without a blank is part of the key
        "img: nvcr.io/" + pad + ":24.01\n",     // a ':' in a value
        "- " + pad + "x\n- y: 1\n",             // a list item without a key, then one with
        "a: 1 #" + pad + ": c\n",               // ': ' inside a comment
        "- x #" + pad + ": c\n",                // ... on a line with no key before it
        "a" + pad + "#b: 1\n",                  // '#' without a blank before it is part of the key
        "a:\n  " + pad + "x: 1\r\n  y: 2\r\n",  // CRLF
    };
    for (const std::string& text : texts) {
      INFO(text);
      const auto [fast, slow] = fast_and_yaml_cpp(text);
      REQUIRE_FALSE(slow.error);
      REQUIRE_FALSE(fast.error);
      CHECK(fast.value == slow.value);
    }
  }
}

TEST_CASE("anchors, aliases, merge keys and tags go through yaml-cpp", "[lint][reader]") {
  Json v = parse_one("base: &b {x: 1, z: 2}\nuse:\n  <<: *b\n  z: 3\nt: !!str 1\ny: 1\n");
  CHECK(v["use"] == Json{{"z", 3}, {"x", 1}});
  CHECK(v["true"] == 1);  // go-yaml v2: the key `y` is the boolean true
  CHECK(v["t"] == "1");
  CHECK(parse_all("a: &x 1\nb: *x\n")[0].parser == Parser::kYamlCpp);
}

TEST_CASE("duplicate keys: the last value wins, with a warning", "[lint][reader]") {
  auto docs = parse_all("spec:\n  restartPolicy: Always\n  x: 1\n  restartPolicy: Never\n");
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].value["spec"]["restartPolicy"] == "Never");
  REQUIRE(docs[0].warnings.size() == 1);
  CHECK(docs[0].warnings[0].line == 4);
  CHECK(docs[0].warnings[0].message.find("duplicate key \"restartPolicy\"") == 0);
}

TEST_CASE("invalid YAML is an error with its file line", "[lint][reader]") {
  auto docs = parse_all("a: 1\n---\nkind: Pod\nimage: {username}/x:latest\n");
  REQUIRE(docs.size() == 2);
  CHECK_FALSE(docs[0].error);
  REQUIRE(docs[1].error);
  CHECK(docs[1].error->line == 4);
}

TEST_CASE("invalid JSON in a .json file is reported with nlohmann's position", "[lint][reader]") {
  auto docs = parse_all("{\n  \"a\": 1,\n  \"b\": \n}\n", true);
  REQUIRE(docs.size() == 1);
  REQUIRE(docs[0].error);
  CHECK(docs[0].error->line == 4);
  CHECK(docs[0].error->message.find("invalid JSON") == 0);
}

TEST_CASE("invalid UTF-8 and control characters are errors with their line, as kubectl's reader",
          "[lint][reader]") {
  const std::string pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ";
  struct Bad {
    std::string text;
    int line, column;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {pod + "a\xff\n", 4, 10, "invalid UTF-8 (byte 0xFF)"},
           {pod + "\xc3\n", 4, 9, "invalid UTF-8 (byte 0xC3)"},          // truncated sequence
           {pod + "\xc0\xaf\n", 4, 9, "invalid UTF-8 (byte 0xC0)"},      // overlong '/'
           {pod + "\xed\xa0\x80\n", 4, 9, "invalid UTF-8 (byte 0xED)"},  // a surrogate
           {pod + "x\ny: \"a" + '\0' + "b\"\n", 5, 6, "control character U+0000"},
           {pod + "x\x1b[0m\n", 4, 10, "control character U+001B"},
           {pod + "x\x7f\n", 4, 10, "control character U+007F"},
           {pod + "x\xc2\x9b\n", 4, 10, "control character U+009B"},
           {"{\"kind\": \"Pod\", \"a\": \"\xfe\"}\n", 1, 23, "invalid UTF-8 (byte 0xFE)"},
       }) {
    INFO(bad.text);
    for (bool json_file : {false, true}) {
      auto docs = parse_all("a: 1\n---\n" + bad.text, json_file && bad.text[0] == '{');
      REQUIRE(docs.size() == 2);
      CHECK_FALSE(docs[0].error);
      REQUIRE(docs[1].error);
      CHECK(docs[1].error->line == bad.line + 2);
      CHECK(docs[1].error->column == bad.column);
      CHECK(docs[1].error->message.rfind(bad.message, 0) == 0);
    }
  }
  // The characters are checked 16 and 8 bytes at a time: a bad byte at every offset of a block.
  for (size_t at = 0; at < 40; ++at) {
    for (const char bad : {'\x01', '\x7f', '\xff'}) {
      std::string line(40, 'a');
      line[at] = bad;
      auto docs = parse_all("k: " + line + "\n");
      INFO(at << " " << static_cast<int>(bad));
      REQUIRE(docs.size() == 1);
      REQUIRE(docs[0].error);
      CHECK(docs[0].error->column == static_cast<int>(at) + 4);
    }
  }
  // What YAML allows: tab, CR LF, non-ASCII letters, emoji, a byte order mark.
  auto ok = parse_all("\xef\xbb\xbf" + pod + "caf\xc3\xa9\tx \xf0\x9f\x9a\x80\r\n");
  REQUIRE(ok.size() == 1);
  CHECK_FALSE(ok[0].error);
  CHECK(ok[0].value["metadata"]["name"] == "caf\xc3\xa9\tx \xf0\x9f\x9a\x80");
}

TEST_CASE("billion laughs and deep nesting are errors, not explosions", "[lint][reader]") {
  std::string laughs =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) laughs += std::string(i ? "," : "") + "*" + prev;
    laughs += "]\n";
    prev = c;
  }
  auto docs = parse_all(laughs);
  REQUIRE(docs.size() == 1);
  REQUIRE(docs[0].error);
  CHECK(docs[0].error->message.find("billion laughs") != std::string::npos);

  for (const std::string& deep : {std::string(200000, '[') + std::string(200000, ']'),
                                  std::string(150, '[') + std::string(150, ']'), [] {
                                    std::string s;
                                    for (int i = 0; i < 300; ++i)
                                      s += std::string(static_cast<size_t>(i) * 2, ' ') + "k:\n";
                                    return s;
                                  }()}) {
    auto d = parse_all(deep);
    REQUIRE(d.size() == 1);
    REQUIRE(d[0].error);
    CHECK(d[0].error->message.find("nested deeper than 100") == 0);
  }
}

TEST_CASE("locate_paths finds the line of the deepest existing node", "[lint][reader]") {
  SourceDocument source;
  source.first_line = 10;
  source.text =
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n      "
      "limits:\n        nvidia.com/gpu: 1\n";
  ParsedDocument doc = parse_document(source, false);
  auto lines =
      locate_paths(source, doc,
                   {"spec.containers[0].resources.limits[\"nvidia.com/gpu\"]",
                    "spec.containers[0].resources.requests", "spec.tolerations[3]", "kind"});
  CHECK(lines == std::vector<int>{17, 15, 12, 11});
  CHECK(split_dotted_path("a.b[0][\"x.y\"].c") ==
        std::vector<std::string>{"a", "b", "0", "x.y", "c"});
}

TEST_CASE("locate_paths in documents only yaml-cpp reads (anchors, flow after ---)",
          "[lint][reader]") {
  const std::vector<std::string> paths = {"spec.containers[0].resources.limits[\"nvidia.com/gpu\"]",
                                          "spec.containers[0].name", "spec.tolerations[3]", "kind",
                                          "spec.containers[1]"};
  // Anchors and an alias: the fast path hands the document to yaml-cpp.
  SourceDocument anchored;
  anchored.first_line = 5;
  anchored.text =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: &n p}\nspec:\n  containers:\n  - name: *n\n"
      "    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
  ParsedDocument doc = parse_document(anchored, false);
  REQUIRE_FALSE(doc.error);
  CHECK(doc.parser == Parser::kYamlCpp);
  CHECK(locate_paths(anchored, doc, paths) == std::vector<int>{13, 10, 8, 6, 9});

  // A whole flow document on its `---` line (the crash: yaml-cpp's Node::operator= rebinding).
  std::string text =
      "a: 1\n--- {apiVersion: v1, kind: Pod, spec: {containers: [{name: c, resources: "
      "{limits: {nvidia.com/gpu: 3}}}]}}\n";
  DocumentStream stream(text);
  SourceDocument source;
  REQUIRE(stream.next(source));
  REQUIRE(stream.next(source));
  REQUIRE(source.starts_with_marker);
  ParsedDocument flow = parse_document(source, false);
  REQUIRE_FALSE(flow.error);
  CHECK(locate_paths(source, flow, paths) == std::vector<int>{2, 2, 2, 2, 2});
}

TEST_CASE("every corpus document the fast path reads equals yaml-cpp's reading", "[lint][reader]") {
  size_t fast = 0, total = 0;
  for (const fs::path& file : corpus_files()) {
    const std::string text = testing::read_file(file.string());
    for (const SourceDocument& d : split(text)) {
      ParsedDocument p = parse_document(d, file.extension() == ".json");
      if (p.empty) continue;
      ++total;
      if (p.parser != Parser::kFast) continue;
      ++fast;
      ParsedDocument slow = parse_document_yaml_cpp(d);
      INFO(file.string() << ":" << d.first_line);
      REQUIRE_FALSE(slow.error);
      CHECK(p.value == slow.value);
      CHECK(p.warnings.size() == slow.warnings.size());
    }
  }
  CHECK(total > 100);
  CHECK(fast * 10 > total * 8);  // the fast path reads the large majority of real manifests
}

TEST_CASE("mangled corpus files never crash the reader, and the fast path never disagrees",
          "[lint][reader][fuzz]") {
  std::mt19937 rng(12345);
  const auto files = corpus_files();
  const std::string noise = " \t\n\r:-#'\"[]{}|>&*!,?%@`\\x1";
  size_t checked = 0;
  for (int round = 0; round < 600; ++round) {
    std::string text = testing::read_file(files[rng() % files.size()].string());
    if (text.empty()) continue;
    switch (round % 3) {
      case 0:
        text.resize(rng() % text.size());
        break;
      case 1:
        for (int i = 0; i < 4; ++i) text[rng() % text.size()] = noise[rng() % noise.size()];
        break;
      default:
        text.insert(rng() % text.size(), std::string(1 + rng() % 4, noise[rng() % noise.size()]));
    }
    for (const SourceDocument& d : split(text)) {
      ParsedDocument p = parse_document(d, false);
      if (p.empty || p.error || p.parser != Parser::kFast) continue;
      ParsedDocument slow = parse_document_yaml_cpp(d);
      if (slow.error)
        continue;  // yaml-cpp is stricter in places; the fast path still agrees on typing
      INFO(d.text);
      CHECK(p.value == slow.value);
      ++checked;
    }
  }
  CHECK(checked > 100);
}

}  // namespace
}  // namespace reader_test
}  // namespace gpuadmit::yaml
