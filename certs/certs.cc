#include "certs/certs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace gpuadmit::certs {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

// "openssl: <what>: <first queued OpenSSL error>", and the queue cleared.
std::string openssl_error(std::string_view what) {
  std::string message = "openssl: " + std::string(what);
  if (unsigned long code = ERR_get_error(); code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    message += ": ";
    message += buf;
  }
  ERR_clear_error();
  return message;
}

std::string to_pem(X509* cert) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string to_pem(EVP_PKEY* key) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// A random positive 159-bit serial (RFC 5280 allows up to 20 octets, positive).
bool set_random_serial(X509* cert) {
  unsigned char bytes[20];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never negative
  Owned<BIGNUM> bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  return bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr;
}

bool add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// Subject alternative names built as GENERAL_NAMEs, not through the config-string parser, so a
// name containing ',' or ':' cannot inject other entries.
bool add_subject_alt_names(X509* cert, const std::vector<std::string>& names) {
  Owned<GENERAL_NAMES> gens(sk_GENERAL_NAME_new_null());
  for (const std::string& name : names) {
    GENERAL_NAME* gen = GENERAL_NAME_new();
    if (gen == nullptr) return false;
    unsigned char ip[16];
    int ip_len = 0;
    if (inet_pton(AF_INET, name.c_str(), ip) == 1) ip_len = 4;
    if (ip_len == 0 && inet_pton(AF_INET6, name.c_str(), ip) == 1) ip_len = 16;
    ASN1_OCTET_STRING* value = ASN1_OCTET_STRING_new();
    ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
    bool ok = value != nullptr && dns != nullptr;
    if (ok && ip_len > 0) {
      ok = ASN1_OCTET_STRING_set(value, ip, ip_len) == 1;
      GENERAL_NAME_set0_value(gen, GEN_IPADD, value);
      ASN1_IA5STRING_free(dns);
    } else if (ok) {
      ok = ASN1_STRING_set(dns, name.data(), static_cast<int>(name.size())) == 1;
      GENERAL_NAME_set0_value(gen, GEN_DNS, dns);
      ASN1_OCTET_STRING_free(value);
    } else {
      ASN1_OCTET_STRING_free(value);
      ASN1_IA5STRING_free(dns);
    }
    if (!ok || sk_GENERAL_NAME_push(gens.get(), gen) == 0) {
      GENERAL_NAME_free(gen);
      return false;
    }
  }
  return X509_add1_ext_i2d(cert, NID_subject_alt_name, gens.get(), 0, X509V3_ADD_DEFAULT) == 1;
}

// A certificate skeleton: version 3, random serial, validity from one hour ago (clock skew
// between the machine that generates and the API server) for `valid_days`, subject CN.
Owned<X509> new_certificate(std::string_view common_name, int valid_days, EVP_PKEY* key) {
  Owned<X509> cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1 || !set_random_serial(cert.get())) return {};
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(valid_days) * 86400) ==
          nullptr) {
    return {};
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.data()),
                                 static_cast<int>(common_name.size()), -1, 0) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return {};
  }
  return cert;
}

Owned<EVP_PKEY> new_p256_key() { return Owned<EVP_PKEY>(EVP_EC_gen("P-256")); }

bool write_file_atomically(const std::string& path, const std::string& content, mode_t mode,
                           std::string& error) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  ::fchmod(fd, mode);  // the umask may have narrowed or the file may have existed
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = tmp + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

Result<PemPair> generate_ca(std::string_view common_name, int valid_days) {
  Owned<EVP_PKEY> key = new_p256_key();
  if (!key) return openssl_error("EVP_EC_gen(P-256)");
  Owned<X509> cert = new_certificate(common_name, valid_days, key.get());
  if (!cert) return openssl_error("building the CA certificate");
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return openssl_error("CA extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return openssl_error("signing the CA");
  return PemPair{to_pem(cert.get()), to_pem(key.get())};
}

Result<PemPair> issue_certificate(const PemPair& ca, const LeafProfile& profile) {
  Owned<BIO> cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  Owned<X509> ca_cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  Owned<BIO> key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  Owned<EVP_PKEY> ca_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_cert || !ca_key) return openssl_error("reading the CA certificate and key");
  if (profile.names.empty()) return std::string("a certificate needs at least one name");

  Owned<EVP_PKEY> key = new_p256_key();
  if (!key) return openssl_error("EVP_EC_gen(P-256)");
  Owned<X509> cert = new_certificate(profile.common_name, profile.valid_days, key.get());
  if (!cert) return openssl_error("building the certificate");
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  if (!add_extension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_extension(cert.get(), ca_cert.get(), NID_ext_key_usage,
                     profile.client_auth ? "clientAuth" : "serverAuth") ||
      !add_extension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always") ||
      !add_subject_alt_names(cert.get(), profile.names)) {
    return openssl_error("certificate extensions");
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return openssl_error("signing the certificate");
  }
  return PemPair{to_pem(cert.get()), to_pem(key.get())};
}

std::vector<std::string> service_dns_names(std::string_view service, std::string_view ns) {
  const std::string s(service), n(ns);
  return {s, s + "." + n, s + "." + n + ".svc", s + "." + n + ".svc.cluster.local"};
}

std::string write_certificate_files(const std::string& dir, const std::string& ca_pem,
                                    const PemPair& serving) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return dir + ": " + ec.message();
  std::string error;
  // The key first: a watcher that sees the new certificate then finds its key already in place.
  if (!write_file_atomically(dir + "/tls.key", serving.key_pem, 0600, error) ||
      !write_file_atomically(dir + "/tls.crt", serving.cert_pem, 0644, error) ||
      !write_file_atomically(dir + "/ca.crt", ca_pem, 0644, error)) {
    return error;
  }
  return {};
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace gpuadmit::certs
