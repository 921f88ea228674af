// Two JSON documents (the input split at its first NUL byte): the JSON Patch json_diff builds
// from the first to the second is nlohmann's Json::diff, its text form is that patch's text,
// and applying it reproduces the target whenever json_diff says it does.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/json_diff.h"
#include "engine/json_dump.h"
#include "engine/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  if (split == std::string_view::npos) return 0;
  gpuadmit::Json source, target;
  if (gpuadmit::parse_json(input.substr(0, split), source, 64) != gpuadmit::JsonParseResult::kOk ||
      gpuadmit::parse_json(input.substr(split + 1), target, 64) != gpuadmit::JsonParseResult::kOk) {
    return 0;
  }
  const gpuadmit::JsonDiff d = gpuadmit::json_diff(source, target, gpuadmit::PatchForm::kJson);
  if (d.patch != gpuadmit::Json::diff(source, target)) std::abort();
  if (d.equal != (source == target)) std::abort();
  const gpuadmit::JsonDiff text = gpuadmit::json_diff(source, target, gpuadmit::PatchForm::kText);
  if (text.patch_text != gpuadmit::dump_json(d.patch)) std::abort();
  if (d.reproduces && source.patch(d.patch) != target) std::abort();
  return 0;
}
