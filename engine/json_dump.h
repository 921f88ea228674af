#pragma once
// Compact JSON text of a gpuadmit::Json, byte for byte what Json::dump(-1, ' ', false, handler)
// writes, without nlohmann's per-byte UTF-8 state machine for the common strings: printable
// ASCII without '"' or '\\' is copied as it is; any other string, and every float, is written by
// nlohmann's serializer itself, so escapes, UTF-8 handling (and the strict handler's exception on
// invalid UTF-8) and number formatting never differ. For the webhook's response and patch.

#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit {

void append_json(std::string& out, const Json& value,
                 Json::error_handler_t handler = Json::error_handler_t::strict);
std::string dump_json(const Json& value,
                      Json::error_handler_t handler = Json::error_handler_t::strict);
// False when append_json_string would copy `value` as it is between the quotes (printable
// ASCII without '"' or '\\').
bool needs_json_escape(std::string_view value);
// One string value, quoted and escaped.
void append_json_string(std::string& out, std::string_view value,
                        Json::error_handler_t handler = Json::error_handler_t::strict);

}  // namespace gpuadmit
