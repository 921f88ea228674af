#pragma once
// Waiting for an event instead of a time: poll an observable condition until it holds or a
// deadline passes. A loaded machine makes the wait longer, never the test red; the deadline only
// bounds a test whose event never comes.
//
//   REQUIRE(eventually([&] { return server.log().find("\"msg\":\"draining\"") != npos; }));

#include <chrono>
#include <thread>

namespace gpuadmit::testing {

// Deadlines generous enough for a 2-core machine under a full build; the usual wait is
// milliseconds.
inline constexpr std::chrono::milliseconds kEventDeadline{15000};

template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds deadline = kEventDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace gpuadmit::testing
