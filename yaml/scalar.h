#pragma once
// YAML scalar typing as kubectl sees it. kubectl turns YAML into JSON with sigs.k8s.io/yaml, which
// decodes with go-yaml v2 (YAML 1.1 rules): `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `0x1F`
// and `1_000` are integers, timestamps stay strings. The reader (and so lint, fleet and `gpuadmit
// test`) uses the same rules, so that the object it evaluates is the JSON the API server (and so
// the webhook) would receive (docs/lint.md).
//
//   resolve_plain_scalar("on") == true;   resolve_plain_scalar("500m") == "500m"
//   plain_scalar_is_safe("1") == false    // the emitter must quote it: "1"

#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit::yaml {

// The JSON value of a plain (unquoted, untagged) scalar.
Json resolve_plain_scalar(std::string_view text);

// A JSON object key from a plain scalar key: sigs.k8s.io/yaml stringifies non-string keys
// (`true:` → "true", `1:` → "1"). nullopt for keys it rejects (null, floats).
std::optional<std::string> resolve_plain_key(std::string_view text);

// A whole double (as go's encoding/json prints it without exponent, |d| < 1e21) becomes an
// integer, as kubectl's YAML → JSON conversion and the API server's decoder see it.
Json normalize_number(double d);

// True when `s` can be written as a plain scalar in block context and reads back as the same
// string under both go-yaml v2 (YAML 1.1) and YAML 1.2 core rules.
bool plain_scalar_is_safe(std::string_view s);

// Characters a scalar cannot hold raw and read back the same under go-yaml v2: DEL and the C1
// controls (not allowed in a YAML stream), NEL, LS and PS (line breaks in YAML 1.1), and the
// byte order mark (stripped). A string holding one is written double-quoted with \uXXXX escapes.
bool has_unsafe_unicode(std::string_view s);
// `json_escaped` (a JSON string literal, as nlohmann writes it) with those characters escaped.
std::string escape_unsafe_unicode(std::string_view json_escaped);

}  // namespace gpuadmit::yaml
