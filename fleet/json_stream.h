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
#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit::fleet {

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
  const std::optional<StreamError>& error() const { return error_; }

  // The largest item the stream holds in memory at once: a larger one is an error.
  static constexpr size_t kMaxItemBytes = 256u << 20;

 private:
  enum class State { kTop, kTopMembers, kItems, kDone };
  bool fill();  // reads more of the file, keeping bytes from keep_; false at end of input
  bool fail(size_t at, std::string message);
  int line_at(size_t offset);  // the 1-based line of a buffer offset

  std::FILE* file_ = nullptr;
  std::string buffer_;  // file mode: the bytes read and not yet dropped
  std::string_view data_;
  bool eof_ = false;
  size_t pos_ = 0;            // cursor in data_
  size_t keep_ = 0;           // bytes before this may be dropped on the next fill()
  int64_t lines_before_ = 0;  // newlines dropped from the front of the buffer
  size_t counted_to_ = 0;     // line_at's progress: newlines in data_[0, counted_to_)
  int64_t counted_lines_ = 0;
  State state_ = State::kTop;
  bool top_array_ = false;  // the items are a top-level array's elements, not a List's
  bool first_ = true;       // no member/element of the current object/array read yet
  bool saw_items_ = false;  // the current top-level object has an "items" array
  Json head_;               // the current top-level object's other members
  int head_line_ = 0;
  std::optional<StreamError> error_;
};

}  // namespace gpuadmit::fleet
