#pragma once
// Go's path/filepath.Clean on Linux (Separator '/'), for comparing paths the way NVIDIA's
// container toolkit compares them (engine/gpu_visibility.h). The Go documentation is the
// specification: the shortest path name equivalent to `path` by purely lexical processing,
// applying iteratively
//   1. multiple slashes become one;
//   2. each `.` element is eliminated;
//   3. each inner `..` element is eliminated with the non-`..` element before it;
//   4. `..` elements that begin a rooted path are eliminated ("/.." becomes "/");
// the result ends in a slash only when it is the root "/", and an empty result is ".".
// (Rob Pike, "Lexical File Names in Plan 9 or Getting Dot-Dot Right".) No symlink is read.
//
//   clean_path("//var/run/./nvidia-container-devices/0")  == "/var/run/nvidia-container-devices/0"
//   clean_path("/var/run/x/../nvidia-container-devices")  == "/var/run/nvidia-container-devices"
//   clean_path("a/../../b")                               == "../b"
//   clean_path("")                                        == "."

#include <string>
#include <string_view>

namespace gpuadmit {

std::string clean_path(std::string_view path);

}  // namespace gpuadmit
