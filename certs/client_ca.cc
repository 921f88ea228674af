#include "certs/client_ca.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <fstream>
#include <sstream>

namespace gpuadmit::certs {

ClientCa::~ClientCa() {
  X509_STORE_free(store_);
  sk_X509_NAME_pop_free(names_, X509_NAME_free);
}

std::size_t ClientCa::size() const { return static_cast<std::size_t>(sk_X509_NAME_num(names_)); }

std::variant<ClientCaPtr, std::string> ClientCa::from_pem(const std::string& pem) {
  ERR_clear_error();
  std::shared_ptr<ClientCa> ca(new ClientCa());
  ca->store_ = X509_STORE_new();
  ca->names_ = sk_X509_NAME_new_null();
  if (ca->store_ == nullptr || ca->names_ == nullptr) return std::string("out of memory");
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    const bool added =
        X509_STORE_add_cert(ca->store_, cert) == 1 &&
        sk_X509_NAME_push(ca->names_, X509_NAME_dup(X509_get_subject_name(cert))) > 0;
    X509_free(cert);
    if (!added) {
      BIO_free(bio);
      ERR_clear_error();
      return std::string("cannot add a certificate to the store");
    }
  }
  ERR_clear_error();  // the loop ends with a "no start line" error by design
  BIO_free(bio);
  if (ca->size() == 0) return std::string("no PEM certificate found");
  return ClientCaPtr(std::move(ca));
}

std::variant<ClientCaPtr, std::string> ClientCa::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "--client-ca " + path + ": cannot read the file";
  std::ostringstream pem;
  pem << in.rdbuf();
  auto loaded = from_pem(pem.str());
  if (auto* error = std::get_if<std::string>(&loaded)) {
    return "--client-ca " + path + ": cannot read PEM CA certificates from it (" + *error + ")";
  }
  return loaded;
}

}  // namespace gpuadmit::certs
