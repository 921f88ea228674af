#pragma once
// Internal to fleet/report.cc and fleet/live_output.cc: the terminal reports' aligned tables.

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::fleet {

// Display width of UTF-8 text: its code points ("2×8" is 3 wide).
inline size_t display_width(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

inline void write_table(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] + 2 - display_width(row[i]), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << "  " << line << "\n";
  }
}

}  // namespace gpuadmit::fleet
