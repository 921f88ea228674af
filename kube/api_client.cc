#include "kube/api_client.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

namespace gpuadmit::kube {
namespace {

using Clock = std::chrono::steady_clock;
using Client = httplib::SSLClient;

constexpr size_t kMaxIdleConnections = 8;

// A client that presents `identity` (SSL_CTX_use_certificate and _PrivateKey take their own
// references, so ours are freed here); PEM that does not parse throws, and get() reports it.
std::unique_ptr<Client> client_with_identity(const ApiEndpoint& endpoint,
                                             const ClientIdentity& identity) {
  BIO* cert_bio =
      BIO_new_mem_buf(identity.cert_pem.data(), static_cast<int>(identity.cert_pem.size()));
  BIO* key_bio =
      BIO_new_mem_buf(identity.key_pem.data(), static_cast<int>(identity.key_pem.size()));
  X509* cert = cert_bio ? PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr) : nullptr;
  EVP_PKEY* key = key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(cert_bio);
  BIO_free(key_bio);
  std::unique_ptr<Client> client;
  if (cert != nullptr && key != nullptr) {
    client = std::make_unique<Client>(endpoint.host, endpoint.port, cert, key);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!client) throw std::runtime_error("cannot read the client certificate or key");
  return client;
}

std::unique_ptr<Client> make_client(const ApiEndpoint& endpoint, const ClientIdentity& identity) {
  auto client = identity.cert_pem.empty() ? std::make_unique<Client>(endpoint.host, endpoint.port)
                                          : client_with_identity(endpoint, identity);
  client->set_ca_cert_path(endpoint.ca_path.c_str());
  client->enable_server_certificate_verification(true);  // chain and host name (IP SAN for IPs)
  client->set_keep_alive(true);
  client->set_follow_location(false);
  return client;
}

// The connect, each read and each write of the next request (a pooled client's last settings
// were another caller's).
void set_timeouts(Client& client, std::chrono::milliseconds timeout) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  const time_t sec = static_cast<time_t>(us / 1000000), usec = static_cast<time_t>(us % 1000000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
}

std::string describe(httplib::Error error, const ApiEndpoint& endpoint,
                     std::chrono::milliseconds limit, Clock::duration took) {
  const std::string timeout = std::to_string(limit.count()) + " ms";
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
      return took >= limit
                 ? "cannot connect within " + timeout
                 : "cannot connect to " + endpoint.host + ":" + std::to_string(endpoint.port);
    case httplib::Error::Read:
      return took >= limit ? "no answer within " + timeout : "connection closed before an answer";
    case httplib::Error::Write:
      return "cannot send the request";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load the CA bundle " + endpoint.ca_path;
    case httplib::Error::SSLServerVerification:
      return "the API server's certificate is not signed by " + endpoint.ca_path +
             " or does not name " + endpoint.host;
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

// Idle kept-alive connections; a caller takes one (or makes one) and gives it back after a
// complete exchange, so concurrent lookups never wait for each other's round trips.
struct ApiClient::Pool {
  std::mutex mutex;
  std::vector<std::unique_ptr<Client>> idle;
  Client* streaming = nullptr;  // the stream() in progress (under mutex)
  bool cancelled = false;
  std::condition_variable stream_ended;
};

namespace {

// Clears the pool's stream in progress when stream() leaves, however it leaves (an exception
// too: cancel_stream() must never stop a client that is gone), and says whether it was cancelled.
struct StreamInProgress {
  std::mutex& mutex;
  Client*& streaming;
  bool& cancelled;
  std::condition_variable& ended;
  bool done = false;
  bool end() {
    std::lock_guard<std::mutex> lock(mutex);
    streaming = nullptr;
    done = true;
    ended.notify_all();
    return std::exchange(cancelled, false);
  }
  ~StreamInProgress() {
    if (!done) end();
  }
};

}  // namespace

ApiClient::ApiClient(ApiEndpoint endpoint, ClientIdentity identity)
    : endpoint_(std::move(endpoint)),
      identity_(std::move(identity)),
      pool_(std::make_unique<Pool>()) {}

ApiClient::~ApiClient() = default;

ApiResponse ApiClient::get(const std::string& path, const std::string& token,
                           std::chrono::milliseconds timeout) const {
  return send("GET", path, token, "", timeout);
}

ApiResponse ApiClient::send(const std::string& method, const std::string& path,
                            const std::string& token, const std::string& body,
                            std::chrono::milliseconds timeout) const {
  const std::chrono::milliseconds limit = timeout.count() > 0 ? timeout : endpoint_.timeout;
  ApiResponse out;
  try {
    std::unique_ptr<Client> client;
    {
      std::lock_guard<std::mutex> lock(pool_->mutex);
      if (!pool_->idle.empty()) {
        client = std::move(pool_->idle.back());
        pool_->idle.pop_back();
      }
    }
    bool reused = client != nullptr;
    httplib::Headers headers{{"Accept", "application/json"}};
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    for (;;) {
      if (!client) client = make_client(endpoint_, identity_);
      set_timeouts(*client, limit);
      const auto start = Clock::now();
      httplib::Result result =
          method == "GET"    ? client->Get(path, headers)
          : method == "POST" ? client->Post(path, headers, body, "application/json")
          : method == "PUT"  ? client->Put(path, headers, body, "application/json")
                             : client->Delete(path, headers, body, "application/json");
      const auto took = Clock::now() - start;
      if (!result) {
        // A kept-alive connection the server closed meanwhile (the API server closes idle ones
        // after 90 s) fails at once: the request is sent again on a new connection, as Go's
        // http.Transport does for a request it could not write. A timeout is not retried. (A
        // POST sent twice is refused the second time: AlreadyExists.)
        if (reused && took < limit) {
          reused = false;
          client.reset();
          continue;
        }
        out.error = describe(result.error(), endpoint_, limit, took);
        return out;  // the connection is dropped with the client
      }
      out.status = result->status;
      out.body = std::move(result->body);
      break;
    }
    std::lock_guard<std::mutex> lock(pool_->mutex);
    if (pool_->idle.size() < kMaxIdleConnections) pool_->idle.push_back(std::move(client));
  } catch (const std::exception& e) {
    out = ApiResponse{};
    out.error = std::string("request failed: ") + e.what();
  }
  return out;
}

ApiResponse ApiClient::stream(const std::string& path, const std::string& token,
                              std::chrono::milliseconds idle_timeout,
                              const std::function<bool(std::string_view)>& on_data) const {
  ApiResponse out;
  try {
    auto client = make_client(endpoint_, identity_);
    set_timeouts(*client, endpoint_.timeout);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(idle_timeout).count();
    client->set_read_timeout(static_cast<time_t>(us / 1000000), static_cast<time_t>(us % 1000000));
    client->set_keep_alive(false);
    {
      std::lock_guard<std::mutex> lock(pool_->mutex);
      if (pool_->cancelled) {
        pool_->cancelled = false;
        out.error = "cancelled";
        return out;
      }
      pool_->streaming = client.get();
    }
    StreamInProgress in_progress{pool_->mutex, pool_->streaming, pool_->cancelled,
                                 pool_->stream_ended};
    httplib::Headers headers{{"Accept", "application/json"}};
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    int status = 0;
    const auto start = Clock::now();
    httplib::Result result = client->Get(
        path, headers,
        [&status](const httplib::Response& res) {
          status = res.status;
          return true;
        },
        [&](const char* data, size_t length) {
          if (status != 200) {
            if (out.body.size() < 64 * 1024) out.body.append(data, length);
            return true;
          }
          return on_data(std::string_view(data, length));
        });
    const auto took = Clock::now() - start;
    const bool cancelled = in_progress.end();
    out.status = status;
    if (cancelled) {
      out.error = "cancelled";
    } else if (!result && result.error() != httplib::Error::Canceled) {
      out.error = describe(result.error(), endpoint_, idle_timeout, took);
    }
  } catch (const std::exception& e) {
    out = ApiResponse{};
    out.error = std::string("request failed: ") + e.what();
  }
  return out;
}

void ApiClient::cancel_stream() const {
  std::unique_lock<std::mutex> lock(pool_->mutex);
  pool_->cancelled = true;
  // httplib's stop() shuts down the socket only when it is open: a stop that comes after the
  // stream began but before it connected would be lost, and the stream would wait out its idle
  // timeout (a watch: minutes). So it is repeated until the stream has ended.
  while (pool_->streaming != nullptr) {
    pool_->streaming->stop();
    pool_->stream_ended.wait_for(lock, std::chrono::milliseconds(10));
  }
}

}  // namespace gpuadmit::kube
