#pragma once
// Reads a cluster export into a LiveCollector (`gpuadmit fleet --live PATH`, docs/fleet.md):
// JSON (kubectl -o json; one value or several in a row) item by item through JsonObjectStream;
// YAML (kubectl -o yaml; multi-document, Lists) with lint's reader, a List's `items:` split into
// one document per item first, so that neither form is held whole in memory. Which one is
// decided by the first byte that is not whitespace: `{` or `[` is JSON.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/live_collect.h"
#include "fleet/read.h"

namespace gpuadmit::fleet {

// What the export reader hands each object to: fleet --live's LiveCollector (only the members
// it reads, a Pod's metadata only when wants() accepts it) or `gpuadmit audit`'s collector
// (whole(): every object whole but for metadata.managedFields and status, as the engine
// judges it; YAML documents are read whole).
class ObjectSink {
 public:
  virtual ~ObjectSink() = default;
  virtual void add(Json object, const std::string& file, int line) = 0;
  virtual bool wants(const Json& /*object*/) const { return true; }
  virtual bool whole() const { return false; }
};

void read_export_stream(std::FILE* file, const std::string& display, ObjectSink& sink,
                        std::vector<InputError>& errors);
void read_export_text(std::string_view text, const std::string& display, ObjectSink& sink,
                      std::vector<InputError>& errors);
void read_export_file(const std::string& path, ObjectSink& sink, std::vector<InputError>& errors);

void read_live_stream(std::FILE* file, const std::string& display, LiveCollector& collector,
                      std::vector<InputError>& errors);
void read_live_text(std::string_view text, const std::string& display, LiveCollector& collector,
                    std::vector<InputError>& errors);
// A regular file is mapped into memory, anything else read as a stream.
void read_live_file(const std::string& path, LiveCollector& collector,
                    std::vector<InputError>& errors);

}  // namespace gpuadmit::fleet
