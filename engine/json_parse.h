#pragma once
// A JSON parser that builds gpuadmit::Json directly, for the webhook's hot path: it accepts exactly
// what `Json::parse(text, nullptr, false)` (nlohmann 3.11) accepts and produces the same value,
// number types included, but without nlohmann's per-character input adapter and token buffers.
// tests/engine/json_parse_test.cpp checks the parity differentially.

#include <cstddef>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

// Parses `text` into `out`. Returns false when `text` is not valid JSON (RFC 8259 as nlohmann's
// lexer reads it); `out` is then a discarded value, as Json::parse(..., false) would return.
// Iterative: any nesting depth is parsed without recursion (memory is the only bound).
bool parse_json(std::string_view text, Json& out);

enum class JsonParseResult { kOk, kInvalid, kTooDeep };
// The same, but stops with kTooDeep as soon as arrays/objects nest deeper than `max_depth` (as
// json_depth_exceeds counts it), so a caller that limits depth needs no separate scan. An input
// that is invalid before it gets that deep is kInvalid even if it nests deeper later.
JsonParseResult parse_json(std::string_view text, Json& out, std::size_t max_depth);

}  // namespace gpuadmit
