#include "certs/key_pair.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>

namespace gpuadmit::certs {
namespace {

std::string first_openssl_error() {
  std::string message;
  if (unsigned long code = ERR_get_error(); code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    message = std::string(": ") + buf;
  }
  ERR_clear_error();
  return message;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string serial_to_hex(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  if (bn == nullptr) return {};
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

KeyPair::~KeyPair() {
  X509_free(cert_);
  sk_X509_pop_free(chain_, X509_free);
  EVP_PKEY_free(key_);
}

std::variant<KeyPairPtr, std::string> KeyPair::from_pem(const std::string& cert_pem,
                                                        const std::string& key_pem) {
  ERR_clear_error();
  std::shared_ptr<KeyPair> pair(new KeyPair());
  pair->chain_ = sk_X509_new_null();
  BIO* cert_bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  pair->cert_ = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  if (pair->cert_ == nullptr) {
    BIO_free(cert_bio);
    return "certificate: no PEM certificate found" + first_openssl_error();
  }
  while (X509* extra = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr)) {
    sk_X509_push(pair->chain_, extra);
  }
  ERR_clear_error();  // the loop ends with a "no start line" error by design
  BIO_free(cert_bio);

  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  pair->key_ = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  if (pair->key_ == nullptr) return "key: no PEM private key found" + first_openssl_error();

  const int type = EVP_PKEY_get_base_id(pair->key_);
  if (type != EVP_PKEY_EC && type != EVP_PKEY_RSA) {
    return std::string("key: only ECDSA and RSA keys are supported");
  }
  if (X509_check_private_key(pair->cert_, pair->key_) != 1) {
    ERR_clear_error();
    return std::string("key does not match the certificate");
  }
  int days = 0, seconds = 0;
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  if (epoch != nullptr &&
      ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(pair->cert_)) == 1) {
    pair->not_after_ = static_cast<std::int64_t>(days) * 86400 + seconds;
  }
  ASN1_TIME_free(epoch);
  pair->serial_ = serial_to_hex(pair->cert_);
  return KeyPairPtr(std::move(pair));
}

std::variant<KeyPairPtr, std::string> KeyPair::load(const std::string& cert_path,
                                                    const std::string& key_path) {
  std::string cert_pem, key_pem;
  if (!read_file(cert_path, cert_pem)) return cert_path + ": cannot read the certificate file";
  if (!read_file(key_path, key_pem)) return key_path + ": cannot read the key file";
  auto loaded = from_pem(cert_pem, key_pem);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    return cert_path + ", " + key_path + ": " + *error;
  }
  return loaded;
}

}  // namespace gpuadmit::certs
