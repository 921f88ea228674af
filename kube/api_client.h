#pragma once
// HTTPS requests to the Kubernetes API server: the cluster CA verified (chain and host name), a
// bearer token per request or a client certificate, a timeout per phase. Thread-safe; connections
// are kept alive and reused, one per concurrent caller. The only file that sees cpp-httplib is
// api_client.cc.
//
//   ApiClient api({.host = "10.96.0.1", .port = 443, .ca_path = ".../ca.crt"});
//   ApiResponse r = api.get("/apis/resource.k8s.io", token);
//   if (r.status == 0) ... r.error  // no answer: timed out, refused, TLS failed

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace gpuadmit::kube {

struct ApiEndpoint {
  std::string host;  // a DNS name or an IP literal (KUBERNETES_SERVICE_HOST)
  int port = 443;
  std::string ca_path;  // PEM bundle the server certificate must chain to
  // Bounds the connect, each read and each write (cpp-httplib 0.11.4 has no overall deadline):
  // a server that accepts and then says nothing is given up after one timeout.
  std::chrono::milliseconds timeout{500};
};

// A client certificate and its private key, PEM (a kubeconfig's client-certificate(-data) and
// client-key(-data)); empty: the client presents none.
struct ClientIdentity {
  std::string cert_pem;
  std::string key_pem;
};

struct ApiResponse {
  int status = 0;     // the HTTP status; 0 when no answer arrived
  std::string body;   // as sent (JSON for the API server's own answers)
  std::string error;  // status 0: what failed, one line ("timed out after 500 ms", ...)
};

class ApiClient {
 public:
  explicit ApiClient(ApiEndpoint endpoint, ClientIdentity identity = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET `path` with `Authorization: Bearer <token>` (none when empty) and
  // `Accept: application/json`. `timeout`, when given, replaces the endpoint's for this request
  // (a caller with a deadline gives what is left of it). Never throws.
  ApiResponse get(const std::string& path, const std::string& token,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) const;
  // Any method ("GET", "POST", "PUT", "DELETE"), a JSON `body` for the writes; otherwise as get.
  ApiResponse send(const std::string& method, const std::string& path, const std::string& token,
                   const std::string& body,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) const;

  // GET `path` as a stream (a watch): `on_data` is given the body as it arrives (false stops
  // reading); the request ends when the server ends its answer, when nothing arrives for
  // `idle_timeout`, when cancel_stream() is called, or when on_data returns false. Returns the
  // status (0 and `error` when there was no answer); the body of an answer other than 200 is
  // in `body`, not given to on_data. On its own connection, one stream at a time.
  ApiResponse stream(const std::string& path, const std::string& token,
                     std::chrono::milliseconds idle_timeout,
                     const std::function<bool(std::string_view)>& on_data) const;
  // Ends the stream() in progress, if any, from another thread.
  void cancel_stream() const;

  const ApiEndpoint& endpoint() const { return endpoint_; }

 private:
  struct Pool;
  ApiEndpoint endpoint_;
  ClientIdentity identity_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace gpuadmit::kube
