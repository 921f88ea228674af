// `gpuadmit fleet --live`'s Prometheus exposition and SVG for the hand-computed fleet of
// live_test.cpp: the gauges' values (figures worked out there), the text format's rules checked
// line by line here and by the Prometheus Python client's parser, and the picture rendered by
// rsvg-convert.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "fleet/live_output.h"
#include "tests/fleet/live_test_util.h"
#include "tests/support/process.h"

namespace gpuadmit::fleet {
namespace live_output_test {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The text exposition format (prometheus/docs exposition_formats.md, version 0.0.4), checked
// strictly: HELP and TYPE once per family and before its samples, a family's samples together,
// metric and label names by their grammar, label values with only \\, \" and \n escaped,
// values Go floats, no series twice, a final newline. Returns the problems, one per line.
std::vector<std::string> exposition_problems(const std::string& text) {
  std::vector<std::string> problems;
  const std::regex name("[a-zA-Z_:][a-zA-Z0-9_:]*");
  const std::regex sample_line(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[+-]Inf))");
  const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)\"(,|$))");
  std::set<std::string> typed, helped, done, series;
  std::string current;
  if (text.empty() || text.back() != '\n') problems.push_back("no final newline");
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = "line " + std::to_string(number) + ": ";
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const std::string rest = line.substr(7);
      const std::string family = rest.substr(0, rest.find(' '));
      if (!std::regex_match(family, name)) problems.push_back(where + "bad family name");
      std::set<std::string>& seen = line[2] == 'H' ? helped : typed;
      if (!seen.insert(family).second) problems.push_back(where + "second HELP/TYPE of " + family);
      if (done.count(family) || (family != current && !current.empty() && series.count(family)))
        problems.push_back(where + "HELP/TYPE after samples of " + family);
      if (line[2] == 'T' && rest.substr(family.size()) != " gauge")
        problems.push_back(where + "not a gauge");
      if (family != current) {
        if (!current.empty()) done.insert(current);
        current = family;
      }
      continue;
    }
    if (!std::regex_match(line, m, sample_line)) {
      problems.push_back(where + "not a sample: " + line);
      continue;
    }
    const std::string family = m[1];
    if (family != current) problems.push_back(where + family + " outside its family's block");
    if (!typed.count(family)) problems.push_back(where + family + " has no TYPE before it");
    std::string labels = m[3];
    std::set<std::string> label_names;
    while (!labels.empty()) {
      std::smatch l;
      if (!std::regex_search(labels, l, label) || l.position(0) != 0) {
        problems.push_back(where + "bad labels: " + labels);
        break;
      }
      if (!label_names.insert(l[1]).second) problems.push_back(where + "label twice");
      if (std::string(l[1]).rfind("__", 0) == 0) problems.push_back(where + "reserved label");
      labels = labels.substr(static_cast<size_t>(l.length(0)));
    }
    if (!series.insert(family + "{" + std::string(m[3]) + "}").second)
      problems.push_back(where + "series twice");
  }
  return problems;
}

TEST_CASE("fleet live prometheus: the gauges of the hand-computed fleet") {
  const auto r = testing::run_live(testing::live_fleet_yaml());
  std::ostringstream out;
  write_live_prometheus(r.report, out);
  const std::string text = out.str();
  CHECK(exposition_problems(text).empty());
  for (const char* line :
       {// a100: 55 allocatable, 28 used, 8 free on schedulable nodes, 19 on the others,
        // 8 stranded, 1 after the repack (live_test.cpp, first case).
        "gpuadmit_fleet_gpus{class=\"a100\",unit=\"gpu\"} 55\n",
        "gpuadmit_fleet_gpus_used{class=\"a100\",unit=\"gpu\"} 28\n",
        "gpuadmit_fleet_gpus_free{class=\"a100\",unit=\"gpu\"} 8\n",
        "gpuadmit_fleet_gpus_unavailable{class=\"a100\",unit=\"gpu\"} 19\n",
        "gpuadmit_fleet_gpus_stranded{class=\"a100\",unit=\"gpu\"} 8\n",
        "gpuadmit_fleet_gpus_stranded_after_repack{class=\"a100\",unit=\"gpu\"} 1\n",
        "gpuadmit_fleet_gpus{class=\"t4\",unit=\"replica\"} 32\n",
        "gpuadmit_fleet_gpus{class=\"a100mig\",unit=\"mig-slice\"} 5\n",
        "gpuadmit_fleet_gpus_used{class=\"a100single\",unit=\"mig-slice\"} 3\n",
        "gpuadmit_fleet_nodes{class=\"a100\",state=\"schedulable\"} 4\n",
        "gpuadmit_fleet_nodes{class=\"a100\",state=\"cordoned\"} 1\n",
        "gpuadmit_fleet_nodes{class=\"a100\",state=\"not_ready\"} 1\n",
        "gpuadmit_fleet_nodes{class=\"a100\",state=\"tainted\"} 1\n",
        "gpuadmit_fleet_nodes_empty_after_repack{class=\"a100\"} 1\n",
        "gpuadmit_fleet_nodes_empty_after_repack{class=\"t4\"} 1\n",
        "gpuadmit_fleet_pods_running{class=\"a100\"} 10\n",
        "gpuadmit_fleet_pods_pending{class=\"a100\",reason=\"fragmentation\"} 2\n",
        "gpuadmit_fleet_pods_pending{class=\"a100\",reason=\"larger_than_any_node\"} 1\n",
        "gpuadmit_fleet_pods_pending{class=\"a100\",reason=\"taints_affinity\"} 1\n",
        "gpuadmit_fleet_pods_pending{class=\"a100\",reason=\"class_full\"} 0\n",
        "gpuadmit_fleet_pods_pending{class=\"t4\",reason=\"scheduling_gated\"} 1\n",
        "gpuadmit_fleet_pods_pending{class=\"a100mig\",reason=\"larger_than_any_node\"} 1\n",
        "gpuadmit_fleet_pods_pending{class=\"\",reason=\"no_class\"} 1\n",
        "gpuadmit_fleet_unmatched_gpu_nodes 1\n"}) {
    INFO(line);
    CHECK(text.find(line) != std::string::npos);
  }
  CHECK(text.find("# TYPE gpuadmit_fleet_gpus_stranded gauge\n") != std::string::npos);
}

