#pragma once
// The JSON type of the whole engine. Like nlohmann::ordered_json it keeps the input's key order,
// so that lint's --fix output and the patched objects read like what the user wrote; its object
// type (engine/json_map.h) moves rather than copies siblings when an object grows.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/json_map.h"

namespace gpuadmit {

using Json = nlohmann::basic_json<ordered_map>;
using JsonPointer = Json::json_pointer;

// An empty object and an empty list. nlohmann's Json::object() and Json::array() build them
// through the initializer-list constructor (a type-deduction pass, even over no elements),
// ~45 instructions more a call on the parsers' and mutators' paths.
inline Json empty_object() { return Json(Json::value_t::object); }
inline Json empty_array() { return Json(Json::value_t::array); }

// True when `text` nests arrays/objects deeper than `max_depth`. Scans bytes (strings skipped)
// without parsing. SPEC §7.1 rejects nesting deeper than 100 because the engine's walks and the
// serializers recurse; parse_json applies the same limit while parsing, and the codec calls this
// only to word the error for an invalid body exactly as a scan before parsing would.
bool json_depth_exceeds(std::string_view text, int max_depth);

// Escapes one JSON Pointer reference token (RFC 6901: "~" → "~0", "/" → "~1").
std::string escape_pointer_token(std::string_view token);
// The same, appended to `out` (no temporary string on the diff's hot path).
void append_pointer_token(std::string& out, std::string_view token);

// The reference tokens of `pointer`, root first, unescaped: json_pointer keeps them private, and
// its public walk (`back`, `parent_pointer`) copies them.
const std::vector<std::string>& pointer_tokens(const JsonPointer& pointer);
// The value `pointer` refers to in `root`, or nullptr when there is none: what
// `root.contains(pointer) ? &root.at(pointer) : nullptr` gives, in one walk instead of two (and
// one lookup per object on the way instead of three).
const Json* find_pointer(const Json& root, const JsonPointer& pointer);

// Member lookup that never throws: nullptr when `j` is not an object or has no such key.
const Json* find_member(const Json& j, std::string_view key);
Json* find_member(Json& j, std::string_view key);
// parent[key] as an object: created (or a null replaced) when absent. nullptr when `parent` is not
// an object or the member has another type (left alone).
Json* member_object(Json& parent, std::string_view key);
// parent[key] as a list, created (or a null replaced) when absent; nullptr for another type.
Json* member_array(Json& parent, std::string_view key);
// The string value of a member, or empty when absent or not a string.
std::string_view string_member(const Json& j, std::string_view key);
// An object's name for messages: metadata.name, else metadata.generateName, else empty.
std::string object_name(const Json& object);

// Frees a tree, leaving `j` null. Cheaper than the destructor, which moves every node of a
// subtree onto a heap stack first (so that no tree is too deep for the call stack): this frees
// the children first, down to a bounded depth, and leaves anything deeper to the destructor.
void free_json(Json& j) noexcept;

}  // namespace gpuadmit
