// frame_request decides when the connection pool hands a request to cpp-httplib: only once all
// of it is buffered, or at once when waiting for the body would be wrong
// (webhook/request_framing.h).

#include "webhook/request_framing.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using gpuadmit::webhook::frame_request;
using gpuadmit::webhook::kMaxHeaderBytes;

struct Case {
  std::string name;
  std::string buffered;
  bool ready;
  std::size_t size;  // when ready: the request's bytes, 0 when handed over before its body
};

const std::string kGet = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kPostHead =
    "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
    "5\r\n\r\n";

}  // namespace

TEST_CASE("request framing: whole requests, partial ones, and early hand-overs") {
  const std::size_t max_body = 1000;
  const std::vector<Case> cases = {
      {"nothing yet", "", false, 0},
      {"request line only", "GET /healthz HTTP/1.1\r\n", false, 0},
      {"headers not ended", "GET /healthz HTTP/1.1\r\nHost: x\r\n", false, 0},
      {"a GET without a body", kGet, true, kGet.size()},
      {"a GET followed by a pipelined one", kGet + kGet, true, kGet.size()},
      {"a POST whose body is short", kPostHead + "abc", false, 0},
      {"a POST whose body is here", kPostHead + "abcde", true, kPostHead.size() + 5},
      {"a POST followed by the next request", kPostHead + "abcde" + kGet, true,
       kPostHead.size() + 5},
      {"header names are case-insensitive, values trimmed",
       "POST /m HTTP/1.1\r\ncontent-LENGTH: \t 2 \t\r\n\r\nab", true, 45},
      {"no Content-Length: no body", "POST /mutate HTTP/1.1\r\nHost: x\r\n\r\n{}", true, 34},
      {"chunked: handed over with its headers",
       "POST /mutate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", true, 0},
      {"Expect: 100-continue: handed over before the body",
       "POST /mutate HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n", true, 0},
      {"a Content-Length over the body limit", "POST /m HTTP/1.1\r\nContent-Length: 1001\r\n\r\n",
       true, 0},
      {"a Content-Length at the body limit waits for the body",
       "POST /m HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", false, 0},
      {"a Content-Length that is not a number", "POST /m HTTP/1.1\r\nContent-Length: 12ab\r\n\r\n",
       true, 0},
      {"an empty Content-Length", "POST /m HTTP/1.1\r\nContent-Length:\r\n\r\n", true, 0},
      {"two Content-Length headers",
       "POST /m HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", true, 0},
      {"a line ending in a bare LF is skipped, as cpp-httplib skips it",
       "POST /m HTTP/1.1\nX: y\nContent-Length: 9\n\r\n", true, 42},
      {"a bare-LF blank line does not end the headers", "GET / HTTP/1.1\r\nHost: x\r\n\n", false,
       0},
      {"a request line past the header limit", std::string(kMaxHeaderBytes, 'a'), true, 0},
      {"headers past the header limit",
       "GET / HTTP/1.1\r\nX: " + std::string(kMaxHeaderBytes, 'a') + "\r\n", true, 0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const auto framing = frame_request(c.buffered, max_body);
    CHECK(framing.ready == c.ready);
    CHECK(framing.size == c.size);
  }
}
