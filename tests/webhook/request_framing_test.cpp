// frame_request decides what the connection pool does with the bytes buffered on a connection:
// wait, hand a whole request on, hand it on before its body (refused unread), refuse it itself,
// or answer "100 Continue" (webhook/request_framing.h).

#include "webhook/request_framing.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace request_framing_test {

namespace {

using gpuadmit::webhook::frame_request;
using gpuadmit::webhook::kMaxHeaderBytes;
using gpuadmit::webhook::kMaxLineBytes;
using Action = gpuadmit::webhook::RequestFraming::Action;

struct Case {
  std::string name;
  std::string buffered;
  Action action;
  std::size_t size;  // kReady: the request's bytes; kRefuse: the status; kContinue: expect_at
};

const std::string kGet = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kPostHead =
    "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
    "5\r\n\r\n";

std::string headers(std::size_t count) {
  std::string out = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i < count; ++i) out += "a:b\r\n";
  return out;
}

}  // namespace

TEST_CASE("request framing: whole requests, partial ones, early hand-overs and refusals") {
  const std::size_t max_body = 1000;
  const std::vector<Case> cases = {
      {"nothing yet", "", Action::kWait, 0},
      {"request line only", "GET /healthz HTTP/1.1\r\n", Action::kWait, 0},
      {"headers not ended", "GET /healthz HTTP/1.1\r\nHost: x\r\n", Action::kWait, 0},
      {"a GET without a body", kGet, Action::kReady, kGet.size()},
      {"a GET followed by a pipelined one", kGet + kGet, Action::kReady, kGet.size()},
      {"a POST whose body is short", kPostHead + "abc", Action::kWait, 0},
      {"a POST whose body is here", kPostHead + "abcde", Action::kReady, kPostHead.size() + 5},
      {"a POST followed by the next request", kPostHead + "abcde" + kGet, Action::kReady,
       kPostHead.size() + 5},
      {"header names are case-insensitive, values trimmed",
       "POST /m HTTP/1.1\r\ncontent-LENGTH: \t 2 \t\r\n\r\nab", Action::kReady, 45},
      {"no Content-Length: no body", "POST /mutate HTTP/1.1\r\nHost: x\r\n\r\n{}", Action::kReady,
       34},
      {"chunked: handed over with its headers",
       "POST /mutate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", Action::kHandOver, 0},
      {"Expect: 100-continue: answered here, the header at 23",
       "POST /mutate HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n",
       Action::kContinue, 23},
      {"Expect in any case", "POST /m HTTP/1.1\r\nEXPECT: 100-Continue\r\n\r\n", Action::kContinue,
       18},
      {"another expectation is ignored, as cpp-httplib ignores it",
       "POST /m HTTP/1.1\r\nExpect: x\r\nContent-Length: 1\r\n\r\n", Action::kWait, 0},
      {"Expect and a length over the limit: refused unread",
       "POST /m HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1001\r\n\r\n",
       Action::kHandOver, 0},
      {"a Content-Length over the body limit", "POST /m HTTP/1.1\r\nContent-Length: 1001\r\n\r\n",
       Action::kHandOver, 0},
      {"a Content-Length too long for a number",
       "POST /m HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", Action::kHandOver, 0},
      {"a Content-Length at the body limit waits for the body",
       "POST /m HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", Action::kWait, 0},
      {"a Content-Length that is not a number", "POST /m HTTP/1.1\r\nContent-Length: 12ab\r\n\r\n",
       Action::kRefuse, 400},
      {"a percent-encoded Content-Length (cpp-httplib would decode it)",
       "POST /m HTTP/1.1\r\nContent-Length: %31%30\r\n\r\n", Action::kRefuse, 400},
      {"a signed Content-Length", "POST /m HTTP/1.1\r\nContent-Length: +2\r\n\r\n", Action::kRefuse,
       400},
      {"an empty Content-Length", "POST /m HTTP/1.1\r\nContent-Length:\r\n\r\n", Action::kRefuse,
       400},
      {"two Content-Length headers",
       "POST /m HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", Action::kHandOver, 0},
      {"a line ending in a bare LF is skipped, as cpp-httplib skips it",
       "POST /m HTTP/1.1\nX: y\nContent-Length: 9\n\r\n", Action::kReady, 42},
      {"a bare-LF blank line does not end the headers", "GET / HTTP/1.1\r\nHost: x\r\n\n",
       Action::kWait, 0},
      {"a request line at the line limit, not ended, waits", std::string(kMaxLineBytes, 'a'),
       Action::kWait, 0},
      {"a request line past the line limit", std::string(kMaxLineBytes + 1, 'a'), Action::kRefuse,
       414},
      {"a header line past the line limit, not ended",
       "GET / HTTP/1.1\r\nX: " + std::string(kMaxLineBytes, 'a'), Action::kRefuse, 431},
      {"a header line past the line limit, ended",
       "GET / HTTP/1.1\r\nX: " + std::string(kMaxLineBytes, 'a') + "\r\n", Action::kRefuse, 431},
      {"100 header lines", headers(100) + "\r\n", Action::kReady, 16 + 500 + 2},
      {"101 header lines", headers(101), Action::kRefuse, 431},
      {"headers past the header limit, lines short",
       "GET / HTTP/1.1\r\n" + std::string(kMaxHeaderBytes, '\n'), Action::kRefuse, 431},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const auto framing = frame_request(c.buffered, max_body);
    CHECK(framing.action == c.action);
    if (c.action == Action::kReady) CHECK(framing.size == c.size);
    if (c.action == Action::kRefuse) CHECK(framing.status == static_cast<int>(c.size));
    if (c.action == Action::kContinue) CHECK(framing.expect_at == c.size);
  }
}

TEST_CASE("request framing: 100 Continue only when the body is still to come") {
  const std::string head = "POST /m HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  CHECK(frame_request(head, 1000).interim);
  CHECK_FALSE(frame_request(head + "a", 1000).interim);
  CHECK_FALSE(
      frame_request("POST /m HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n", 1000)
          .interim);
}
}  // namespace request_framing_test
