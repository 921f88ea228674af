#pragma once
// What to do with the bytes buffered on a connection: wait for more, hand a whole request on,
// refuse it, or answer "100 Continue" first. The one place that decides where a request ends and
// which header limits it breaks: the review fast path (webhook/review_fast_path.h) reads only
// requests framed here as whole, within the lines framed here.
//
// The connection pool (webhook/connection_pool.h) hands a request to cpp-httplib (or the review
// fast path) only once it can be served without waiting on the network, so a slow client holds
// no worker thread. Header lines and their number are limited here, before cpp-httplib sees
// them (0.11.4 has no limit on their number, and percent-decodes values). A request that
// declares a body cpp-httplib would refuse unread (chunked, a Content-Length too large, two of
// them) is handed on with its headers alone: the pre-routing check answers it without reading.

#include <cstddef>
#include <string_view>

namespace gpuadmit::webhook {

// HTTP field names (and tokens such as "100-continue") compare case-insensitively, ASCII only
// (RFC 9110 §5.1).
bool equals_ignoring_case(std::string_view a, std::string_view b);

// cpp-httplib 0.11.4's limits (CPPHTTPLIB_HEADER_MAX_LENGTH, CPPHTTPLIB_REQUEST_URI_MAX_LENGTH),
// enforced here on the buffered bytes; and a bound of our own on a request's headers.
inline constexpr std::size_t kMaxLineBytes = 8192;
inline constexpr std::size_t kMaxHeaderCount = 100;
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;

struct RequestFraming {
  enum class Action {
    kWait,      // not all of it is here yet
    kReady,     // hand it on
    kHandOver,  // hand it on now, before its body: it is refused unread (size 0)
    kRefuse,    // answer `status` with `message` and close, without handing it on
    kContinue,  // "Expect: 100-continue" at `expect_at`: defuse it, answer 100, wait for the body
  };
  Action action = Action::kWait;
  // kReady: the bytes of the whole request (headers and body). kWait: the same, when the headers
  // are here and the body is not (0 while the headers are incomplete).
  std::size_t size = 0;
  // With `size`: the bytes of the request line and the header lines, the empty line included;
  // the body starts there.
  std::size_t header_size = 0;
  int status = 0;
  std::string_view message;
  std::size_t expect_at = 0;  // offset of the Expect header's name
  bool interim = false;       // kContinue: send "100 Continue" (a body is due and none is here yet)
};

// `buffered` starts at the first byte of a request. `max_body` is the server's body limit.
RequestFraming frame_request(std::string_view buffered, std::size_t max_body);

}  // namespace gpuadmit::webhook
