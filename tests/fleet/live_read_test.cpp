// Reading cluster exports for `gpuadmit fleet --live` (fleet/json_stream.h, fleet/live_read.h):
// JSON Lists item by item (the members the report reads kept, the rest dropped), several
// values in a row, errors with their line, a List larger than the read buffer; YAML Lists split
// into items with their lines, and the other shapes kubectl and people write.

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "fleet/json_stream.h"
#include "tests/fleet/live_test_util.h"

namespace gpuadmit::fleet {
namespace live_read_test {
namespace {

std::vector<std::pair<Json, int>> all_objects(JsonObjectStream& stream) {
  std::vector<std::pair<Json, int>> out;
  Json object;
  int line = 0;
  while (stream.next(object, line)) out.emplace_back(std::move(object), line);
  return out;
}

constexpr const char* kPodList = R"({
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {"k:{\"type\":\"Ready\"}": {}}}}],
                "name": "train-0",
                "namespace": "ml",
                "resourceVersion": "123"
            },
            "spec": {
                "containers": [{"name": "main", "image": "pytorch", "env": [{"name": "A", "value": "]}"}],
                                "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
                "nodeName": "gpu-1",
                "tolerations": [{"operator": "Exists"}],
                "volumes": [{"name": "token", "projected": {"sources": []}}]
            },
            "status": {"phase": "Running", "containerStatuses": [{"name": "main"}],
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "x"}]}
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "wait-0", "namespace": "ml"},
            "spec": {"containers": [{"name": "main", "resources": {}}],
                     "tolerations": [{"operator": "Exists"}], "nodeSelector": {"zone": "a"}},
            "status": {"phase": "Pending"}
        }
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}
)";

TEST_CASE("json stream: a List's items one by one, with what the report reads") {
  JsonObjectStream stream{std::string_view(kPodList)};
  const auto objects = all_objects(stream);
  REQUIRE_FALSE(stream.error());
  REQUIRE(objects.size() == 2);
  // A bound pod: metadata without managedFields and resourceVersion, spec without volumes,
  // tolerations or container env (only containers' name, resources and restartPolicy), status
  // with its phase and the conditions' type, status and message.
  CHECK(objects[0].first == Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "train-0", "namespace": "ml"},
      "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
               "nodeName": "gpu-1"},
      "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})"));
  CHECK(objects[0].second == 4);
  // A pod without a node: its placement (tolerations, nodeSelector, affinity) is kept too.
  CHECK(objects[1].first["spec"] == Json::parse(R"({"containers": [{"name": "main",
      "resources": {}}], "tolerations": [{"operator": "Exists"}], "nodeSelector": {"zone": "a"}})"));
  CHECK(objects[1].second == 23);
}

TEST_CASE("json stream: values in a row, a single object, an array, escaped member names") {
  const std::string text =
      "{\"kind\": \"NodeList\", \"apiVersion\": \"v1\", \"items\": [{\"kind\": \"Node\", "
      "\"metadata\": "
      "{\"name\": \"a\"}}]}\n"
      "{\"kind\": \"Node\", \"apiVersion\": \"v1\", \"metadata\": {\"na\\u006de\": \"b\", \"uid\": "
      "1}}\n"
      "[{\"kind\": \"Node\", \"metadata\": {\"name\": \"c\"}}, 7]\n";
  JsonObjectStream stream{std::string_view(text)};
  const auto objects = all_objects(stream);
  REQUIRE_FALSE(stream.error());
  REQUIRE(objects.size() == 3);
  CHECK(objects[0].first["metadata"]["name"] == "a");
  CHECK(objects[1].first == Json::parse(R"({"kind": "Node", "apiVersion": "v1",
      "metadata": {"name": "b", "uid": 1}})"));
  CHECK(objects[1].second == 2);
  CHECK(objects[2].first["metadata"]["name"] == "c");  // the 7 is no object: skipped
  CHECK(objects[2].second == 3);
}

TEST_CASE("json stream: errors say what and on which line") {
  struct Case {
    std::string text;
    int line;
    std::string message;
  };
  const Case cases[] = {
      {"{\"items\": [\n{\"kind\": \"Pod\"},\n{\"kind\": \"Pod\" \"x\": 1}\n]}", 3,
       "invalid JSON: expected ',' or '}'"},
      {"{\"items\": [\n{\"kind\": \"Pod\", \"spec\": {\"volumes\": [1, 2}}\n]}", 2,
       "invalid JSON: unexpected '}'"},
      {"{\"items\": [\n{\"kind\": \"Pod\"}\n", 3, "the JSON ends inside a value"},
      {"\n\nkind: Pod\n", 3, "expected a JSON object or array"},
      {"{\"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": tru}}]}", 1,
       "invalid JSON: invalid JSON value"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    JsonObjectStream stream{std::string_view(c.text)};
    all_objects(stream);
    REQUIRE(stream.error());
    CHECK(stream.error()->line == c.line);
    CHECK(stream.error()->message == c.message);
  }
}

