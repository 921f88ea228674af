#pragma once
// `lint --fix` output: every document of every input in input order; the ones the mutating
// webhook would patch re-emitted from the patched object (yaml/emitter.h), the others
// verbatim (comments kept, CR LF made LF). To a stream as one YAML stream, or with --write
// under a directory that mirrors the input paths (each file written to a temporary name and
// renamed, so that --write into the input folder never truncates a file being read).
//
//   FixWriter to_stdout(stdout);
//   FixWriter to_dir(FixWriter::Directory{"fixed"});  // fixed/deploy/train.yaml

#include <cstdio>
#include <string>
#include <vector>

#include "lint/linter.h"

namespace gpuadmit::lint {

// Where --write puts an input: "deploy/a.yaml" → "deploy/a.yaml"; "/abs/a.yaml" → "abs/a.yaml";
// "../a.yaml" → "__/a.yaml"; "<stdin>" → "stdin.yaml".
std::string mirror_path(const std::string& display);

class FixWriter final : public FixSink {
 public:
  struct Directory {
    std::string path;
  };
  explicit FixWriter(std::FILE* out) : out_(out) {}
  explicit FixWriter(Directory dir) : dir_(std::move(dir.path)) {}
  ~FixWriter() override;

  void begin_file(const std::string& file, bool json_file) override;
  FixChunk render(const yaml::SourceDocument& source, const yaml::ParsedDocument& parsed,
                  const Json* replacement, bool json_file) const override;
  void write(const FixChunk& chunk) override;
  void end_file() override;
  void discard_file() override;  // --write: the target is left as it was

  // Files that could not be written, each "<path>: <reason>".
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  void write_text(const std::string& text);

  std::FILE* out_ = nullptr;  // stream mode
  std::string dir_;           // --write mode
  std::FILE* file_ = nullptr;
  std::string target_, temporary_;
  bool first_ = true;  // no document written yet (to this stream or file)
  std::vector<std::string> errors_;
};

}  // namespace gpuadmit::lint
