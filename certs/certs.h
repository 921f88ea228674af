#pragma once
// Certificate generation for the webhook (SPEC §8 `gpuadmit certs`): a self-signed CA and an
// ECDSA P-256 leaf signed by it, in PEM. OpenSSL only.
//
//   auto ca = generate_ca("gpuadmit-ca", 3650);
//   auto leaf = issue_certificate(*ca, {.common_name = "gpuadmit.ml.svc",
//                                       .names = service_dns_names("gpuadmit", "ml")});

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpuadmit::certs {

// A certificate and its private key (PKCS#8), both PEM.
struct PemPair {
  std::string cert_pem;
  std::string key_pem;
};

struct LeafProfile {
  std::string common_name;
  // DNS names or IP literals ("127.0.0.1", "::1"): IP literals become IP SANs, as Go's TLS
  // client matches an IP host only against IP SANs.
  std::vector<std::string> names;
  int valid_days = 365;
  bool client_auth = false;  // extendedKeyUsage clientAuth instead of serverAuth
};

// An error is one line naming what failed ("openssl: EVP_EC_gen: ...").
template <typename T>
using Result = std::variant<T, std::string>;

// A self-signed CA (basicConstraints CA:TRUE, keyCertSign) with an ECDSA P-256 key.
Result<PemPair> generate_ca(std::string_view common_name, int valid_days);

// A leaf certificate signed by `ca`, with every name of the profile as a SAN: Go's TLS client,
// which the API server uses, ignores the common name and accepts no certificate without SANs.
Result<PemPair> issue_certificate(const PemPair& ca, const LeafProfile& profile);

// S, S.NS, S.NS.svc, S.NS.svc.cluster.local: the names the API server may use for a service.
std::vector<std::string> service_dns_names(std::string_view service, std::string_view ns);

// Writes ca.crt, tls.crt and tls.key (0600) into `dir` (created if missing), each through a
// temporary file and rename so that a server watching the files never reads half of one.
// Returns an error message, or empty on success.
std::string write_certificate_files(const std::string& dir, const std::string& ca_pem,
                                    const PemPair& serving);

// Standard base64 of `bytes`, no line breaks (a webhook configuration's caBundle).
std::string base64(std::string_view bytes);

}  // namespace gpuadmit::certs
