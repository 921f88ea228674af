// certs/: CA and serving certificate generation, key pair loading, file change detection, and
// the `gpuadmit certs` command.

#include <catch2/catch.hpp>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "certs/certs.h"
#include "certs/file_watch.h"
#include "certs/key_pair.h"
#include "tests/support/process.h"

namespace certs_test {

namespace {

using gpuadmit::certs::KeyPair;
using gpuadmit::certs::KeyPairPtr;
using gpuadmit::certs::LeafProfile;
using gpuadmit::certs::PemPair;
using gpuadmit::testing::run_command;
using gpuadmit::testing::slurp;

X509* read_cert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

// Verifies `leaf` against `ca` for `host` (DNS name or IP) as a TLS client would.
bool verifies(const std::string& ca_pem, const std::string& leaf_pem, const std::string& host,
              int purpose = X509_PURPOSE_SSL_SERVER) {
  X509* ca = read_cert(ca_pem);
  X509* leaf = read_cert(leaf_pem);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, purpose);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
  if (host.find_first_not_of("0123456789.") == std::string::npos) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  }
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(leaf);
  X509_free(ca);
  return ok;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/gpuadmit-certs-test-XXXXXX";
  return mkdtemp(tmpl);
}

const PemPair& test_ca() {
  static const PemPair ca = std::get<PemPair>(gpuadmit::certs::generate_ca("test CA", 30));
  return ca;
}

}  // namespace

TEST_CASE("service_dns_names lists the four names the API server may use") {
  CHECK(gpuadmit::certs::service_dns_names("gpuadmit", "ml") ==
        std::vector<std::string>{"gpuadmit", "gpuadmit.ml", "gpuadmit.ml.svc",
                                 "gpuadmit.ml.svc.cluster.local"});
}

TEST_CASE("a serving certificate verifies for every SAN and nothing else") {
  LeafProfile profile;
  profile.common_name = "gpuadmit.ml.svc";
  profile.names = gpuadmit::certs::service_dns_names("gpuadmit", "ml");
  profile.names.push_back("127.0.0.1");
  auto leaf = gpuadmit::certs::issue_certificate(test_ca(), profile);
  REQUIRE(std::holds_alternative<PemPair>(leaf));
  const PemPair& pair = std::get<PemPair>(leaf);

  for (const char* host : {"gpuadmit", "gpuadmit.ml", "gpuadmit.ml.svc",
                           "gpuadmit.ml.svc.cluster.local", "127.0.0.1"}) {
    INFO(host);
    CHECK(verifies(test_ca().cert_pem, pair.cert_pem, host));
  }
  CHECK_FALSE(verifies(test_ca().cert_pem, pair.cert_pem, "gpuadmit.other.svc"));
  CHECK_FALSE(verifies(test_ca().cert_pem, pair.cert_pem, "127.0.0.2"));
  // serverAuth only: not usable as a client certificate.
  CHECK_FALSE(
      verifies(test_ca().cert_pem, pair.cert_pem, "gpuadmit.ml.svc", X509_PURPOSE_SSL_CLIENT));
  // Another CA does not verify it.
  const PemPair other = std::get<PemPair>(gpuadmit::certs::generate_ca("other CA", 30));
  CHECK_FALSE(verifies(other.cert_pem, pair.cert_pem, "gpuadmit.ml.svc"));
}

TEST_CASE("keys are ECDSA P-256 and certificates are v3 with a CA:FALSE leaf") {
  LeafProfile profile;
  profile.common_name = "x";
  profile.names = {"x.example"};
  const PemPair leaf = std::get<PemPair>(gpuadmit::certs::issue_certificate(test_ca(), profile));
  X509* cert = read_cert(leaf.cert_pem);
  REQUIRE(cert != nullptr);
  CHECK(X509_get_version(cert) == 2);
  CHECK(X509_check_ca(cert) == 0);
  EVP_PKEY* key = X509_get0_pubkey(cert);
  CHECK(EVP_PKEY_get_base_id(key) == EVP_PKEY_EC);
  char group[64] = {};
  size_t len = 0;
  EVP_PKEY_get_group_name(key, group, sizeof group, &len);
  CHECK(std::string(group) == "prime256v1");
  X509_free(cert);

  X509* ca = read_cert(test_ca().cert_pem);
  CHECK(X509_check_ca(ca) != 0);
  X509_free(ca);
}

TEST_CASE("a client profile verifies for client authentication") {
  LeafProfile profile;
  profile.common_name = "kube-apiserver";
  profile.names = {"kube-apiserver"};
  profile.client_auth = true;
  const PemPair leaf = std::get<PemPair>(gpuadmit::certs::issue_certificate(test_ca(), profile));
  CHECK(verifies(test_ca().cert_pem, leaf.cert_pem, "kube-apiserver", X509_PURPOSE_SSL_CLIENT));
}

TEST_CASE("issue_certificate refuses an empty name list and a broken CA") {
  LeafProfile profile;
  profile.common_name = "x";
  auto none = gpuadmit::certs::issue_certificate(test_ca(), profile);
  REQUIRE(std::holds_alternative<std::string>(none));
  CHECK(std::get<std::string>(none) == "a certificate needs at least one name");
  profile.names = {"x"};
  auto broken = gpuadmit::certs::issue_certificate(PemPair{"junk", "junk"}, profile);
  REQUIRE(std::holds_alternative<std::string>(broken));
  CHECK(std::get<std::string>(broken).rfind("openssl: reading the CA certificate and key", 0) == 0);
}

