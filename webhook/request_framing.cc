#include "webhook/request_framing.h"

#include <charconv>
#include <cstdint>

namespace gpuadmit::webhook {
namespace {

using Action = RequestFraming::Action;

std::string_view trim_spaces_and_tabs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

RequestFraming refuse(int status, std::string_view message) {
  RequestFraming r;
  r.action = Action::kRefuse;
  r.status = status;
  r.message = message;
  return r;
}

constexpr std::string_view kHeadersTooLarge = "request headers too large";

// Still in the headers: wait, unless what is here already breaks a limit.
RequestFraming wait_in_headers(std::string_view buffered, std::size_t line_start, bool first) {
  if (buffered.size() - line_start > kMaxLineBytes) {
    return first ? refuse(414, "request line too long") : refuse(431, kHeadersTooLarge);
  }
  if (buffered.size() > kMaxHeaderBytes) return refuse(431, kHeadersTooLarge);
  return {};
}

// What the header lines said that decides the framing.
struct HeaderFacts {
  std::size_t content_lengths = 0;  // Content-Length headers
  std::uint64_t content_length = 0;
  bool length_readable = true, chunked = false;
  std::size_t expect_at = std::string_view::npos;  // where "Expect: 100-continue" starts
};

// The framing of a request whose headers end at `header_size`, `buffered` bytes of it here.
RequestFraming framed(const HeaderFacts& facts, std::size_t header_size, std::size_t buffered,
                      std::size_t max_body) {
  // Refused by the pre-routing check without the body being read: no reason to wait for it.
  if (facts.chunked || facts.content_lengths > 1 || !facts.length_readable ||
      facts.content_length > max_body) {
    RequestFraming r;
    r.action = Action::kHandOver;
    return r;
  }
  RequestFraming r;
  if (facts.expect_at != std::string_view::npos) {
    r.action = Action::kContinue;
    r.expect_at = facts.expect_at;
    r.interim = facts.content_length > 0 && buffered == header_size;
    return r;
  }
  r.size = header_size + static_cast<std::size_t>(facts.content_length);
  r.header_size = header_size;
  if (buffered >= r.size) r.action = Action::kReady;  // else kWait: what the buffer needs
  return r;
}

}  // namespace

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

RequestFraming frame_request(std::string_view buffered, std::size_t max_body) {
  // cpp-httplib 0.11.4 (detail::read_headers): the request line is the first line; the header
  // block ends at the first later line that is exactly "\r\n"; lines not ending in "\r\n" are
  // skipped, not parsed.
  const std::size_t request_line_end = buffered.find('\n');
  if (request_line_end == std::string_view::npos) return wait_in_headers(buffered, 0, true);
  if (request_line_end + 1 > kMaxLineBytes) return refuse(414, "request line too long");
  std::size_t header_count = 0;
  HeaderFacts facts;
  std::size_t line_start = request_line_end + 1;
  while (true) {
    const std::size_t line_end = buffered.find('\n', line_start);
    if (line_end == std::string_view::npos) return wait_in_headers(buffered, line_start, false);
    std::string_view line = buffered.substr(line_start, line_end + 1 - line_start);
    const std::size_t this_line = line_start;
    line_start = line_end + 1;
    if (line == "\r\n") break;
    if (line.size() > kMaxLineBytes || line_start > kMaxHeaderBytes ||
        ++header_count > kMaxHeaderCount) {
      return refuse(431, kHeadersTooLarge);
    }
    if (line.size() < 2 || line[line.size() - 2] != '\r') continue;  // skipped by cpp-httplib
    line.remove_suffix(2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim_spaces_and_tabs(line.substr(colon + 1));
    if (equals_ignoring_case(name, "Transfer-Encoding")) facts.chunked = true;
    if (equals_ignoring_case(name, "Expect") && equals_ignoring_case(value, "100-continue")) {
      facts.expect_at = this_line;
    }
    if (equals_ignoring_case(name, "Content-Length")) {
      ++facts.content_lengths;
      // Digits only: cpp-httplib percent-decodes header values ("%31%30" would read as 10).
      // Too many digits for a number is left to the pre-routing check's 413.
      if (!all_digits(value)) return refuse(400, "Content-Length is not a number");
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), facts.content_length);
      facts.length_readable = ec == std::errc() && end == value.data() + value.size();
    }
  }
  return framed(facts, line_start, buffered.size(), max_body);
}

}  // namespace gpuadmit::webhook
