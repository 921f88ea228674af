#include "lint/fix_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "yaml/emitter.h"

namespace gpuadmit::lint {
namespace {

namespace fs = std::filesystem;

// The comment lines before the document's first content line (a Helm "# Source:" header).
std::string leading_comments(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t nl = text.find('\n', i);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(i, end - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      if (line[first] != '#') break;
      out.append(line);
      out += '\n';
    }
    if (nl == std::string_view::npos) break;
    i = nl + 1;
  }
  return out;
}

// The document as written, with LF line ends, without trailing blank lines, ending in '\n'.
std::string verbatim(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out += text[i];
  }
  size_t end = out.size();
  while (end > 0 && (out[end - 1] == '\n' || out[end - 1] == ' ' || out[end - 1] == '\t')) --end;
  out.resize(end);
  out += '\n';
  return out;
}

bool only_whitespace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

std::string mirror_path(const std::string& display) {
  if (display == "<stdin>" || display == "-") return "stdin.yaml";
  fs::path input = fs::path(display).lexically_normal();
  fs::path out;
  for (const fs::path& part : input.relative_path()) {
    if (part == "..") {
      out /= "__";
    } else if (part != ".") {
      out /= part;
    }
  }
  return out.empty() ? std::string("stdin.yaml") : out.string();
}

FixWriter::~FixWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void FixWriter::write_text(const std::string& text) {
  std::FILE* to = dir_.empty() ? out_ : file_;
  if (to != nullptr) std::fwrite(text.data(), 1, text.size(), to);
}

void FixWriter::begin_file(const std::string& file, bool /*json_file*/) {
  if (dir_.empty()) return;
  first_ = true;
  target_ = (fs::path(dir_) / mirror_path(file)).string();
  temporary_ = target_ + ".gpuadmit-tmp";
  std::error_code ec;
  fs::create_directories(fs::path(target_).parent_path(), ec);
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (file_ == nullptr) errors_.push_back(target_ + ": " + std::strerror(errno));
}

FixChunk FixWriter::render(const yaml::SourceDocument& source, const yaml::ParsedDocument& parsed,
                           const Json* replacement, bool json_file) const {
  FixChunk chunk;
  if (replacement != nullptr) {
    chunk.text = leading_comments(source.text);
    if (json_file && !dir_.empty() && parsed.format == yaml::DocumentFormat::kJson) {
      chunk.text += replacement->dump(2, ' ', false, Json::error_handler_t::replace);
      chunk.text += '\n';
    } else {
      yaml::emit_yaml(*replacement, chunk.text);
    }
  } else if (source.too_large) {
    chunk.text = "# gpuadmit: a document larger than 64 MiB was left out here\n";
  } else if (only_whitespace(source.text)) {
    chunk.skip = true;
  } else {
    chunk.text = verbatim(source.text);
    chunk.carries_marker = source.starts_with_marker;
  }
  return chunk;
}

void FixWriter::write(const FixChunk& chunk) {
  if (chunk.skip) return;
  if (!first_ && !chunk.carries_marker) write_text("---\n");
  first_ = false;
  write_text(chunk.text);
}

void FixWriter::end_file() {
  if (dir_.empty() || file_ == nullptr) return;
  const bool failed = std::ferror(file_) != 0;
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  if (failed) {
    errors_.push_back(target_ + ": write failed");
    fs::remove(temporary_, ec);
    return;
  }
  fs::rename(temporary_, target_, ec);
  if (ec) errors_.push_back(target_ + ": " + ec.message());
}

void FixWriter::discard_file() {
  if (dir_.empty() || file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  fs::remove(temporary_, ec);
  errors_.push_back(target_ + ": not written, reading the input failed");
}

}  // namespace gpuadmit::lint
