// webhook/ units without a process: listen addresses, metrics exposition, log lines.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/json.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

namespace units_test {

using gpuadmit::Json;
using namespace gpuadmit::webhook;

TEST_CASE("units: parse_listen_address") {
  using P = std::pair<std::string, int>;
  CHECK(parse_listen_address(":8443") == P{"0.0.0.0", 8443});
  CHECK(parse_listen_address("127.0.0.1:0") == P{"127.0.0.1", 0});
  CHECK(parse_listen_address("[::1]:9090") == P{"::1", 9090});
  CHECK(parse_listen_address("localhost:8443") == P{"localhost", 8443});
  CHECK_FALSE(parse_listen_address("8443"));
  CHECK_FALSE(parse_listen_address(":65536"));
  CHECK_FALSE(parse_listen_address(":-1"));
  CHECK_FALSE(parse_listen_address(":84x"));
  CHECK_FALSE(parse_listen_address("::1:80"));
}

TEST_CASE("units: labelled counters escape values and cap their series") {
  LabeledCounter c("x_total", "help", {"kind"});
  c.add({"Pod"});
  c.add({"Pod"}, 2);
  c.add({"we\"ird\\\n"});
  CHECK(c.value({"Pod"}) == 3);
  std::string out;
  c.render(out);
  CHECK(out.find("x_total{kind=\"Pod\"} 3\n") != std::string::npos);
  CHECK(out.find("x_total{kind=\"we\\\"ird\\\\\\n\"} 1\n") != std::string::npos);
  for (size_t i = 0; i < LabeledCounter::kMaxSeries + 10; ++i) c.add({std::to_string(i)});
  CHECK(c.value({"other"}) >= 10);
}

TEST_CASE("units: the latency histogram is cumulative") {
  Metrics m;
  m.mutate_latency.observe(40);       // ≤ 50 µs
  m.mutate_latency.observe(700);      // ≤ 1 ms
  m.mutate_latency.observe(5000000);  // +Inf only
  const std::string text = m.render();
  CHECK(
      text.find("gpuadmit_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"5e-05\"} 1\n") !=
      std::string::npos);
  CHECK(
      text.find("gpuadmit_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"0.001\"} 2\n") !=
      std::string::npos);
  CHECK(text.find("gpuadmit_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"1\"} 2\n") !=
        std::string::npos);
  CHECK(
      text.find("gpuadmit_request_duration_seconds_bucket{endpoint=\"mutate\",le=\"+Inf\"} 3\n") !=
      std::string::npos);
  CHECK(text.find("gpuadmit_request_duration_seconds_count{endpoint=\"mutate\"} 3\n") !=
        std::string::npos);
  CHECK(text.find("gpuadmit_policy_generation 1\n") != std::string::npos);
}

TEST_CASE("units: log lines are one JSON object each and respect the level") {
  std::FILE* f = std::tmpfile();
  Logger logger(LogLevel::kWarn, f);
  logger.info("hidden");
  logger.warn("shown", {{"uid", "u1"}, {"bad", std::string("\xff\xfe")}});
  std::rewind(f);
  char buf[1024] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string text(buf, n);
  REQUIRE(std::count(text.begin(), text.end(), '\n') == 1);
  const Json line = Json::parse(text);
  CHECK(line["level"] == "warn");
  CHECK(line["msg"] == "shown");
  CHECK(line["uid"] == "u1");
  CHECK(line["ts"].get<std::string>().size() == 24);
  CHECK(parse_log_level("debug") == LogLevel::kDebug);
  CHECK_FALSE(parse_log_level("loud"));
}

TEST_CASE("units: log strings are written as Json::dump with replace writes them") {
  const std::vector<std::string> values = {"",
                                           "plain-ascii 0123",
                                           "quote\"inside",
                                           "back\\slash",
                                           "tab\there",
                                           "nl\nx",
                                           "\x01\x1f",
                                           "\x7f",
                                           "utf8 é ✓",
                                           std::string("\xff\xfe"),
                                           "half \xc3",
                                           std::string("nul\0x", 5)};
  for (const std::string& v : values) {
    std::string out = "x";
    gpuadmit::append_json_string(out, v, Json::error_handler_t::replace);
    CHECK(out == "x" + Json(v).dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

TEST_CASE("units: a buffered logger keeps the order and writes warnings at once") {
  std::FILE* f = std::tmpfile();
  auto read_all = [f] {
    std::fflush(f);
    std::rewind(f);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    return text;
  };
  {
    Logger logger(LogLevel::kInfo, f, Logger::Output::kBuffered);
    logger.log_members(LogLevel::kInfo, "first", "\"n\":1");
    logger.info("second", {{"n", 2}});
    logger.warn("third");  // written at once, after the two before it
    std::string text = read_all();
    REQUIRE(std::count(text.begin(), text.end(), '\n') == 3);
    CHECK(text.find("\"msg\":\"first\",\"n\":1}\n") < text.find("\"msg\":\"second\",\"n\":2}\n"));
    CHECK(text.find("\"msg\":\"second\"") < text.find("\"msg\":\"third\"}\n"));
    logger.info("fourth");
    logger.flush();
    text = read_all();
    CHECK(text.find("\"msg\":\"fourth\"}\n") != std::string::npos);
    logger.info("fifth");  // written by the destructor
  }
  const std::string text = read_all();
  std::fclose(f);
  REQUIRE(std::count(text.begin(), text.end(), '\n') == 5);
  CHECK(text.substr(text.rfind('{')).find("\"msg\":\"fifth\"}") != std::string::npos);
  const Json first = Json::parse(text.substr(0, text.find('\n')));
  CHECK(first["level"] == "info");
  CHECK(first["n"] == 1);
  CHECK(first["ts"].get<std::string>().size() == 24);
}
}  // namespace units_test
