#pragma once
// The manifest inputs of `lint` and `fleet` (SPEC §8): files, folders (recursive *.yaml, *.yml,
// *.json) and `-` for standard input.
//
//   for (const InputEntry& e : expand_inputs(args.positional()))
//     e.stdin_ ? read(stdin) : e.error.empty() ? read(e.path) : report(e.path, e.error);

#include <string>
#include <vector>

namespace gpuadmit::cli {

// What is read under a folder: manifest files, and folders that could not be listed (with why).
struct FolderEntry {
  std::string path;
  std::string error;  // empty for a file
};

// The manifest files under a folder, sorted so that output is stable. Hidden entries (.git) are
// skipped; symlinked folders are not followed (no cycles); symlinked files are read, and a
// dangling link with a manifest name is listed so that it is reported, not silently skipped.
// FIFOs, sockets and devices are skipped (opening a FIFO would block). A folder that cannot be
// listed is an entry with its error: the run is incomplete.
std::vector<FolderEntry> files_under(const std::string& dir);

// One input in command-line order, folders expanded.
struct InputEntry {
  std::string path;   // the file (or folder, with an error); "-" for standard input
  std::string error;  // empty: read it; else why it cannot be read ("no such file or folder")
  bool is_stdin = false;
  bool missing = false;  // the named path does not exist (error says so)
};
std::vector<InputEntry> expand_inputs(const std::vector<std::string>& paths);

// True when more than one of `paths` is "-".
bool stdin_repeated(const std::vector<std::string>& paths);

}  // namespace gpuadmit::cli
