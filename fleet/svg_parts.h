#pragma once
// Internal to fleet/svg.cc and fleet/live_svg.cc: the fleet picture's sizes, colours and text.

#include <cstdio>
#include <string>
#include <string_view>

#include "xml/escape.h"

namespace gpuadmit::fleet::svg_parts {

inline constexpr int kMargin = 16;
inline constexpr int kLabelWidth = 80;
inline constexpr int kCell = 18;
inline constexpr int kGap = 3;
inline constexpr int kRow = kCell + kGap;
inline constexpr int kLine = 16;  // text line height
inline constexpr int kListWidth = 520;

// A distinct colour per workload, none of them red (red marks stranded GPUs): Tableau's
// palette without its red, then hues by the golden angle outside the reds.
inline std::string colour(size_t index) {
  static constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                             "#edc948", "#9c755f", "#bab0ac", "#17becf"};
  constexpr size_t kCount = sizeof kPalette / sizeof kPalette[0];
  if (index < kCount) return kPalette[index];
  const int hue = 30 + static_cast<int>((index - kCount) * 137.508) % 300;  // 30..329
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "hsl(%d,55%%,%d%%)", hue, index % 2 == 0 ? 45 : 65);
  return buffer;
}

inline std::string text(int x, int y, std::string_view content, std::string_view extra = "") {
  return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\"" +
         std::string(extra) + ">" + xml::escape(content) + "</text>\n";
}

// The red cross over a stranded GPU's cell.
inline std::string cross(int x, int y) {
  return "<path d=\"M" + std::to_string(x + 3) + " " + std::to_string(y + 3) + "l" +
         std::to_string(kCell - 6) + " " + std::to_string(kCell - 6) + "m0 -" +
         std::to_string(kCell - 6) + "l-" + std::to_string(kCell - 6) + " " +
         std::to_string(kCell - 6) + "\" stroke=\"#d00000\" stroke-width=\"2\"/>\n";
}

// The document around `body`.
inline std::string document(int width, int height, const std::string& body) {
  std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"" +
      std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
      std::to_string(width) + " " + std::to_string(height) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      "<style>.title{font-weight:bold;font-size:13px}.unplaceable{fill:#a00000}</style>\n";
  svg += body;
  svg += "</svg>\n";
  return svg;
}

}  // namespace gpuadmit::fleet::svg_parts
