// The policy loader on arbitrary bytes (docs/fuzzing.md): it returns (no hang: libFuzzer's
// -timeout; no runaway memory: -rss_limit_mb), never crashes, and keeps its contract — a policy
// exactly when there is no error, a capped error list, every error in the file it read with a
// line of that file — and a policy it accepts compiles.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "fuzz/check.h"
#include "policies/compiled_policy.h"
#include "policies/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuadmit::PolicyLoadResult result = gpuadmit::load_policy(text, "fuzz.yaml");
  FUZZ_CHECK(result.policy.has_value() == result.errors.empty(), "a policy iff no error");
  FUZZ_CHECK(result.errors.size() <= 201, "200 errors and the 'too many errors' line at most");
  int lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  for (const gpuadmit::PolicyError& e : result.errors) {
    FUZZ_CHECK(e.file == "fuzz.yaml", "every error names the file");
    FUZZ_CHECK(!e.message.empty(), "every error says what is wrong");
    FUZZ_CHECK(e.line >= 0 && e.line <= lines, "an error's line is a line of the file");
    FUZZ_CHECK((e.line == 0) == (e.column == 0), "a line comes with a column");
  }
  if (result.policy) {
    try {
      gpuadmit::CompiledPolicy::compile(std::move(*result.policy));
    } catch (const std::exception&) {
      // load_compiled_policy reports this as an error; what matters here is no crash.
    }
  }
  return 0;
}
