#pragma once
// The versions of the libraries the webhook was built against, for `gpuadmit --version`.

#include <string>

namespace gpuadmit::webhook {

// "cpp-httplib 0.11.4, OpenSSL 3.0.x ..." as the headers said at build time.
std::string library_versions();

}  // namespace gpuadmit::webhook
