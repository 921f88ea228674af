#pragma once
// FUZZ_CHECK(condition, what): a property every input must keep. A failure prints the property
// and aborts, which libFuzzer records as a crash with its input, and which fails the CTest replay
// of tests/fuzz_regressions/ (fuzz/replay_main.cc).

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                           \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s: %s (%s:%d)\n", #condition, what, __FILE__, \
                   __LINE__);                                                                 \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
