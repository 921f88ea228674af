#pragma once
// SHA-256 of a text, for naming what a file held (`gpuadmit register` stamps the policy's digest
// on the objects it writes: kube/webhook_registration.h).
//
//   sha256_hex("abc")   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

#include <string>
#include <string_view>

namespace gpuadmit::certs {

// Lower-case hex, 64 characters.
std::string sha256_hex(std::string_view data);

}  // namespace gpuadmit::certs
