#include "webhook/httplib_bridge.h"

#include <string_view>

#include "webhook/request_framing.h"

namespace gpuadmit::webhook {

// Every assumption in httplib_bridge.h, webhook/request_framing.cc and webhook/review_fast_path.cc
// was checked against this version (docs/architecture.md, "Upgrading cpp-httplib").
static_assert(std::string_view(CPPHTTPLIB_VERSION) == "0.11.4",
              "cpp-httplib is not 0.11.4: re-check webhook/httplib_bridge.h (and the files it "
              "lists) as docs/architecture.md 'Upgrading cpp-httplib' says, then update this "
              "version in webhook/httplib_bridge.cc");

namespace {

// Go's http.Transport adds "Accept-Encoding: gzip" to every request, and Debian's cpp-httplib is
// built with zlib and brotli: it would compress each 1-2 KB answer, +39% CPU per review
// (docs/performance.md). "Range: bytes=0-9" would get a 206 with a slice of an AdmissionReview.
// "Content-Encoding: identity" (case-insensitive, RFC 9110 §8.4.1) is no encoding: removed, so
// neither the pre-routing check nor cpp-httplib's decompression sees one.
void answer_whole_and_plain(httplib::Request& req) {
  req.headers.erase("Accept-Encoding");
  req.ranges.clear();
  if (req.get_header_value_count("Content-Encoding") == 1 &&
      equals_ignoring_case(req.get_header_value("Content-Encoding"), "identity")) {
    req.headers.erase("Content-Encoding");
  }
}

// cpp-httplib 0.11.4's process_request closes the connection after the answer when the request's
// Connection is exactly "close", or for HTTP/1.0 unless it is exactly "Keep-Alive"; but
// write_response_core writes "Connection: close" only when `last` or for exactly "close", and
// "Keep-Alive" otherwise. So "Connection: keep-alive" over HTTP/1.0 was answered Keep-Alive and
// then closed. Here every request whose connection ends after the answer carries exactly
// "Connection: close", which makes the answer say so (and httplib_closes_after true).
void say_close_when_closing(httplib::Request& req, bool last) {
  const std::string connection = req.get_header_value("Connection");
  const bool closing =
      last || connection == "close" || (req.version == "HTTP/1.0" && connection != "Keep-Alive");
  if (closing && connection != "close") {
    req.headers.erase("Connection");
    req.headers.emplace("Connection", "close");
  }
}

}  // namespace

bool httplib_closes_after(const httplib::Request& req) {
  return req.get_header_value("Connection") == "close";
}

ssize_t StreamAdapter::write(const char* ptr, size_t size) {
  const std::string_view chunk(ptr, size);
  if (chunk.starts_with("HTTP/1.") && chunk.find("\r\nConnection: close\r\n") != chunk.npos) {
    stream_.request_close();
  }
  return stream_.write(ptr, size);
}

void HttpsServer::start_pool(const ConnectionLimits& limits, std::size_t threads,
                             FastPath fast_path, RefuseRequest refuse) {
  pool_ = std::make_unique<ConnectionPool>(
      ssl_context(), limits, threads,
      [this, fast_path = std::move(fast_path)](TlsStream& stream, bool last,
                                               bool& connection_closed, SSL* ssl) {
        if (std::optional<bool> served = fast_path(stream, last, connection_closed)) {
          return *served;
        }
        StreamAdapter adapter(stream);
        return process_request(adapter, last, connection_closed,
                               [ssl, last](httplib::Request& req) {
                                 req.ssl = ssl;
                                 answer_whole_and_plain(req);
                                 say_close_when_closing(req, last);
                               });
      },
      std::move(refuse));
  // cpp-httplib's TaskQueue: the accept loop's task only gives the socket to the pool, so it
  // runs on the accept thread. shutdown() (after stop() closed the listener) drains the pool.
  class HandOver : public httplib::TaskQueue {
   public:
    explicit HandOver(ConnectionPool& pool) : pool_(pool) {}
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override { pool_.stop(); }

   private:
    ConnectionPool& pool_;
  };
  ConnectionPool* pool = pool_.get();
  new_task_queue = [pool] { return new HandOver(*pool); };
}

bool HttpsServer::process_and_close_socket(socket_t sock) {
  pool_->add(sock);
  return true;
}

}  // namespace gpuadmit::webhook
