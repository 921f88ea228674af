// engine/shared_slot.h: what the webhook's reloads rely on. Readers keep the value they loaded,
// whole, while a writer replaces it and the old one is freed by whoever lets go of it last. Run
// under ThreadSanitizer in CI (scripts/test.sh build-tsan): with std::atomic<std::shared_ptr> in
// its place, TSan reported the reader's use against the writer's free.

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "engine/shared_slot.h"

namespace gpuadmit {
namespace shared_slot_test {
namespace {

// A value whose every element says which store made it: a torn or freed value would not.
struct Generation {
  explicit Generation(int g) : values(256, g) {}
  std::vector<int> values;
};

TEST_CASE("shared slot: readers keep what they loaded, whole, while a writer replaces it") {
  SharedSlot<const Generation> slot;
  CHECK(slot.load() == nullptr);
  slot.store(std::make_shared<const Generation>(0));
  constexpr int kStores = 2000;
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, torn{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      int last = 0;
      while (!stop.load()) {
        const std::shared_ptr<const Generation> held = slot.load();
        const int g = held->values.front();
        for (const int v : held->values) torn += v != g ? 1 : 0;
        torn += g < last ? 1 : 0;  // a reader never sees an older value after a newer one
        last = g;
        ++reads;
      }
    });
  }
  for (int g = 1; g <= kStores; ++g) slot.store(std::make_shared<const Generation>(g));
  stop.store(true);
  for (std::thread& t : readers) t.join();
  CHECK(torn.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(slot.load()->values.back() == kStores);
  CHECK(slot.load().use_count() == 2);  // the slot's and this one: no reader kept a copy
}

}  // namespace
}  // namespace shared_slot_test
}  // namespace gpuadmit
