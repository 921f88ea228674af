#include "webhook/build_info.h"

#include <httplib.h>
#include <openssl/opensslv.h>

namespace gpuadmit::webhook {

std::string library_versions() {
  return std::string("cpp-httplib ") + CPPHTTPLIB_VERSION + ", " + OPENSSL_VERSION_TEXT;
}

}  // namespace gpuadmit::webhook