TEST_CASE("json stream: a List larger than the read buffer, from a file") {
  // 40,000 pods of ~600 bytes: 24 MB, more than one 16 MB read; items straddle the boundary.
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  std::fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n", file);
  const std::string pad(480, 'x');
  for (int i = 0; i < 40000; ++i) {
    std::fprintf(file,
                 "%s        {\"kind\": \"Pod\", \"metadata\": {\"name\": \"p%d\", \"annotations\": "
                 "{\"pad\": \"%s\"}},\n         \"spec\": {\"nodeName\": \"n\"}}",
                 i == 0 ? "" : ",\n", i, pad.c_str());
  }
  std::fputs("\n    ],\n    \"kind\": \"List\"\n}\n", file);
  std::rewind(file);
  JsonObjectStream stream(file);
  Json object;
  int line = 0, count = 0;
  bool names_in_order = true, lines_right = true;
  while (stream.next(object, line)) {
    names_in_order &= object["metadata"]["name"] == "p" + std::to_string(count);
    lines_right &= line == 4 + 2 * count;  // two lines a pod, the first on line 4
    ++count;
  }
  std::fclose(file);
  CHECK_FALSE(stream.error());
  CHECK(count == 40000);
  CHECK(names_in_order);
  CHECK(lines_right);
}

TEST_CASE("live read: YAML Lists split into items, each with its line") {
  // kubectl's shape (items at column 0), another tool's (indented), comments and blank lines
  // inside items, an empty List, and a plain document after them.
  const std::string text =
      "apiVersion: v1\n"
      "items:\n"
      "- apiVersion: v1\n"
      "  kind: Node\n"
      "  metadata:\n"
      "# a comment at column 0\n"
      "\n"
      "    name: n1\n"
      "- apiVersion: v1\n"
      "  kind: Node\n"
      "  metadata: {name: n2}\n"
      "kind: List\n"
      "metadata: {resourceVersion: \"\"}\n"
      "---\n"
      "kind: NodeList\n"
      "apiVersion: v1\n"
      "items:\n"
      "  - apiVersion: v1\n"
      "    kind: Node\n"
      "    metadata:\n"
      "      name: n3\n"
      "---\n"
      "apiVersion: v1\n"
      "kind: List\n"
      "items: []\n"
      "---\n"
      "apiVersion: v1\n"
      "kind: Node\n"
      "metadata: {name: n4}\n";
  const auto r = testing::run_live(text);
  REQUIRE(r.errors.empty());
  REQUIRE(r.input.nodes.size() == 4);
  CHECK(r.input.nodes[0].name == "n1");
  CHECK(r.input.nodes[0].line == 3);
  CHECK(r.input.nodes[1].name == "n2");
  CHECK(r.input.nodes[1].line == 9);
  CHECK(r.input.nodes[2].name == "n3");
  CHECK(r.input.nodes[2].line == 18);
  CHECK(r.input.nodes[3].name == "n4");
  CHECK(r.input.nodes[3].line == 27);
}

TEST_CASE("live read: a YAML error inside an item names the file's line") {
  // The stray '}' is on line 6, column 22 of the file (column 20 of the item once dedented).
  const std::string text =
      "apiVersion: v1\nitems:\n- kind: Node\n  metadata: {name: ok}\n- kind: Pod\n"
      "  metadata: {name: x}}\n  spec: {}\n";
  const auto r = testing::run_live(text);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == "export");
  CHECK(r.errors[0].line == 6);
  CHECK(r.errors[0].message == "cannot read this document: illegal flow end (column 22)");
}

TEST_CASE("live read: a Pod whose containers are not a list is an error, not a guess") {
  const std::string text =
      "{\"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
      "\"n\"}},\n"
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"bad\", "
      "\"namespace\": "
      "\"ml\"}, \"spec\": {\"containers\": {\"name\": \"main\"}}}]}\n";
  const auto r = testing::run_live(text);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line == 2);
  CHECK(r.errors[0].message.rfind("Pod ml/bad: ", 0) == 0);
}

TEST_CASE("live read: a node advertising more GPUs than any node can is refused") {
  const std::string text =
      "{\"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
      "\"n\"},\n \"status\": {\"allocatable\": {\"nvidia.com/gpu\": \"1e9\"}}}]}\n";
  const auto r = testing::run_live(text);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].to_string() ==
        "export:1: Node n: status.allocatable[\"nvidia.com/gpu\"] is 1000000000, more than any "
        "node has (65536); check the export");
}

}  // namespace
}  // namespace live_read_test
}  // namespace gpuadmit::fleet
