#include "fleet/read.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "yaml/reader.h"

namespace gpuadmit::fleet {
namespace {

void read_documents(yaml::DocumentStream& stream, const std::string& display, bool json_file,
                    Collector& collector, std::vector<InputError>& errors) {
  yaml::SourceDocument source;
  while (stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, json_file);
    if (doc.empty) continue;
    if (doc.error) {
      std::string message = "cannot read this document: " + doc.error->message;
      if (doc.error->column > 0) message += " (column " + std::to_string(doc.error->column) + ")";
      errors.push_back({display, doc.error->line, std::move(message)});
      continue;
    }
    collector.add(std::move(doc.value), display, doc.line);
  }
  if (stream.read_error()) {
    errors.push_back({display, 0,
                      std::string("reading the input failed: ") +
                          std::strerror(stream.read_errno()) + "; check the file"});
  }
}

bool json_name(const std::string& path) {
  return path.size() >= 5 && (path.compare(path.size() - 5, 5, ".json") == 0 ||
                              path.compare(path.size() - 5, 5, ".JSON") == 0);
}

}  // namespace

std::string InputError::to_string() const {
  return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
}

void read_stream(std::FILE* file, const std::string& display, bool json_file, Collector& collector,
                 std::vector<InputError>& errors) {
  yaml::DocumentStream stream(file);
  read_documents(stream, display, json_file, collector, errors);
}

void read_text(std::string_view text, const std::string& display, bool json_file,
               Collector& collector, std::vector<InputError>& errors) {
  collector.expect_bytes(text.size());
  yaml::DocumentStream stream(text);
  read_documents(stream, display, json_file, collector, errors);
}

void read_file(const std::string& path, Collector& collector, std::vector<InputError>& errors) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    errors.push_back(
        {path, 0,
         std::string("cannot open the file: ") + std::strerror(errno) + "; check the path"});
    return;
  }
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && info.st_size > 0) {
    collector.expect_bytes(static_cast<size_t>(info.st_size));
  }
  read_stream(file, path, json_name(path), collector, errors);
  std::fclose(file);
}

}  // namespace gpuadmit::fleet
