#include "cli/input_paths.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace gpuadmit::cli {
namespace {

namespace fs = std::filesystem;

bool manifest_name(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace

std::vector<FolderEntry> files_under(const std::string& dir) {
  std::vector<FolderEntry> entries;
  std::vector<fs::path> pending{fs::path(dir)};
  while (!pending.empty()) {
    const fs::path folder = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(folder, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const fs::path& path = it->path();
      const std::string name = path.filename().string();
      if (!name.empty() && name[0] == '.') continue;
      // directory_entry's own queries read the type readdir gave: no stat per file, only for a
      // symlink (followed) or an entry readdir gave no type for.
      std::error_code status_ec;
      if (it->is_directory(status_ec)) {
        if (!it->is_symlink(status_ec)) pending.push_back(path);
        continue;
      }
      if (manifest_name(path) && (it->is_regular_file(status_ec) || !it->exists(status_ec))) {
        entries.push_back({path.string(), ""});
      }
    }
    if (ec) entries.push_back({folder.string(), ec.message()});
  }
  std::sort(entries.begin(), entries.end(),
            [](const FolderEntry& a, const FolderEntry& b) { return a.path < b.path; });
  return entries;
}

std::vector<InputEntry> expand_inputs(const std::vector<std::string>& paths) {
  std::vector<InputEntry> out;
  for (const std::string& path : paths) {
    if (path == "-") {
      out.push_back({path, "", true, false});
      continue;
    }
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      out.push_back({path, "no such file or folder", false, true});
      continue;
    }
    if (!fs::is_directory(status)) {
      out.push_back({path, "", false, false});
      continue;
    }
    for (FolderEntry& entry : files_under(path)) {
      const bool listed = entry.error.empty();
      out.push_back({std::move(entry.path), listed ? "" : "cannot read the folder: " + entry.error,
                     false, false});
    }
  }
  return out;
}

bool stdin_repeated(const std::vector<std::string>& paths) {
  return std::count(paths.begin(), paths.end(), std::string("-")) > 1;
}

}  // namespace gpuadmit::cli
