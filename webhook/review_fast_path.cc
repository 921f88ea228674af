#include "webhook/review_fast_path.h"

#include <cctype>
#include <cstdint>

namespace gpuadmit::webhook {
namespace {

constexpr std::size_t kMaxTarget = 2048;  // cpp-httplib refuses a request line over 8 KiB

// RFC 9110 §5.6.2 tchar, as a table: every header name of every review is checked.
struct TokenChars {
  bool has[256] = {};
  constexpr TokenChars() {
    for (int c = 'a'; c <= 'z'; ++c) has[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) has[c] = true;
    for (int c = '0'; c <= '9'; ++c) has[c] = true;
    for (const char c : std::string_view("!#$%&'*+-.^_`|~"))
      has[static_cast<unsigned char>(c)] = true;
  }
};
constexpr TokenChars kTokenChars;

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!kTokenChars.has[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

bool is_space_or_tab(char c) { return c == ' ' || c == '\t'; }

std::string_view status_message(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Internal Server Error";
  }
}

// Request line: what cpp-httplib's parse_request_line splits into exactly three parts, a POST to
// /mutate or /validate (review.endpoint). Where the line ends (its '\n'), or nothing for any
// other line.
std::optional<std::size_t> read_request_line(std::string_view buffered,
                                             const RequestFraming& framing, PlainReview& review) {
  constexpr std::string_view kPost = "POST ";
  constexpr std::string_view kVersion = " HTTP/1.1\r\n";
  if (!buffered.starts_with(kPost)) return std::nullopt;
  const std::size_t line_end = buffered.find('\n');
  if (line_end == std::string_view::npos || line_end + 1 < kPost.size() + kVersion.size() ||
      line_end + 1 > framing.header_size) {
    return std::nullopt;
  }
  const std::string_view line = buffered.substr(0, line_end + 1);
  if (!line.ends_with(kVersion)) return std::nullopt;
  const std::string_view target =
      line.substr(kPost.size(), line.size() - kPost.size() - kVersion.size());
  if (target.size() > kMaxTarget) return std::nullopt;
  for (const char c : target) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7F) return std::nullopt;
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/mutate") {
    review.endpoint = Endpoint::kMutate;
  } else if (path == "/validate") {
    review.endpoint = Endpoint::kValidate;
  } else {
    return std::nullopt;
  }
  return line_end;
}

// One "name: value\r\n" line into its name and value (without the spaces and tabs around it);
// false for a line the fast path leaves to cpp-httplib.
bool split_header(std::string_view header, std::string_view& name, std::string_view& value) {
  if (header.size() < 2 || header[header.size() - 2] != '\r') return false;
  header.remove_suffix(2);
  const std::size_t colon = header.find(':');
  if (colon == std::string_view::npos) return false;
  name = header.substr(0, colon);
  value = header.substr(colon + 1);
  while (!value.empty() && is_space_or_tab(value.front())) value.remove_prefix(1);
  while (!value.empty() && is_space_or_tab(value.back())) value.remove_suffix(1);
  if (!is_token(name) || value.empty() || value.find('%') != std::string_view::npos) return false;
  for (const char c : value) {
    if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7F) return false;
  }
  return true;
}

// The header lines into `review` (the first Content-Type and Connection); false unless there is
// exactly one Content-Length and a JSON Content-Type, and none that asks for more than a plain
// body (Transfer-Encoding, Content-Encoding, Expect, Range).
bool read_headers(std::string_view headers, PlainReview& review) {
  std::size_t lengths = 0;
  bool have_content_type = false, have_connection = false;
  for (std::size_t pos = 0; pos < headers.size();) {
    const std::size_t end = headers.find('\n', pos);
    if (end == std::string_view::npos) return false;
    std::string_view name, value;
    if (!split_header(headers.substr(pos, end + 1 - pos), name, value)) return false;
    pos = end + 1;
    if (equals_ignoring_case(name, "content-length")) {
      ++lengths;
    } else if (equals_ignoring_case(name, "content-type")) {
      if (!have_content_type) review.content_type = value;
      have_content_type = true;
    } else if (equals_ignoring_case(name, "connection")) {
      if (!have_connection) review.connection_close = value == "close";
      have_connection = true;
    } else if (equals_ignoring_case(name, "transfer-encoding") ||
               equals_ignoring_case(name, "content-encoding") ||
               equals_ignoring_case(name, "expect") || equals_ignoring_case(name, "range")) {
      return false;
    }
  }
  return lengths == 1 && is_json_content_type(review.content_type);
}

}  // namespace

std::optional<PlainReview> plain_review(std::string_view buffered, const RequestFraming& framing) {
  if (framing.action != RequestFraming::Action::kReady || framing.size > buffered.size() ||
      framing.header_size < 2 || framing.header_size > framing.size) {
    return std::nullopt;
  }
  PlainReview review;
  const std::optional<std::size_t> line_end = read_request_line(buffered, framing, review);
  if (!line_end) return std::nullopt;
  // The header lines the framing counted and measured: up to its final empty line.
  const std::string_view headers =
      buffered.substr(*line_end + 1, framing.header_size - 2 - (*line_end + 1));
  if (!read_headers(headers, review)) return std::nullopt;
  review.body = buffered.substr(framing.header_size, framing.size - framing.header_size);
  review.size = framing.size;
  return review;
}

bool is_json_content_type(std::string_view value) {
  // "application/json" with optional parameters ("; charset=utf-8"), case-insensitive.
  std::string_view type = value.substr(0, value.find(';'));
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.back()))) {
    type.remove_suffix(1);
  }
  return equals_ignoring_case(type, "application/json");
}

std::string response_head(int status, std::size_t length, bool close, long keep_alive_seconds,
                          std::size_t keep_alive_max_count) {
  std::string head;
  head.reserve(128);
  head += "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  head += status_message(status);
  head += "\r\n";
  if (close) head += "Connection: close\r\n";
  head += "Content-Length: ";
  head += std::to_string(length);
  head += "\r\nContent-Type: application/json\r\n";
  if (!close) {
    head += "Keep-Alive: timeout=";
    head += std::to_string(keep_alive_seconds);
    head += ", max=";
    head += std::to_string(keep_alive_max_count);
    head += "\r\n";
  }
  head += "\r\n";
  return head;
}

}  // namespace gpuadmit::webhook
