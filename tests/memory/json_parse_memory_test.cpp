// parse_json_peak_bytes against what parse_json really allocates: the webhook sizes a large
// review's share of its memory budget with the estimate (webhook/connection_pool.h), so it must
// never be below the parse's peak, on the shapes that cost most per byte of text and on real
// documents, and not so far above it that real reviews wait for nothing.

#include <malloc.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <thread>

#include "engine/json_parse.h"

// Under AddressSanitizer the heap is ASan's: its allocator owns every operator new variant the
// test does not replace (a mix it reports as alloc-dealloc-mismatch) and malloc_usable_size is
// not glibc's chunk size. The measurement is of the shipped allocator: tests/CMakeLists.txt builds
// this file outside the sanitizer builds only (test_memory); the guard keeps it so.
#if defined(__SANITIZE_ADDRESS__)
#define GPUADMIT_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUADMIT_TEST_UNDER_ASAN 1
#endif
#endif

#ifndef GPUADMIT_TEST_UNDER_ASAN
// Heap bytes held by the counting thread, and their peak: every operator new of this test
// executable goes through here (glibc chunks: usable size + 8 bytes of header).
namespace {
thread_local bool counting = false;
thread_local long long held = 0, peak_held = 0;

long long chunk_bytes(void* p) { return static_cast<long long>(malloc_usable_size(p)) + 8; }
}  // namespace

// A replacement operator new over malloc is what the standard allows; gcc's check cannot tell.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (counting) {
    held += chunk_bytes(p);
    peak_held = std::max(peak_held, held);
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p != nullptr && counting) held -= chunk_bytes(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
#pragma GCC diagnostic pop

namespace {

using gpuadmit::Json;
using gpuadmit::JsonParseResult;

constexpr std::size_t kDepth = 100;  // the webhook's limit (SPEC §7.1)

struct Measured {
  long long peak = 0;
  std::size_t estimate = 0;
  bool ok = false;
};

// On a fresh thread, so that no scratch of an earlier parse is reused.
Measured measure(const std::string& text) {
  Measured m;
  std::thread([&] {
    counting = true;
    {
      Json out;
      m.ok = gpuadmit::parse_json(text, out, kDepth) == JsonParseResult::kOk;
    }
    counting = false;
    m.peak = peak_held;
  }).join();
  m.estimate = gpuadmit::parse_json_peak_bytes(text, kDepth);
  return m;
}

std::string repeat(const std::string& open, const std::string& item, std::size_t n,
                   const std::string& close) {
  std::string s = open;
  s.reserve(open.size() + n * (item.size() + 1) + close.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += ',';
    s += item;
  }
  return s + close;
}

std::string numbered(const char* format, std::size_t n, const char* open, const char* close) {
  std::string s = open;
  char item[128];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(item, sizeof item, format, i > 0 ? "," : "", i, i);
    s += item;
  }
  return s + close;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("parse_json_peak_bytes: at or above the peak on the costliest shapes per byte") {
  struct Shape {
    const char* name;
    std::string text;
  };
  const Shape shapes[] = {
      {"1.4 million numbers", repeat("[", "0", 1400000, "]")},
      {"900,000 empty strings", repeat("[", "\"\"", 900000, "]")},
      {"900,000 empty objects", repeat("[", "{}", 900000, "]")},
      {"900,000 empty arrays", repeat("[", "[]", 900000, "]")},
      {"900,000 nulls in pairs", repeat("[", "[null,true]", 300000, "]")},
      {"30,000 long keys",
       numbered(R"(%s"example.com/annotation-key-%06zu":"value-%06zu")", 30000, "{", "}")},
      {"40,000 containers",
       numbered(R"(%s{"name":"c%zu","image":"busybox:1.36","ports":[%zu]})", 40000, "[", "]")},
      {"escaped strings", repeat("[", "\"a\\\\b\\u00e9\\n0123456789abcdef\"", 50000, "]")},
      {"one long string", "\"" + std::string(2000000, 'a') + "\""},
      {"100 levels deep, wide at the bottom",
       std::string(99, '[') + repeat("[", "1", 500000, "]") + std::string(99, ']')},
      {"deeper than the limit", std::string(200000, '[')},
      {"not JSON after a while", repeat("[", "\"x\"", 100000, "") + "}"},
  };
  for (const Shape& s : shapes) {
    const Measured m = measure(s.text);
    INFO(s.name << ": text " << s.text.size() << " bytes, peak " << m.peak << ", estimate "
                << m.estimate);
    CHECK(static_cast<long long>(m.estimate) >= m.peak);
    // Tight enough to be worth having: within 1.5 times the peak where the peak is large.
    if (m.peak > 1000000) CHECK(static_cast<double>(m.estimate) <= 1.5 * m.peak);
  }
}

TEST_CASE("parse_json_peak_bytes: at or above the peak, within twice it, on every JSON file") {
  int files = 0;
  for (const char* root : {GPUADMIT_SHARED_DIR "/corpus", GPUADMIT_SOURCE_DIR "/bench",
                           GPUADMIT_SOURCE_DIR "/tests/fuzz_regressions/admission_review"}) {
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
      const std::string text = slurp(entry.path());
      const Measured m = measure(text);
      if (!m.ok) continue;
      ++files;
      INFO(entry.path() << ": peak " << m.peak << ", estimate " << m.estimate);
      CHECK(static_cast<long long>(m.estimate) >= m.peak);
      CHECK(static_cast<double>(m.estimate) <= 2.0 * m.peak + 4096);
    }
  }
  CHECK(files >= 10);
}

#endif  // GPUADMIT_TEST_UNDER_ASAN
