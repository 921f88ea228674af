#include "fleet/live_read.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "fleet/json_stream.h"
#include "yaml/reader.h"

namespace gpuadmit::fleet {
namespace {

// Lines of a stream or a text, each with its '\n'; one line at a time in memory (plus a chunk).
class LineSource {
 public:
  explicit LineSource(std::FILE* file) : file_(file) {}
  explicit LineSource(std::string_view text) : data_(text), eof_(true) {}

  bool next(std::string_view& line) {
    for (;;) {
      const size_t left = data_.size() - pos_;
      // An empty view may have no data at all: no arithmetic on its null pointer.
      const char* start = left == 0 ? nullptr : data_.data() + pos_;
      if (const void* nl = left == 0 ? nullptr : std::memchr(start, '\n', left)) {
        const size_t n = static_cast<size_t>(static_cast<const char*>(nl) - start) + 1;
        line = std::string_view(start, n);
        pos_ += n;
        return true;
      }
      if (!eof_ && fill()) continue;
      if (left == 0) return false;
      line = std::string_view(start, left);  // the last line, without '\n'
      pos_ = data_.size();
      return true;
    }
  }
  bool read_error() const { return read_error_; }
  int read_errno() const { return read_errno_; }
  size_t offset() const { return pos_; }  // text mode: the bytes read so far

