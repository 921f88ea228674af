#pragma once
// A JSON parser that builds gpuadmit::Json directly, for the webhook's hot path: it accepts exactly
// what `Json::parse(text, nullptr, false)` (nlohmann 3.11) accepts and produces the same value,
// number types included, but without nlohmann's per-character input adapter and token buffers.
// tests/engine/json_parse_test.cpp checks the parity differentially.

#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

// Parses `text` into `out`. Returns false when `text` is not valid JSON (RFC 8259 as nlohmann's
// lexer reads it); `out` is then a discarded value, as Json::parse(..., false) would return.
// Iterative: any nesting depth is parsed without recursion (memory is the only bound).
bool parse_json(std::string_view text, Json& out);

}  // namespace gpuadmit
