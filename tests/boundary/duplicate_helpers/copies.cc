// Fixture for tests/boundary/check_helpers_once.cmake: second copies of the shared helpers,
// which the scan must refuse. Never compiled.
#include <string>
#include <vector>

namespace {

int64_t saturating_add(int64_t a, int64_t b) { return a + b; }

static std::string join(const std::vector<std::string>& items) {
  return items.empty() ? "" : items[0];
}

int use(int64_t a) {
  auto sat_mul = [](int64_t x, int64_t y) { return x * y; };
  return static_cast<int>(sat_mul(a, 2) + saturating_add(a, 1));
}

}  // namespace