TEST_CASE("fleet live prometheus: the format checker refuses what the format forbids") {
  // The checker above must be able to fail: each of these breaks one rule.
  CHECK(exposition_problems("# TYPE a gauge\na 1").size() == 1);  // final newline
  CHECK(exposition_problems("a 1\n").size() == 2);                // no TYPE
  CHECK(exposition_problems("# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n").size() == 1);
  CHECK(exposition_problems("# TYPE a gauge\na{x=\"\\t\"} 1\n").size() == 1);  // bad escape
  CHECK(exposition_problems("# TYPE a gauge\na{1x=\"\"} 1\n").size() == 1);    // label name
  CHECK(exposition_problems("# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"2\"} 2\n").size() ==
        1);
  CHECK(exposition_problems("# TYPE a gauge\na one\n").size() == 1);
  CHECK(exposition_problems("# TYPE a gauge\n# TYPE a gauge\na 1\n").size() == 1);
}

TEST_CASE("fleet live prometheus: the Prometheus client's own parser reads it") {
  const auto r = testing::run_live(testing::live_fleet_yaml());
  std::ostringstream out;
  write_live_prometheus(r.report, out);
  // Debian's python3-prometheus-client (scripts/setup.sh), for the system Python.
  // 16 families; samples: 6 unit gauges × 4 classes, nodes 4 states × 4 classes, 3 per-class
  // gauges × 4, pending 8 reasons × (4 classes + none), unmatched 1: 24 + 16 + 12 + 40 + 1;
  // tenant ml (every pod is in namespace ml): 2 states, 2 states × its 5 classes with GPUs (the
  // 4 and none), 1 namespace, no quota: 2 + 10 + 1.
  const auto run = gpuadmit::testing::run_command(
      "/usr/bin/python3 -c 'import sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "families = list(text_string_to_metric_families(sys.stdin.read()))\n"
      "print(len(families), sum(len(f.samples) for f in families), "
      "{f.type for f in families})'",
      out.str());
  CHECK(run.err == "");
  CHECK(run.exit_code == 0);
  CHECK(run.out == "16 106 {'gauge'}\n");
}

// PNG: the IHDR chunk holds width and height (big endian) at offsets 16 and 20.
std::pair<uint32_t, uint32_t> png_size(const std::string& png) {
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0) return {0, 0};
  return {be32(16), be32(20)};
}

TEST_CASE("fleet live svg: a square per GPU of every real node, stranded and unavailable marked") {
  const auto r = testing::run_live(testing::live_fleet_yaml());
  const std::string svg = live_to_svg(r.report, r.input);
  // GPUs: a100 6 × 8 + 7 = 55; t4 2 × 4 (16 replicas / 4); a100mig 1; a100single 8 (56 / 7);
  // no class: l40s-1 4. Stranded: a100-2's 3 free GPUs, a100-3's 2, a100-7's 3. Counted apart:
  // a100-4, -5, -6: 24 GPUs.
  CHECK(count(svg, "<rect class=\"gpu ") == 55 + 8 + 1 + 8 + 4);
  CHECK(count(svg, "data-class=\"a100\"") == 55);
  CHECK(count(svg, " stranded\" data-class") == 8);
  CHECK(count(svg, " unavailable\"") == 24);
  CHECK(count(svg, "data-node=\"a100-7\"") == 7);
  CHECK(svg.find(">ml/frag-0 (6 nvidia.com/gpu): fragmentation</text>") != std::string::npos);
  CHECK(svg.find(">ml/noclass-0 (1 nvidia.com/gpu): no class</text>") != std::string::npos);
  CHECK(svg.find(">ml/ReplicaSet/train</text>") != std::string::npos);  // the legend
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("<svg [^>]*width=\"(\\d+)\" height=\"(\\d+)\"")));
  char dir_template[] = "/tmp/gpuadmit-live-svg-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::ofstream(dir + "/fleet.svg") << svg;
  auto run =
      gpuadmit::testing::run_command("rsvg-convert -o " + dir + "/fleet.png " + dir + "/fleet.svg");
  CHECK(run.err == "");
  REQUIRE(run.exit_code == 0);
  const std::string png = gpuadmit::testing::slurp(dir + "/fleet.png");
  CHECK(png_size(png) == std::pair(static_cast<uint32_t>(std::stoul(m[1])),
                                   static_cast<uint32_t>(std::stoul(m[2]))));
  CHECK(png.size() > 2000);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace live_output_test
}  // namespace gpuadmit::fleet
