// The shared helpers (engine/saturating.h, engine/join.h), table-driven. That they are the only
// definitions is checked by tests/boundary/check_helpers_once.cmake.

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/join.h"
#include "engine/saturating.h"

namespace gpuadmit {
namespace helpers_test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST_CASE("helpers: saturating_add and saturating_mul clamp at the int64 bounds") {
  struct Case {
    int64_t a, b, sum, product;
  };
  const std::vector<Case> cases = {
      {0, 0, 0, 0},
      {2, 3, 5, 6},
      {-2, 3, 1, -6},
      {kMax, 1, kMax, kMax},
      {kMax, kMax, kMax, kMax},
      {kMin, -1, kMin, kMax},  // -INT64_MIN overflows: the product's sign is +
      {kMin, kMin, kMin, kMax},
      {kMax, -1, kMax - 1, -kMax},
      {kMax / 2 + 1, 2, kMax / 2 + 1 + 2, kMax},
      {-(kMax / 2) - 2, 2, -(kMax / 2), kMin},
      {0, kMax, kMax, 0},
  };
  for (const Case& c : cases) {
    INFO(c.a << " and " << c.b);
    CHECK(saturating_add(c.a, c.b) == c.sum);
    CHECK(saturating_add(c.b, c.a) == c.sum);
    CHECK(saturating_mul(c.a, c.b) == c.product);
    CHECK(saturating_mul(c.b, c.a) == c.product);
  }
  static_assert(saturating_add(kMax, 1) == kMax);  // usable in constant expressions
}

TEST_CASE("helpers: join") {
  CHECK(join(std::vector<std::string>{}) == "");
  CHECK(join(std::vector<std::string>{"a100"}) == "a100");
  CHECK(join(std::vector<std::string>{"a100", "h100", "l4"}) == "a100, h100, l4");
  CHECK(join(std::vector<std::string>{"a", "b"}, ",") == "a,b");
  CHECK(join(std::vector<std::string_view>{"x", "y"}, "; ") == "x; y");
  // An empty item keeps its place: the separator does not depend on what came before.
  CHECK(join(std::vector<std::string>{"", "b"}, ",") == ",b");
}

}  // namespace
}  // namespace helpers_test
}  // namespace gpuadmit
