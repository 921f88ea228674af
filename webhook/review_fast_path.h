#pragma once
// The review fast path: the requests the API server sends — a whole POST /mutate or /validate
// with a Content-Length body — answered without cpp-httplib's request parsing, routing and
// response writing, which cost ~16% of the CPU of a review (docs/performance.md). Anything
// else, and anything this parser is not sure cpp-httplib 0.11.4 would read the same way, goes
// to cpp-httplib as before (GPUADMIT_REVIEW_FAST_PATH=off sends everything there), and the
// answer is the same bytes either way (tests/webhook/review_fast_path_test.cpp compares them).
//
//   if (auto review = plain_review(stream.buffered(), max_body)) {
//     ... answer review->body ...
//     stream.write(response_head(200, body.size(), close, 10, 1000000)) ...
//   }

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "engine/admission.h"
#include "webhook/request_framing.h"

namespace gpuadmit::webhook {

struct PlainReview {
  Endpoint endpoint = Endpoint::kMutate;
  // The first Content-Type header's value, as cpp-httplib's get_header_value gives it ("" when
  // there is none): handle_review checks it is JSON.
  std::string_view content_type;
  std::string_view body;
  bool connection_close = false;  // the first Connection header is exactly "close"
  std::size_t size = 0;           // bytes of the whole request (request line, headers, body)
};

// `buffered` starts at the first byte of a request, `framing` is frame_request's verdict on it.
// A PlainReview when the framing is kReady (the whole request is here, within every header
// limit, with at most one Content-Length within --max-body) and the request is:
//   - the request line "POST /mutate HTTP/1.1" or "POST /validate HTTP/1.1", the path possibly
//     followed by "?query" (the API server adds "?timeout=10s"; a route ignores the query);
//   - header lines ending in CRLF, each "Name: value" with a name of token characters, a value
//     that is not empty and holds no '%' (cpp-httplib percent-decodes header values);
//   - exactly one Content-Length (the body is the framing's);
//   - no Transfer-Encoding, Content-Encoding, Expect or Range header (the pre-routing check or
//     cpp-httplib itself has something to say about those).
// nullopt otherwise: cpp-httplib serves it.
std::optional<PlainReview> plain_review(std::string_view buffered, const RequestFraming& framing);

// "application/json" with optional parameters, case-insensitive: what a review must declare
// (cpp-httplib's route and the fast path alike).
bool is_json_content_type(std::string_view value);

// The status line and headers cpp-httplib 0.11.4's write_response_core writes for a response of
// `status` with a JSON body of `length` bytes: its headers are a multimap ordered by
// case-insensitive name, so Connection, Content-Length, Content-Type, Keep-Alive. `close`
// writes "Connection: close" instead of Keep-Alive. Statuses: 200, 400, 408, 413, 414, 415,
// 431, 500 (the reason phrases cpp-httplib 0.11.4's status_message gives them).
std::string response_head(int status, std::size_t length, bool close, long keep_alive_seconds,
                          std::size_t keep_alive_max_count);

}  // namespace gpuadmit::webhook
