// webhook/ units without a process: listen addresses, metrics exposition, log lines.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/json.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

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
