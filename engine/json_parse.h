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

// The same for an admission.k8s.io AdmissionReview, except that the `managedFields` of
// request.object.metadata and request.oldObject.metadata are checked as JSON (valid, within the
// depth limit) but not built: `out` has no such member. The API server's field manager sets them
// before mutating admission (a controller's Pod carries about as many bytes of them as of its
// spec), and no rule or mutator reads them: the webhook answers the same without them
// (tests/engine/admission_managed_fields_test.cpp holds it to the whole tree's answer). Objects
// elsewhere keep theirs.
JsonParseResult parse_admission_review_json(std::string_view text, Json& out,
                                            std::size_t max_depth);

// An upper bound of the heap bytes parse_json(text, out, max_depth) holds at its peak (and so
// parse_admission_review_json, which builds a part of it) — the value it builds and the scratch
// stacks of the containers still open — or the value holds while it is destroyed (nlohmann's
// destructor moves children onto a stack), from one pass over the text that builds nothing (~10
// times faster than parsing; tens of times for text that is mostly long strings). The webhook
// sizes a large review's share of its memory budget with it (webhook/connection_pool.h). The
// model, per value, is this parser's allocations with libstdc++ on a 64-bit target
// (tests/engine/json_parse_memory_test.cpp holds it to what a parse allocates, on adversarial
// shapes and on every corpus file):
//   - a slot of 16 bytes in its array (48 with the key, in an object) both in a scratch stack
//     while its container is open and in the container's storage once it closes; each stack is
//     a vector, up to 3 times its peak while it grows;
//   - a string: a 32-byte std::string, plus its characters + 1 when over 15 (keys likewise, in
//     their member);
//   - an array or object: a 24-byte container and one allocation of exactly its children's size;
//   - an object of more than 16 members: a hash index of its keys while it is open;
//   - every allocation: kAllocationOverhead bytes more (glibc's chunk header and alignment;
//     mimalloc's size classes waste less).
// Text that is not valid JSON is bounded too (the parser stops early).
std::size_t parse_json_peak_bytes(std::string_view text, std::size_t max_depth);

}  // namespace gpuadmit
