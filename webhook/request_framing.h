#pragma once
// Whether the bytes buffered on a connection hold a whole HTTP/1.1 request.
//
// The connection pool (webhook/connection_pool.h) hands a request to cpp-httplib only once it
// can be served without waiting on the network, so a slow client holds no worker thread. When
// the request is unusual — chunked or otherwise transfer-encoded, `Expect: 100-continue`, a
// Content-Length over the body limit or unreadable, headers past the size cpp-httplib accepts —
// it is handed over as soon as its headers (or too many bytes) are here: cpp-httplib and the
// pre-routing check refuse it or answer the interim response without the body being buffered.

#include <cstddef>
#include <string_view>

namespace gpuadmit::webhook {

// Bytes of request line and headers after which a request is handed over even without the
// blank line ending them: cpp-httplib 0.11.4 refuses a request line over 8,192 bytes (414) and
// header lines over 8,192 bytes, at most 100 of them.
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;

struct RequestFraming {
  bool ready = false;  // hand it over now
  // The bytes that make up the request when `ready` and they are all here (headers and body);
  // 0 when handed over early (the body, if any, is still to come).
  std::size_t size = 0;
};

// `buffered` starts at the first byte of a request. `max_body` is the server's body limit.
RequestFraming frame_request(std::string_view buffered, std::size_t max_body);

}  // namespace gpuadmit::webhook
