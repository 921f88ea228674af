#pragma once
// The CA certificates a client must chain to (`serve --client-ca`), loaded from a PEM bundle and
// shared through std::shared_ptr<const ClientCa>, as the serving KeyPair is: the server installs
// the current one on every handshake (webhook/server.cc, OpenSSL's certificate callback), so a
// rotated bundle — the API server's client CA renewed, the mounted Secret's ..data swapped —
// applies to the next connection without a restart, and a handshake keeps the store it picked.
//
//   auto loaded = ClientCa::load("client-ca.crt");
//   if (auto* ca = std::get_if<ClientCaPtr>(&loaded)) SSL_set1_verify_cert_store(ssl,
//   (*ca)->store());

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstddef>
#include <memory>
#include <string>
#include <variant>

namespace gpuadmit::certs {

class ClientCa;
using ClientCaPtr = std::shared_ptr<const ClientCa>;

class ClientCa {
 public:
  // Every certificate of the PEM bundle at `path`, at least one. The error names the file.
  static std::variant<ClientCaPtr, std::string> load(const std::string& path);
  static std::variant<ClientCaPtr, std::string> from_pem(const std::string& pem);
  ~ClientCa();
  ClientCa(const ClientCa&) = delete;
  ClientCa& operator=(const ClientCa&) = delete;

  // The trust store a client's chain is verified against (SSL_set1_verify_cert_store).
  X509_STORE* store() const { return store_; }
  // The CAs' subject names, sent in the CertificateRequest (SSL_set_client_CA_list takes a
  // copy: SSL_dup_CA_list).
  STACK_OF(X509_NAME) * names() const { return names_; }
  std::size_t size() const;  // how many certificates

 private:
  ClientCa() = default;
  X509_STORE* store_ = nullptr;
  STACK_OF(X509_NAME) * names_ = nullptr;
};

}  // namespace gpuadmit::certs
