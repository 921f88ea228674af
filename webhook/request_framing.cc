#include "webhook/request_framing.h"

#include <charconv>
#include <cstdint>

namespace gpuadmit::webhook {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim_spaces_and_tabs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

RequestFraming frame_request(std::string_view buffered, std::size_t max_body) {
  constexpr RequestFraming kWait{};
  constexpr RequestFraming kHandOverNow{true, 0};

  // cpp-httplib 0.11.4 (detail::read_headers): the request line is the first line; the header
  // block ends at the first later line that is exactly "\r\n"; lines not ending in "\r\n" are
  // skipped, not parsed.
  const std::size_t request_line_end = buffered.find('\n');
  if (request_line_end == std::string_view::npos) {
    return buffered.size() >= kMaxHeaderBytes ? kHandOverNow : kWait;
  }
  std::size_t content_lengths = 0;
  std::uint64_t content_length = 0;
  bool length_readable = true;
  std::size_t line_start = request_line_end + 1;
  while (true) {
    const std::size_t line_end = buffered.find('\n', line_start);
    if (line_end == std::string_view::npos) {
      return buffered.size() >= kMaxHeaderBytes ? kHandOverNow : kWait;
    }
    std::string_view line = buffered.substr(line_start, line_end + 1 - line_start);
    line_start = line_end + 1;
    if (line == "\r\n") break;
    if (line_start >= kMaxHeaderBytes) return kHandOverNow;
    if (line.size() < 2 || line[line.size() - 2] != '\r') continue;  // skipped by cpp-httplib
    line.remove_suffix(2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim_spaces_and_tabs(line.substr(colon + 1));
    // The body arrives after an interim answer, or in a framing the pre-routing check refuses
    // before reading it: hand the request over with its headers.
    if (equals_ignoring_case(name, "Transfer-Encoding") || equals_ignoring_case(name, "Expect")) {
      return kHandOverNow;
    }
    if (equals_ignoring_case(name, "Content-Length")) {
      ++content_lengths;
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), content_length);
      length_readable = !value.empty() && ec == std::errc() && end == value.data() + value.size();
    }
  }
  const std::size_t header_size = line_start;
  if (content_lengths == 0) return {true, header_size};
  // Refused by the pre-routing check (several lengths, not a number, over --max-body) without
  // the body being read: no reason to wait for it.
  if (content_lengths > 1 || !length_readable || content_length > max_body) return kHandOverNow;
  const std::size_t size = header_size + static_cast<std::size_t>(content_length);
  if (buffered.size() < size) return kWait;
  return {true, size};
}

}  // namespace gpuadmit::webhook
