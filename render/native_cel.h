#pragma once
// CEL source text for the native policies (docs/native.md): literals, lists and the few
// combinators the generators share. Everything the policy says is written into the expressions
// as a literal; these functions make those literals safe (quoting, regex anchoring).
//
//   quote("it's")                       // 'it\'s'
//   string_list({"a", "b"})             // ['a', 'b']
//   full_match("request.namespace", "ml-.*")  // request.namespace.matches('^(?:ml-.*)$')

#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::render::native {

// A CEL string literal in single quotes: backslash, quote and control characters escaped
// (CEL's escapes: \\, \', \n, \r, \t, \xHH); other UTF-8 text as is.
std::string quote(std::string_view text);

// ['a', 'b'] (each element quoted); [] when empty.
std::string string_list(const std::vector<std::string>& items);

// `subject.matches('^(?:pattern)$')`: an RE2 full match. CEL's matches() is RE2 too (Go's
// regexp, the same syntax), but matches anywhere: the anchors make it the engine's
// RE2::FullMatch (policies/compiled_policy.cc).
std::string full_match(std::string_view subject, std::string_view pattern);

// `request.namespace` full-matches one of the RE2 patterns (policies/compiled_policy.cc
// NamespaceMatcher): patterns of letters, digits, '-' and '_' compared as a list, the rest as
// anchored RE2 matches; "false" when there are none.
std::string namespace_in(const std::vector<std::string>& patterns);

// "(a || b)", "false" when empty; "(a && b)", "true" when empty.
std::string any_of(const std::vector<std::string>& terms);
std::string all_of(const std::vector<std::string>& terms);

// `[value].map(name, body)[0]`: binds `name` to `value` once inside `body` (the base CEL
// environment of Kubernetes has no cel.bind before 1.3x).
std::string let(std::string_view name, std::string_view value, std::string_view body);

// `(key in map && type(map[key]) == string) ? map[key] : ''` for a quoted key: a string member,
// "" when absent, null or not a string (how the engine reads such fields: string_member).
std::string string_field(std::string_view map, std::string_view key);

// `(type(expr) == map && key in expr && type(expr[key]) == map) ? expr[key] : {}`: an object
// member, {} when absent, null or not an object.
std::string map_field(std::string_view map, std::string_view key);

// The same for a list member: [] when absent, null or not a list.
std::string list_field(std::string_view map, std::string_view key);

}  // namespace gpuadmit::render::native
