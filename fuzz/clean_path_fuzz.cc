// engine/clean_path.h (Go's filepath.Clean) and GPU024's device-list test built on it. For any
// input:
//   - clean(clean(x)) == clean(x), and the result has Clean's shape: not empty, no empty or "."
//     element, no trailing slash but the root, ".." only at the front of an unrooted path,
//     rooted exactly when x is;
//   - it equals a reference that applies Go's documented rules literally, one rewrite at a time
//     until none applies (a different algorithm from the stack in clean_path.cc);
//   - the depth formula the native CEL uses (render/native_rules.cc device_list_mount: prefix
//     sums of +1 per name and -1 per "..", floored at the root; the element kept at level L is
//     the last name that took the depth to L) gives the same device-list answer as
//     names_devices_as_mount, for paths of up to 64 elements as there.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/clean_path.h"
#include "engine/gpu_visibility.h"
#include "fuzz/check.h"

namespace {

using gpuadmit::clean_path;

std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (true) {
    const size_t end = path.find('/', i);
    out.emplace_back(
        path.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    if (end == std::string_view::npos) return out;
    i = end + 1;
  }
}

// Go's rules, each applied once per pass until a pass changes nothing.
std::string reference_clean(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path.front() == '/';
  std::vector<std::string> e = split(path);
  for (bool changed = true; changed;) {
    changed = false;
    // Rules 1 and 2: an empty element (a doubled or trailing slash) or a "." element goes.
    for (size_t i = 0; i < e.size(); ++i) {
      if (e[i].empty() || e[i] == ".") {
        e.erase(e.begin() + static_cast<std::ptrdiff_t>(i));
        changed = true;
        break;
      }
    }
    if (changed) continue;
    // Rule 3: an inner ".." goes with the non-".." element before it.
    for (size_t i = 0; i + 1 < e.size(); ++i) {
      if (e[i] != ".." && e[i + 1] == "..") {
        e.erase(e.begin() + static_cast<std::ptrdiff_t>(i),
                e.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        changed = true;
        break;
      }
    }
    if (changed) continue;
    // Rule 4: "/.." at the beginning of a rooted path is "/".
    if (rooted && !e.empty() && e.front() == "..") {
      e.erase(e.begin());
      changed = true;
    }
  }
  std::string out = rooted ? "/" : "";
  for (size_t i = 0; i < e.size(); ++i) out += (i ? "/" : "") + e[i];
  return out.empty() ? "." : out;
}

void check_shape(std::string_view input, const std::string& c) {
  FUZZ_CHECK(!c.empty(), "never empty");
  FUZZ_CHECK((c.front() == '/') == (!input.empty() && input.front() == '/'), "rooted as the input");
  FUZZ_CHECK(c == "/" || c.back() != '/', "no trailing slash but the root");
  const std::vector<std::string> e = split(c == "/" ? "" : (c.front() == '/' ? c.substr(1) : c));
  bool names_seen = false;
  for (const std::string& x : e) {
    if (c == "/") break;
    FUZZ_CHECK(!x.empty(), "no empty element");
    FUZZ_CHECK(x != "." || c == ".", "no . element");
    if (x == "..") {
      FUZZ_CHECK(c.front() != '/' && !names_seen, ".. only at the front of an unrooted path");
    } else {
      names_seen = true;
    }
  }
}

// The native CEL's computation, on the elements of "/" + path without "" and ".".
bool cel_model_names_devices(std::string_view mount_path) {
  std::vector<std::string> ps;
  for (std::string& x : split("/" + std::string(mount_path)))
    if (!x.empty() && x != ".") ps.push_back(std::move(x));
  const bool has_dots = std::find(ps.begin(), ps.end(), "..") != ps.end();
  if (!has_dots) {
    std::string joined = "/";
    for (size_t i = 0; i < ps.size(); ++i) joined += (i ? "/" : "") + ps[i];
    return joined.starts_with(gpuadmit::kDeviceListMountRoot);
  }
  if (std::none_of(ps.begin(), ps.end(),
                   [](const std::string& x) { return x.starts_with("nvidia-container-devices"); }))
    return false;
  if (ps.size() > 64) return true;
  std::vector<long> t(ps.size()), d(ps.size());
  long sum = 0, low = 0;
  for (size_t k = 0; k < ps.size(); ++k) {
    sum += ps[k] == ".." ? -1 : 1;
    t[k] = sum;
    low = std::min(low, sum);
    d[k] = t[k] - low;
  }
  if (d.back() < 3) return false;
  auto kept = [&](long level) {
    size_t at = 0;
    for (size_t j = 0; j < ps.size(); ++j)
      if (ps[j] != ".." && d[j] == level) at = j;
    return ps[at];
  };
  return kept(1) == "var" && kept(2) == "run" && kept(3).starts_with("nvidia-container-devices");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string c = clean_path(input);
  FUZZ_CHECK(clean_path(c) == c, "clean(clean(x)) == clean(x)");
  check_shape(input, c);
  if (size <= 512)
    FUZZ_CHECK(reference_clean(input) == c, "agrees with the rules applied literally");
  const bool webhook = gpuadmit::names_devices_as_mount(input);
  FUZZ_CHECK(
      webhook == clean_path("/" + std::string(input)).starts_with(gpuadmit::kDeviceListMountRoot),
      "names_devices_as_mount is the toolkit's prefix test");
  std::vector<std::string> elements;
  for (std::string& x : split(input))
    if (!x.empty() && x != ".") elements.push_back(std::move(x));
  if (elements.size() <= 64) {
    FUZZ_CHECK(cel_model_names_devices(input) == webhook, "the native CEL's depth formula agrees");
  } else if (webhook) {
    FUZZ_CHECK(cel_model_names_devices(input), "past 64 elements the CEL is only stricter");
  }
  return 0;
}
