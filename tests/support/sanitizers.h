#pragma once
// Whether the test is built with AddressSanitizer (CI's build-asan/), where an evaluation costs
// ~30 times as much: the property sweeps over real documents then take a share of their inputs
// (every document still takes part); the plain build, CI's `test` phase, sweeps everything.
//
//   for (int i = 0; i < (kUnderAddressSanitizer ? 1000 : 3000); ++i) ...

namespace gpuadmit::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace gpuadmit::testing
