// The review fast path: which requests it takes (exactly those cpp-httplib would read the same
// way), the headers it writes, and — against the real binary — the same bytes on the wire as
// cpp-httplib's path (GPUADMIT_REVIEW_FAST_PATH=off) for the same requests.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "tests/webhook/support.h"
#include "webhook/request_framing.h"
#include "webhook/review_fast_path.h"

namespace review_fast_path_test {

namespace {

using namespace gpuadmit::testing;
using gpuadmit::Endpoint;
using gpuadmit::webhook::frame_request;
using gpuadmit::webhook::plain_review;
using gpuadmit::webhook::response_head;

// "mutate|<content type>|<body>|close", or "cpp-httplib" when the fast path declines.
std::string summary(const std::string& request, std::size_t max_body = 100) {
  const auto review = plain_review(request, frame_request(request, max_body));
  if (!review) return "cpp-httplib";
  return std::string(review->endpoint == Endpoint::kMutate ? "mutate" : "validate") + "|" +
         std::string(review->content_type) + "|" + std::string(review->body) + "|" +
         (review->connection_close ? "close" : "keep");
}

// The bytes the fast path takes as the request: nullopt when it declines.
std::optional<std::size_t> taken(const std::string& request) {
  const auto review = plain_review(request, frame_request(request, 100));
  if (!review) return std::nullopt;
  return review->size;
}

const std::string kHead = "Host: gpuadmit.gpuadmit-system.svc:443\r\n";

// `n` header lines "X-<i>: aaa…" with `value_bytes` characters of value.
std::string many_lines(int n, std::size_t value_bytes) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += "X-" + std::to_string(i) + ": " + std::string(value_bytes, 'a') + "\r\n";
  return out;
}
const std::string kJsonType = "Content-Type: application/json\r\n";

std::string post(const std::string& target, const std::string& headers, const std::string& body,
                 const std::string& version = "HTTP/1.1") {
  return "POST " + target + " " + version + "\r\n" + headers + "\r\n" + body;
}

TEST_CASE("review fast path: takes whole plain reviews, leaves everything else to cpp-httplib") {
  const std::string length2 = "Content-Length: 2\r\n";
  struct Case {
    const char* name;
    std::string request;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"as the API server sends it", post("/mutate?timeout=10s", kHead + kJsonType + length2, "{}"),
       "mutate|application/json|{}|keep"},
      {"validate", post("/validate", kJsonType + length2, "{}"),
       "validate|application/json|{}|keep"},
      {"a pipelined request after it is not part of it",
       post("/mutate", kJsonType + length2, "{}") + post("/mutate", kJsonType + length2, "{}"),
       "mutate|application/json|{}|keep"},
      {"names in any case, values trimmed, parameters kept",
       post("/mutate", "content-type: \tApplication/JSON; charset=utf-8 \r\nCONTENT-LENGTH:2\r\n",
            "{}"),
       "mutate|Application/JSON; charset=utf-8|{}|keep"},
      {"Connection: close", post("/mutate", kJsonType + length2 + "Connection: close\r\n", "{}"),
       "mutate|application/json|{}|close"},
      {"cpp-httplib compares Connection exactly",
       post("/mutate", kJsonType + length2 + "Connection: Close\r\n", "{}"),
       "mutate|application/json|{}|keep"},
      {"the first Connection counts",
       post("/mutate", kJsonType + length2 + "Connection: keep-alive\r\nConnection: close\r\n",
            "{}"),
       "mutate|application/json|{}|keep"},
      {"Accept-Encoding is ignored (never compressed)",
       post("/mutate", kJsonType + length2 + "Accept-Encoding: gzip\r\n", "{}"),
       "mutate|application/json|{}|keep"},
      {"the body not all here yet", post("/mutate", kJsonType + "Content-Length: 3\r\n", "{}"),
       "cpp-httplib"},
      {"the headers not all here yet", "POST /mutate HTTP/1.1\r\nContent-Type: appl",
       "cpp-httplib"},
      {"another path", post("/mutatex", kJsonType + length2, "{}"), "cpp-httplib"},
      {"paths are case-sensitive", post("/Mutate", kJsonType + length2, "{}"), "cpp-httplib"},
      {"a percent-encoded path", post("/%6Dutate", kJsonType + length2, "{}"), "cpp-httplib"},
      {"another method", "PUT /mutate HTTP/1.1\r\n" + kJsonType + length2 + "\r\n{}",
       "cpp-httplib"},
      {"HTTP/1.0", post("/mutate", kJsonType + length2, "{}", "HTTP/1.0"), "cpp-httplib"},
      {"two spaces in the request line", post(" /mutate", kJsonType + length2, "{}"),
       "cpp-httplib"},
      {"no Content-Length", post("/mutate", kJsonType, ""), "cpp-httplib"},
      {"two Content-Lengths", post("/mutate", kJsonType + length2 + length2, "{}"), "cpp-httplib"},
      {"a Content-Length that is no number",
       post("/mutate", kJsonType + "Content-Length: +2\r\n", "{}"), "cpp-httplib"},
      {"a body over --max-body", post("/mutate", kJsonType + "Content-Length: 101\r\n", ""),
       "cpp-httplib"},
      {"chunked", post("/mutate", kJsonType + "Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n"),
       "cpp-httplib"},
      {"Expect", post("/mutate", kJsonType + length2 + "Expect: 100-continue\r\n", ""),
       "cpp-httplib"},
      {"Content-Encoding, even identity",
       post("/mutate", kJsonType + length2 + "Content-Encoding: identity\r\n", "{}"),
       "cpp-httplib"},
      {"Range", post("/mutate", kJsonType + length2 + "Range: bytes=0-1\r\n", "{}"), "cpp-httplib"},
      {"not JSON (the 415 is cpp-httplib's path)",
       post("/mutate", "Content-Type: text/plain\r\n" + length2, "{}"), "cpp-httplib"},
      {"no Content-Type", post("/mutate", length2, "{}"), "cpp-httplib"},
      {"the first Content-Type counts",
       post("/mutate", "Content-Type: text/plain\r\n" + kJsonType + length2, "{}"), "cpp-httplib"},
      {"a header line without a colon", post("/mutate", kJsonType + length2 + "Oops\r\n", "{}"),
       "cpp-httplib"},
      {"a header line ending in a bare LF", post("/mutate", kJsonType + length2 + "X-A: b\n", "{}"),
       "cpp-httplib"},
      {"a header value with % (cpp-httplib decodes it)",
       post("/mutate", kJsonType + length2 + "X-A: 100%25\r\n", "{}"), "cpp-httplib"},
      {"a space before the colon", post("/mutate", kJsonType + length2 + "X-A : b\r\n", "{}"),
       "cpp-httplib"},
      {"an empty value", post("/mutate", kJsonType + length2 + "X-A:\r\n", "{}"), "cpp-httplib"},
      {"a header line over 8 KiB (the framing refuses it: 431)",
       post("/mutate", kJsonType + length2 + "X-A: " + std::string(8200, 'a') + "\r\n", "{}"),
       "cpp-httplib"},
      {"101 header lines (the framing refuses them: 431)",
       post("/mutate", kJsonType + length2 + many_lines(99, 4), "{}"), "cpp-httplib"},
      {"100 header lines", post("/mutate", kJsonType + length2 + many_lines(98, 4), "{}"),
       "mutate|application/json|{}|keep"},
      {"40 KiB of headers in 100 lines, within every framing limit",
       post("/mutate", kJsonType + length2 + many_lines(98, 400), "{}"),
       "mutate|application/json|{}|keep"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(summary(c.request) == c.expected);
    if (c.expected != "cpp-httplib") {
      // All of it, or the first of two pipelined requests.
      const std::size_t one = post("/mutate", kJsonType + length2, "{}").size();
      CHECK(taken(c.request) == (c.request.size() == 2 * one ? one : c.request.size()));
    }
    // Whatever the fast path takes, the framing hands on whole with the same size.
    const auto framing = frame_request(c.request, 100);
    if (taken(c.request)) {
      CHECK(framing.action == gpuadmit::webhook::RequestFraming::Action::kReady);
      CHECK(framing.size == *taken(c.request));
    }
  }
}

// The request_framing fuzzer's finding (tests/fuzz_regressions/request_framing/): 113 header
// lines in 2,275 bytes. The framing refuses them (over 100 lines); the fast path once read them
// with a limit of its own (8 KiB) and took the review.
TEST_CASE("review fast path: a request the framing refuses is never taken") {
  const std::string request =
      slurp(GPUADMIT_SOURCE_DIR "/tests/fuzz_regressions/request_framing/113-header-lines.bin");
  REQUIRE(request.size() == 2275);
  for (const std::size_t max_body : {std::size_t{16}, std::size_t{3} << 20}) {
    const auto framing = frame_request(request, max_body);
    CHECK(framing.action == gpuadmit::webhook::RequestFraming::Action::kRefuse);
    CHECK(framing.status == 431);
    CHECK_FALSE(plain_review(request, framing).has_value());
  }
}

TEST_CASE("review fast path: the status line and headers are cpp-httplib's") {
  CHECK(response_head(200, 1246, false, 10, 1000000) ==
        "HTTP/1.1 200 OK\r\nContent-Length: 1246\r\nContent-Type: application/json\r\n"
        "Keep-Alive: timeout=10, max=1000000\r\n\r\n");
  CHECK(response_head(400, 52, true, 10, 1000000) ==
        "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 52\r\n"
        "Content-Type: application/json\r\n\r\n");
  CHECK(response_head(500, 27, true, 5, 7) ==
        "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 27\r\n"
        "Content-Type: application/json\r\n\r\n");
}

// The same requests to a server with the fast path and one without: byte-identical answers.
TEST_CASE("review fast path: answers are byte for byte those of cpp-httplib's path") {
  TempDir dir;
  generate_certs(dir.path());
  ServerProcess fast(dir.path(), {}, dir / "fast.log");
  ServerProcess slow(dir.path(), {}, dir / "slow.log", {{"GPUADMIT_REVIEW_FAST_PATH", "off"}});
  REQUIRE(fast.wait_ready());
  REQUIRE(slow.wait_ready());
  auto request = [](const std::string& target, const std::string& body,
                    const std::string& headers = kJsonType) {
    return "POST " + target + " HTTP/1.1\r\n" + kHead + headers +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  struct Exchange {
    const char* name;
    std::string request;
    bool fast;  // taken by the fast path
  };
  const std::vector<Exchange> exchanges = {
      {"a GPU pod, mutated", request("/mutate?timeout=10s", admission_review("f-1", kGpuPod)),
       true},
      {"a CPU pod, validated", request("/validate", admission_review("f-2", kCpuPod)), true},
      {"a GPU Deployment, mutated", request("/mutate", admission_review("f-3", kGpuDeployment)),
       true},
      {"not JSON: 400", request("/mutate", "{"), true},
      {"the wrong apiVersion: 400",
       request("/mutate", R"({"apiVersion":"v1","kind":"AdmissionReview"})"), true},
      {"lower-case names, a charset",
       "POST /mutate HTTP/1.1\r\ncontent-type: application/json; charset=utf-8\r\n"
       "content-length: " +
           std::to_string(admission_review("f-4", kGpuPod).size()) + "\r\n\r\n" +
           admission_review("f-4", kGpuPod),
       true},
      {"gzip accepted, not used",
       request("/mutate", admission_review("f-5", kGpuPod),
               kJsonType + "Accept-Encoding: gzip\r\n"),
       true},
      {"text/plain: 415", request("/mutate", "{}", "Content-Type: text/plain\r\n"), false},
      {"a Range",
       request("/mutate", admission_review("f-6", kGpuPod), kJsonType + "Range: bytes=0-9\r\n"),
       false},
      {"Connection: close",
       request("/validate", admission_review("f-7", kGpuPod), kJsonType + "Connection: close\r\n"),
       true},
  };
  TlsClient::Options o;
  o.ca_path = dir / "ca.crt";
  TlsClient to_fast, to_slow;
  REQUIRE(to_fast.connect(fast.port(), o).empty());
  REQUIRE(to_slow.connect(slow.port(), o).empty());
  int fast_expected = 0;
  for (const Exchange& x : exchanges) {
    INFO(x.name);
    REQUIRE(to_fast.send_raw(x.request));
    REQUIRE(to_slow.send_raw(x.request));
    const auto from_fast = to_fast.read_response();
    const auto from_slow = to_slow.read_response();
    REQUIRE(from_fast.has_value());
    REQUIRE(from_slow.has_value());
    CHECK(from_fast->raw == from_slow->raw);
    CHECK(from_fast->status != 0);
    if (x.fast) ++fast_expected;
  }
  // Both closed the connection after "Connection: close".
  CHECK(to_fast.closed_by_peer(2000));
  CHECK(to_slow.closed_by_peer(2000));
  CHECK(metric_value(fast.metrics(), "gpuadmit_fast_path_reviews_total") == fast_expected);
  CHECK(metric_value(slow.metrics(), "gpuadmit_fast_path_reviews_total") == 0);
  CHECK(metric_value(fast.metrics(),
                     "gpuadmit_requests_total{endpoint=\"mutate\","
                     "operation=\"CREATE\",kind=\"Pod\",result=\"allowed\"}") ==
        metric_value(slow.metrics(),
                     "gpuadmit_requests_total{endpoint=\"mutate\","
                     "operation=\"CREATE\",kind=\"Pod\",result=\"allowed\"}"));
}

}  // namespace
}  // namespace review_fast_path_test
