// xml::escape (xml/escape.h): what XML 1.0 (https://www.w3.org/TR/xml/#charsets, production
// [2] Char) lets a document carry, and the five predefined entities (§4.6).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "xml/escape.h"

namespace gpuadmit::xml {
namespace escape_test {
namespace {

struct EscapeCase {
  std::string name;
  std::string in;
  std::string out;
};

TEST_CASE("xml::escape: entities, characters XML 1.0 cannot carry, bytes that are not UTF-8",
          "[xml]") {
  const std::vector<EscapeCase> cases = {
      {"plain text", "gpu-a100 team/a", "gpu-a100 team/a"},
      {"the five markup characters", "<a href=\"x\">'&'</a>",
       "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"},
      {"tab, LF and CR are Chars", "a\tb\nc\rd", "a\tb\nc\rd"},
      {"other C0 controls and DEL are dropped",
       std::string("a\x01"
                   "b\x1f"
                   "c\x7f"
                   "d",
                   7) +
           std::string(1, '\0'),
       "abcd"},
      {"UTF-8 of 2, 3 and 4 bytes is kept", "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x9A\x80",
       "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x9A\x80"},
      {"a lone continuation byte",
       "a\x80"
       "b",
       "a\xEF\xBF\xBD"
       "b"},
      {"Latin-1 é (not UTF-8)", "caf\xE9", "caf\xEF\xBF\xBD"},
      {"an overlong encoding of '/'", "\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"a sequence cut short at the end", "x\xE2\x80", "x\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"a UTF-16 surrogate (U+D800)", "\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"U+FFFE and U+FFFF are not Chars", "\xEF\xBF\xBE\xEF\xBF\xBF",
       "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"beyond U+10FFFF", "\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
  };
  for (const EscapeCase& c : cases) {
    INFO(c.name);
    CHECK(escape(c.in) == c.out);
  }
}

}  // namespace
}  // namespace escape_test
}  // namespace gpuadmit::xml
