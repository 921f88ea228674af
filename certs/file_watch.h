#pragma once
// Change detection by polling, for files mounted from a Secret or ConfigMap. Kubernetes updates
// those by writing a new timestamped directory and swapping the `..data` symlink, so inotify
// watches on the old inode go stale; stat() through the symlinks sees the new file's identity.
//
//   FileSignature before = file_signature(path);
//   ...
//   if (file_signature(path) != before) reload();

#include <cstdint>
#include <string>

namespace gpuadmit::certs {

// The identity and version of the file a path resolves to; all zero when it does not exist.
struct FileSignature {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool exists = false;
  bool operator==(const FileSignature&) const = default;
};

FileSignature file_signature(const std::string& path);

}  // namespace gpuadmit::certs
