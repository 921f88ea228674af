#include "kube/list.h"

#include "engine/json.h"
#include "engine/json_parse.h"

namespace gpuadmit::kube {
namespace {

// The list's metadata.continue. The API server writes a list's metadata before its items (Go's
// field order: kind, apiVersion, metadata, items), so the text before `,"items":` is read alone
// when it parses; otherwise the whole page.
std::optional<std::string> continue_token(const std::string& body) {
  const size_t items = body.find(",\"items\":");
  Json head;
  if (items == std::string::npos || !parse_json(body.substr(0, items) + "}", head)) {
    if (!parse_json(body, head)) return std::nullopt;
  }
  if (!head.is_object()) return std::nullopt;
  const Json* metadata = find_member(head, "metadata");
  return std::string(metadata != nullptr ? string_member(*metadata, "continue") : "");
}

// "403 (Forbidden): pods is forbidden: User ... cannot list resource ..." from a metav1.Status.
std::string answer_text(const ApiResponse& r) {
  std::string text = std::to_string(r.status);
  Json status;
  if (parse_json(r.body, status) && string_member(status, "kind") == "Status") {
    if (auto reason = string_member(status, "reason"); !reason.empty())
      text += " (" + std::string(reason) + ")";
    if (auto message = string_member(status, "message"); !message.empty())
      text += ": " + std::string(message);
  }
  return text;
}

}  // namespace

std::string query_escape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

ListResult list_all(const ApiClient& api, const std::string& token, const std::string& path,
                    const ListOptions& options,
                    const std::function<bool(const std::string& page)>& page) {
  ListResult result;
  std::string next;
  bool restarted = false;
  for (;;) {
    std::string query = "?limit=" + std::to_string(options.limit);
    if (!options.field_selector.empty())
      query += "&fieldSelector=" + query_escape(options.field_selector);
    if (!options.label_selector.empty())
      query += "&labelSelector=" + query_escape(options.label_selector);
    if (!next.empty()) query += "&continue=" + query_escape(next);
    const ApiResponse r = api.get(path + query, token);
    result.status = r.status;
    if (r.status == 0) {
      result.error = "no answer from the API server at " + api.endpoint().host + ":" +
                     std::to_string(api.endpoint().port) + ": " + r.error;
      return result;
    }
    if (r.status == 410 && !next.empty() && !restarted) {  // the continue token expired
      restarted = true;
      next.clear();
      continue;
    }
    if (r.status != 200) {
      result.error = "GET " + path + ": the API server answered " + answer_text(r);
      return result;
    }
    const std::optional<std::string> token_next = continue_token(r.body);
    if (!token_next) {
      result.error = "GET " + path + ": the answer is not a JSON list";
      return result;
    }
    ++result.pages;
    if (!page(r.body)) return result;
    if (token_next->empty()) return result;
    next = *token_next;
  }
}

}  // namespace gpuadmit::kube