 private:
  bool fill() {
    constexpr size_t kChunk = 1u << 20;
    buffer_.erase(0, pos_);
    pos_ = 0;
    const size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    const size_t got = std::fread(buffer_.data() + old, 1, kChunk, file_);
    buffer_.resize(old + got);
    if (got < kChunk) {
      eof_ = true;
      if (std::ferror(file_)) {
        read_error_ = true;
        read_errno_ = errno;
      }
    }
    data_ = buffer_;
    return got > 0;
  }

  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::string_view data_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool read_error_ = false;
  int read_errno_ = 0;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view trim_end(std::string_view s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// A document marker line: `---` or `...` alone or followed by a space (YAML 1.2 §9.1).
bool marker_line(std::string_view line) {
  if (!starts_with(line, "---") && !starts_with(line, "...")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\n' ||
         line[3] == '\r';
}

bool blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == '#') return true;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

size_t indent_of(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

// `items:` at column 0 (a comment may follow): the key of a List's items.
bool items_key(std::string_view line) {
  if (!starts_with(line, "items:")) return false;
  std::string_view rest = trim_end(line.substr(6));
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  return rest.empty() || rest.front() == '#';
}

// A document or List item to parse: its text, first line, and how far its lines were dedented.
using Unit = std::function<void(const std::string& text, int first_line, int dedent)>;

// Splits YAML into what lint's reader parses: documents, and a List's items one by one (an item
// `- ` at the items' indentation, its lines dedented by that indentation plus two). The List's
// other lines (apiVersion, kind: List, metadata) stay one document, which has no items then.
class YamlSplitter {
 public:
  explicit YamlSplitter(Unit unit) : unit_(std::move(unit)) {}

  void line(std::string_view text, int number) {
    if (marker_line(text)) {
      flush();
      document_ = std::string(text);
      document_line_ = number;
      return;
    }
    if (items_ && item_indent_ < 0) {  // the line after `items:` says whether it is a list
      if (blank_or_comment(text)) {
        pending_ += text;
        return;
      }
      const size_t indent = indent_of(text);
      if (item_start(text, indent)) {
        item_indent_ = static_cast<int>(indent);
      } else {
        items_ = false;  // not a block sequence: read with what follows, as one document
        document_ = pending_;
        document_line_ = pending_line_;
      }
    }
    if (items_) {
      if (item_line(text, number)) return;
      flush_item();
      items_ = false;
    } else if (items_key(text)) {
      // The List's own keys before and after its items are documents of their own (they hold
      // nothing the report reads), so that every line keeps its number.
      if (!document_.empty()) unit_(document_, document_line_, 0);
      document_.clear();
      items_ = true;
      item_indent_ = -1;
      pending_ = std::string(text);
      pending_line_ = number;
      return;
    }
    if (document_.empty()) document_line_ = number;
    document_ += text;
  }

  void finish() { flush(); }

 private:
  // A line of the items; false when it ends them (a key back at the List's own level).
  static bool item_start(std::string_view text, size_t indent) {
    return text.substr(indent, 2) == "- " || trim_end(text.substr(indent)) == "-";
  }
  bool item_line(std::string_view text, int number) {
    const size_t indent = static_cast<size_t>(item_indent_);
    const size_t i = indent_of(text);
    if (i == indent && item_start(text, i)) {
      flush_item();
      // "- key: value" → "key: value", each following line dedented as much.
      item_ = std::string(text.substr(std::min(i + 2, text.size())));
      if (item_.empty() || item_.back() != '\n') item_ += '\n';
      item_line_ = number;
      return true;
    }
    if (i >= indent + 2 && !item_.empty()) {
      item_.append(text.substr(indent + 2));
      return true;
    }
    if (blank_or_comment(text)) {
      if (!item_.empty()) item_ += '\n';  // keeps the item's line numbers
      return true;
    }
    return false;
  }
  void flush_item() {
    if (!item_.empty()) unit_(item_, item_line_, item_indent_ + 2);
    item_.clear();
  }
  void flush() {
    flush_item();
    items_ = false;
    if (!document_.empty()) unit_(document_, document_line_, 0);
    document_.clear();
  }

  Unit unit_;
  std::string document_;
  int document_line_ = 1;
  bool items_ = false;
  int item_indent_ = -1;
  std::string pending_;  // `items:` and the blank lines after it, until the next line says
  int pending_line_ = 0;
  std::string item_;
  int item_line_ = 0;
};

// One document or item through lint's reader (markers, the fast path and yaml-cpp), its lines
// counted from `first_line`, its columns `dedent` further right in the file.
void parse_unit(const std::string& text, int first_line, int dedent, const std::string& display,
                ObjectSink& collector, std::vector<InputError>& errors) {
  yaml::DocumentStream stream{std::string_view(text)};
  yaml::SourceDocument source;
  while (stream.next(source)) {
    source.first_line += first_line - 1;
    yaml::ParsedDocument doc = yaml::parse_document(source, false);
    if (doc.empty) continue;
    if (doc.error) {
      std::string message = "cannot read this document: " + doc.error->message;
      if (doc.error->column > 0) {
        message += " (column " + std::to_string(doc.error->column + dedent) + ")";
      }
      errors.push_back({display, doc.error->line, std::move(message)});
      continue;
    }
    collector.add(std::move(doc.value), display, doc.line);
  }
}

// Told how far a text has been read, so that a mapped file's pages behind it can be let go.
using Progress = std::function<void(size_t offset)>;

void read_yaml(LineSource& lines, int first_line, const std::string& display, ObjectSink& collector,
               std::vector<InputError>& errors, const Progress& progress = nullptr) {
  YamlSplitter splitter([&](const std::string& text, int line, int dedent) {
    parse_unit(text, line, dedent, display, collector, errors);
  });
  std::string_view line;
  int number = first_line;
  while (lines.next(line)) {
    splitter.line(line, number++);
    if (progress) progress(lines.offset());
  }
  splitter.finish();
  if (lines.read_error()) {
    errors.push_back({display, 0,
                      std::string("reading the input failed: ") +
                          std::strerror(lines.read_errno()) + "; check the file"});
  }
}

void read_json(JsonObjectStream& stream, const std::string& display, ObjectSink& collector,
               std::vector<InputError>& errors, const Progress& progress = nullptr) {
  if (collector.whole()) {
    stream.set_whole_items();
  } else {
    stream.set_interest([&collector](const Json& object) { return collector.wants(object); });
  }
  Json object;
  int line = 0;
  while (stream.next(object, line)) {
    collector.add(std::move(object), display, line);
    if (progress) progress(stream.offset());
  }
  if (stream.error()) {
    errors.push_back(
        {display, stream.error()->line, "cannot read the JSON: " + stream.error()->message});
  }
}

}  // namespace

namespace {

void read_text(std::string_view text, const std::string& display, ObjectSink& collector,
               std::vector<InputError>& errors, const Progress& progress) {
  size_t at = 0;
  int line = 1;
  while (at < text.size() &&
         (text[at] == ' ' || text[at] == '\t' || text[at] == '\r' || text[at] == '\n')) {
    line += text[at++] == '\n';
  }
  if (at < text.size() && (text[at] == '{' || text[at] == '[')) {
    JsonObjectStream stream(text.substr(at), line);
    read_json(stream, display, collector, errors,
              progress ? Progress([&](size_t offset) { progress(at + offset); }) : nullptr);
    return;
  }
  LineSource lines(text);
  read_yaml(lines, 1, display, collector, errors, progress);
}

}  // namespace

void read_export_text(std::string_view text, const std::string& display, ObjectSink& collector,
                      std::vector<InputError>& errors) {
  read_text(text, display, collector, errors, nullptr);
}

void read_export_stream(std::FILE* file, const std::string& display, ObjectSink& collector,
                        std::vector<InputError>& errors) {
  int line = 1;
  int c = 0;
  while ((c = std::getc(file)) != EOF && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
    line += c == '\n';
  }
  if (c == EOF) {
    if (std::ferror(file)) {
      errors.push_back(
          {display, 0,
           std::string("reading the input failed: ") + std::strerror(errno) + "; check the file"});
    }
    return;
  }
  std::ungetc(c, file);
  if (c == '{' || c == '[') {
    JsonObjectStream stream(file, line);
    read_json(stream, display, collector, errors);
    return;
  }
  LineSource lines(file);
  read_yaml(lines, line, display, collector, errors);
}

void read_export_file(const std::string& path, ObjectSink& collector,
                      std::vector<InputError>& errors) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errors.push_back(
        {path, 0,
         std::string("cannot open the file: ") + std::strerror(errno) + "; check the path"});
    return;
  }
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    const size_t size = static_cast<size_t>(info.st_size);
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped != MAP_FAILED) {
      ::madvise(mapped, size, MADV_SEQUENTIAL);
      ::close(fd);
      // Pages read are let go every 64 MB, so that a 2 GB export is never resident whole.
      char* base = static_cast<char*>(mapped);
      size_t released = 0;
      const auto release = [&](size_t offset) {
        constexpr size_t kStep = size_t{64} << 20;
        if (offset < released + kStep) return;
        const size_t upto = offset & ~(kStep - 1);
        ::madvise(base + released, upto - released, MADV_DONTNEED);
        released = upto;
      };
      read_text(std::string_view(base, size), path, collector, errors, release);
      ::munmap(mapped, size);
      return;
    }
  }
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    ::close(fd);
    errors.push_back({path, 0, std::string("cannot read the file: ") + std::strerror(errno)});
    return;
  }
  read_export_stream(file, path, collector, errors);
  std::fclose(file);
}

namespace {

// fleet --live's collector as a sink: only the members it reads, metadata only when wanted.
class LiveSink final : public ObjectSink {
 public:
  explicit LiveSink(LiveCollector& collector) : collector_(collector) {}
  void add(Json object, const std::string& file, int line) override {
    collector_.add(std::move(object), file, line);
  }
  bool wants(const Json& object) const override { return collector_.wants(object); }

 private:
  LiveCollector& collector_;
};

}  // namespace

void read_live_stream(std::FILE* file, const std::string& display, LiveCollector& collector,
                      std::vector<InputError>& errors) {
  LiveSink sink(collector);
  read_export_stream(file, display, sink, errors);
}

void read_live_text(std::string_view text, const std::string& display, LiveCollector& collector,
                    std::vector<InputError>& errors) {
  LiveSink sink(collector);
  read_export_text(text, display, sink, errors);
}

void read_live_file(const std::string& path, LiveCollector& collector,
                    std::vector<InputError>& errors) {
  LiveSink sink(collector);
  read_export_file(path, sink, errors);
}

}  // namespace gpuadmit::fleet
