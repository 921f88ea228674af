#pragma once
// Lists a whole collection from the Kubernetes API page by page, as kubectl and client-go's
// pager do (`?limit=N`, then `&continue=<metadata.continue>` until it is empty), so that no
// response holds the whole cluster: a page is handed to the caller and dropped.
//
//   ListResult r = list_all(api, token, "/api/v1/pods", {.field_selector = "status.phase!=Failed"},
//                           [&](const std::string& page) { read(page); return true; });
//   if (!r.ok()) r.error   // one line: unreachable, 401, 403 with the API's message, ...
//
// A continue token that expired while paging (410 Gone, "the provided continue parameter is
// too old") restarts the list once from the first page, as client-go's pager falls back to a
// fresh list; the caller sees some objects twice and must keep the later copy.

#include <cstdint>
#include <functional>
#include <string>

#include "kube/api_client.h"

namespace gpuadmit::kube {

struct ListOptions {
  std::string field_selector;       // as the API takes it ("status.phase!=Succeeded"), unencoded
  std::string label_selector = "";  // as the API takes it ("app=x,tier=y"), unencoded
  int64_t limit = 500;              // kubectl's default --chunk-size
};

struct ListResult {
  int status = 200;   // the failing answer's HTTP status; 0 when none arrived
  std::string error;  // empty on success
  int64_t pages = 0;
  bool ok() const { return error.empty(); }
};

// `page` receives each page's body (a List as JSON) and returns false to stop (the caller's own
// error). `path` is the collection ("/api/v1/nodes"), with any server path prefix.
ListResult list_all(const ApiClient& api, const std::string& token, const std::string& path,
                    const ListOptions& options,
                    const std::function<bool(const std::string& page)>& page);

// RFC 3986 percent-encoding of a query parameter value (unreserved bytes kept).
std::string query_escape(std::string_view value);

}  // namespace gpuadmit::kube
