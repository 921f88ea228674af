#pragma once
// An immutable serving key pair (leaf certificate, its chain, private key) loaded from PEM files,
// shared through std::shared_ptr<const KeyPair> so that a handshake can keep using the pair it
// picked while a reload publishes a new one.
//
//   auto loaded = KeyPair::load("tls.crt", "tls.key");
//   if (auto* pair = std::get_if<KeyPairPtr>(&loaded)) use((*pair)->certificate());

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

namespace gpuadmit::certs {

class KeyPair;
using KeyPairPtr = std::shared_ptr<const KeyPair>;

class KeyPair {
 public:
  // Reads the first certificate of `cert_path` as the leaf and any further ones as its chain,
  // and the private key of `key_path`; checks that the key belongs to the certificate and that
  // the key is ECDSA or RSA. The error names the file and what is wrong.
  static std::variant<KeyPairPtr, std::string> load(const std::string& cert_path,
                                                    const std::string& key_path);
  static std::variant<KeyPairPtr, std::string> from_pem(const std::string& cert_pem,
                                                        const std::string& key_pem);
  ~KeyPair();
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;

  X509* certificate() const { return cert_; }
  STACK_OF(X509) * chain() const { return chain_; }  // may be empty, never null
  EVP_PKEY* key() const { return key_; }
  // notAfter as Unix seconds (the certificate-expiry metric).
  std::int64_t not_after_unix() const { return not_after_; }
  // Lower-case hex serial number: tells rotations apart in logs and tests.
  const std::string& serial_hex() const { return serial_; }

 private:
  KeyPair() = default;
  X509* cert_ = nullptr;
  STACK_OF(X509) * chain_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  std::int64_t not_after_ = 0;
  std::string serial_;
};

}  // namespace gpuadmit::certs