TEST_CASE("KeyPair loads a matching pair and reports expiry and serial") {
  LeafProfile profile;
  profile.common_name = "x";
  profile.names = {"x"};
  profile.valid_days = 10;
  const PemPair leaf = std::get<PemPair>(gpuadmit::certs::issue_certificate(test_ca(), profile));
  auto loaded = KeyPair::from_pem(leaf.cert_pem + test_ca().cert_pem, leaf.key_pem);
  REQUIRE(std::holds_alternative<KeyPairPtr>(loaded));
  const KeyPairPtr& pair = std::get<KeyPairPtr>(loaded);
  const std::int64_t expected = std::time(nullptr) + 10 * 86400;
  CHECK(std::abs(pair->not_after_unix() - expected) < 120);
  CHECK(pair->serial_hex().size() >= 30);
  CHECK(sk_X509_num(pair->chain()) == 1);
}

TEST_CASE("KeyPair refuses a key of another certificate, garbage and missing files") {
  LeafProfile profile;
  profile.common_name = "x";
  profile.names = {"x"};
  const PemPair a = std::get<PemPair>(gpuadmit::certs::issue_certificate(test_ca(), profile));
  const PemPair b = std::get<PemPair>(gpuadmit::certs::issue_certificate(test_ca(), profile));
  auto mismatch = KeyPair::from_pem(a.cert_pem, b.key_pem);
  REQUIRE(std::holds_alternative<std::string>(mismatch));
  CHECK(std::get<std::string>(mismatch) == "key does not match the certificate");

  auto garbage = KeyPair::from_pem("not a certificate", a.key_pem);
  REQUIRE(std::holds_alternative<std::string>(garbage));
  CHECK(std::get<std::string>(garbage).rfind("certificate: no PEM certificate found", 0) == 0);

  auto no_key = KeyPair::from_pem(a.cert_pem, "");
  REQUIRE(std::holds_alternative<std::string>(no_key));
  CHECK(std::get<std::string>(no_key).rfind("key: no PEM private key found", 0) == 0);

  auto missing = KeyPair::load("/nonexistent/tls.crt", "/nonexistent/tls.key");
  REQUIRE(std::holds_alternative<std::string>(missing));
  CHECK(std::get<std::string>(missing) == "/nonexistent/tls.crt: cannot read the certificate file");
}

TEST_CASE("file_signature sees a Secret volume's ..data symlink swap") {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir();
  fs::create_directory(dir + "/..2024_01");
  std::ofstream(dir + "/..2024_01/tls.crt") << "one";
  fs::create_directory_symlink("..2024_01", dir + "/..data");
  fs::create_symlink("..data/tls.crt", dir + "/tls.crt");
  const auto first = gpuadmit::certs::file_signature(dir + "/tls.crt");
  CHECK(first.exists);
  CHECK(gpuadmit::certs::file_signature(dir + "/tls.crt") == first);

  // What kubelet's atomic writer does: new directory, new symlink, rename over ..data.
  fs::create_directory(dir + "/..2024_02");
  std::ofstream(dir + "/..2024_02/tls.crt") << "two";  // same size, other inode
  fs::create_directory_symlink("..2024_02", dir + "/..data_tmp");
  fs::rename(dir + "/..data_tmp", dir + "/..data");
  const auto second = gpuadmit::certs::file_signature(dir + "/tls.crt");
  CHECK(second.exists);
  CHECK(second != first);

  fs::remove_all(dir + "/..2024_02");
  CHECK_FALSE(gpuadmit::certs::file_signature(dir + "/tls.crt").exists);
  fs::remove_all(dir);
}

TEST_CASE("base64 matches RFC 4648 test vectors") {
  CHECK(gpuadmit::certs::base64("") == "");
  CHECK(gpuadmit::certs::base64("f") == "Zg==");
  CHECK(gpuadmit::certs::base64("fo") == "Zm8=");
  CHECK(gpuadmit::certs::base64("foo") == "Zm9v");
  CHECK(gpuadmit::certs::base64("foobar") == "Zm9vYmFy");
}

TEST_CASE("gpuadmit certs writes ca.crt, tls.crt, tls.key and prints the caBundle") {
  const std::string dir = temp_dir() + "/out";
  auto r = run_command(std::string(GPUADMIT_BINARY) + " certs --service gpuadmit --namespace ml" +
                       " --san localhost --san 127.0.0.1 --out " + dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string ca = slurp(dir + "/ca.crt"), crt = slurp(dir + "/tls.crt");
  CHECK(r.out == gpuadmit::certs::base64(ca) + "\n");
  for (const char* host :
       {"gpuadmit.ml.svc", "gpuadmit.ml.svc.cluster.local", "localhost", "127.0.0.1"}) {
    INFO(host);
    CHECK(verifies(ca, crt, host));
  }
  struct stat st {};
  REQUIRE(stat((dir + "/tls.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(std::holds_alternative<KeyPairPtr>(KeyPair::load(dir + "/tls.crt", dir + "/tls.key")));
  CHECK_FALSE(std::filesystem::exists(dir + "/tls.key.tmp"));
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST_CASE("gpuadmit certs usage errors exit 2 and say what is missing") {
  auto r = run_command(std::string(GPUADMIT_BINARY) + " certs --service gpuadmit --out /tmp/x");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--namespace is required") != std::string::npos);
  r = run_command(std::string(GPUADMIT_BINARY) +
                  " certs --service s --namespace n --out /tmp/x --days 0");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--days must be") != std::string::npos);
}
}  // namespace certs_test
