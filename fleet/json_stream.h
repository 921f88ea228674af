#pragma once
// Reads `kubectl get ... -o json` output object by object, for exports of a whole cluster (a
// 200,000-pod export is 1–2 GB): one JSON value or several in a row; an object with an "items"
// array (a v1 List, a PodList) hands over each item on its own, so memory holds one item, not
// the List. Each item is parsed selectively: only the members `gpuadmit fleet --live` reads
// become Json (through the engine's parse_json); the rest (managedFields, a Node's images, a
// Pod's volumes and container statuses) is scanned for its structure and dropped.
//
//   JsonObjectStream stream(file);                 // or JsonObjectStream(text)
//   Json object; int line;
//   while (stream.next(object, line)) collector.add(std::move(object), name, line);
//   if (stream.error()) ... stream.error()->line, ->message
//
// Members not read are checked for structure only (brackets, strings), not token by token.

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit::fleet {

namespace json_scan {  // fleet/json_stream.cc's scanner
enum class Scan : int;
struct Cursor;
}  // namespace json_scan

struct StreamError {
  int line = 0;  // 1-based; 0 when unknown
  std::string message;
};

class JsonObjectStream {
 public:
  // `first_line`: the line the input starts on (a reader that consumed leading blank lines).
  explicit JsonObjectStream(std::FILE* file, int first_line = 1);
  explicit JsonObjectStream(std::string_view text, int first_line = 1);
  ~JsonObjectStream();
  JsonObjectStream(const JsonObjectStream&) = delete;
  JsonObjectStream& operator=(const JsonObjectStream&) = delete;

  // The next object: an item of a List, or a top-level object that is not a List. False at the
  // end of the input or at the first error (then error() says what and where).
  bool next(Json& out, int& line);
  // Members only some items need (metadata, status.conditions) are then scanned first and read
  // only when `wanted` accepts the item as read without them: the report reads a Pod's
  // metadata only for GPU pods. Unset: every item is read whole (within the filter).
  void set_interest(std::function<bool(const Json&)> wanted) { interest_ = std::move(wanted); }
  // Every item read whole but for metadata.managedFields and status (`gpuadmit audit`: the
  // engine reads any member of a workload's metadata and spec), instead of fleet's selection.
  void set_whole_items() { whole_ = true; }
  const std::optional<StreamError>& error() const { return error_; }
  // Text mode: how many bytes of the text are read (nothing before it is looked at again).
  size_t offset() const { return pos_; }

  // The largest item the stream holds in memory at once: a larger one is an error.
  static constexpr size_t kMaxItemBytes = 256u << 20;

 private:
  enum class State { kTop, kTopMembers, kItems, kDone };
  bool fill();  // reads more of the file, keeping bytes from pos_; false at end of input
  bool fail(size_t at, std::string message);
  void open_value(char ch);                // at a top-level '{' or '['
  bool close_value(Json& out, int& line);  // at its closing bracket: true for a single object
  json_scan::Scan read_item(json_scan::Cursor& c, Json& out);
  json_scan::Scan read_head_member(json_scan::Cursor& c, bool& items);
  int line_of(size_t offset) const;  // the 1-based line of a buffer offset at or after pos_

  std::FILE* file_ = nullptr;
  std::string buffer_;  // file mode: the bytes read and not yet dropped
  std::string_view data_;
  bool eof_ = false;
  size_t pos_ = 0;    // cursor in data_: what is before it is read
  int64_t line_ = 1;  // pos_'s line
  State state_ = State::kTop;
  bool top_array_ = false;  // the items are a top-level array's elements, not a List's
  bool first_ = true;       // no member/element of the current object/array read yet
  bool saw_items_ = false;  // the current top-level object has an "items" array
  Json head_;               // the current top-level object's other members
  int head_line_ = 0;
  std::optional<StreamError> error_;
  std::function<bool(const Json&)> interest_;
  bool whole_ = false;
};

}  // namespace gpuadmit::fleet
