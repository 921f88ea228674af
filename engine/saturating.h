#pragma once
// Integer arithmetic that saturates instead of overflowing: counts from manifests can be absurd
// (`replicas: 9223372036854775807`, `nvidia.com/gpu: 9e18`), and a wrapped sum would turn a huge
// request into a small or negative one. The one definition for engine/, rules/, mutators/, lint/
// and fleet/ (tests/boundary/check_helpers_once.cmake fails when a second one appears).
//
//   saturating_add(INT64_MAX, 1) == INT64_MAX;  saturating_mul(-2, INT64_MAX) == INT64_MIN

#include <cstdint>
#include <limits>

namespace gpuadmit {

// a + b, or the int64 bound on the side it overflowed.
constexpr int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// a × b, or the int64 bound of the product's sign when it overflowed.
constexpr int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) == (b < 0) ? std::numeric_limits<int64_t>::max()
                            : std::numeric_limits<int64_t>::min();
}

}  // namespace gpuadmit
