#pragma once
// XML 1.0 text and attribute values for the XML writers: lint's JUnit report, `gpuadmit test`'s
// JUnit report and the fleet SVG.
//
//   "<testcase name=\"" + xml::escape(name) + "\">"
//
// Markup characters become entities; control characters XML 1.0 cannot carry (all below U+0020
// but tab, LF and CR, and DEL) are dropped; bytes that are not UTF-8, and U+FFFE/U+FFFF, are
// replaced by U+FFFD (a file name or a label can hold any byte).

#include <string>
#include <string_view>

namespace gpuadmit::xml {

std::string escape(std::string_view s);

}  // namespace gpuadmit::xml
