#include "engine/cuda.h"

#include <algorithm>
#include <array>

namespace gpuadmit {
namespace {

// NVIDIA CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding Driver Versions" (Table 3),
// column "Toolkit Driver Version, Linux x86_64":
// https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id5
// One row per release and update, oldest first; `patch` is the update's version (12.4 Update 1
// is 12.4.1). Rows that NVIDIA lists for one release with one driver are kept as listed.
struct ToolkitRow {
  int major;
  int minor;
  int patch;
  std::string_view driver;
};
constexpr std::array<ToolkitRow, 56> kToolkitDrivers = {{
    {10, 0, 130, "410.48"},    // CUDA 10.0.130
    {10, 1, 105, "418.39"},    // CUDA 10.1 (10.1.105 general release, and updates)
    {10, 2, 89, "440.33"},     // CUDA 10.2.89
    {11, 0, 1, "450.36.06"},   // CUDA 11.0.1 RC
    {11, 0, 2, "450.51.05"},   // CUDA 11.0.2 GA
    {11, 0, 3, "450.51.06"},   // CUDA 11.0.3 Update 1
    {11, 1, 0, "455.23"},      // CUDA 11.1 GA
    {11, 1, 1, "455.32"},      // CUDA 11.1.1 Update 1
    {11, 2, 0, "460.27.03"},   // CUDA 11.2.0 GA
    {11, 2, 1, "460.32.03"},   // CUDA 11.2.1 Update 1
    {11, 2, 2, "460.32.03"},   // CUDA 11.2.2 Update 2
    {11, 3, 0, "465.19.01"},   // CUDA 11.3.0 GA
    {11, 3, 1, "465.19.01"},   // CUDA 11.3.1 Update 1
    {11, 4, 0, "470.42.01"},   // CUDA 11.4.0 GA
    {11, 4, 1, "470.57.02"},   // CUDA 11.4 Update 1
    {11, 4, 2, "470.57.02"},   // CUDA 11.4 Update 2
    {11, 4, 3, "470.82.01"},   // CUDA 11.4 Update 3
    {11, 4, 4, "470.82.01"},   // CUDA 11.4 Update 4
    {11, 5, 0, "495.29.05"},   // CUDA 11.5 GA
    {11, 5, 1, "495.29.05"},   // CUDA 11.5 Update 1
    {11, 5, 2, "495.29.05"},   // CUDA 11.5 Update 2
    {11, 6, 0, "510.39.01"},   // CUDA 11.6 GA
    {11, 6, 1, "510.47.03"},   // CUDA 11.6 Update 1
    {11, 6, 2, "510.47.03"},   // CUDA 11.6 Update 2
    {11, 7, 0, "515.43.04"},   // CUDA 11.7 GA
    {11, 7, 1, "515.48.07"},   // CUDA 11.7 Update 1
    {11, 8, 0, "520.61.05"},   // CUDA 11.8 GA
    {12, 0, 0, "525.60.13"},   // CUDA 12.0 GA
    {12, 0, 1, "525.85.12"},   // CUDA 12.0 Update 1
    {12, 1, 0, "530.30.02"},   // CUDA 12.1 GA
    {12, 1, 1, "530.30.02"},   // CUDA 12.1 Update 1
    {12, 2, 0, "535.54.03"},   // CUDA 12.2 GA
    {12, 2, 1, "535.86.09"},   // CUDA 12.2 Update 1
    {12, 2, 2, "535.104.05"},  // CUDA 12.2 Update 2
    {12, 3, 0, "545.23.06"},   // CUDA 12.3 GA
    {12, 3, 1, "545.23.08"},   // CUDA 12.3 Update 1
    {12, 4, 0, "550.54.14"},   // CUDA 12.4 GA
    {12, 4, 1, "550.54.15"},   // CUDA 12.4 Update 1
    {12, 5, 0, "555.42.02"},   // CUDA 12.5 GA
    {12, 5, 1, "555.42.06"},   // CUDA 12.5 Update 1
    {12, 6, 0, "560.28.03"},   // CUDA 12.6 GA
    {12, 6, 1, "560.35.03"},   // CUDA 12.6 Update 1
    {12, 6, 2, "560.35.03"},   // CUDA 12.6 Update 2
    {12, 6, 3, "560.35.05"},   // CUDA 12.6 Update 3
    {12, 8, 0, "570.26"},      // CUDA 12.8 GA
    {12, 8, 1, "570.124.06"},  // CUDA 12.8 Update 1
    {12, 9, 0, "575.51.03"},   // CUDA 12.9 GA
    {12, 9, 1, "575.57.08"},   // CUDA 12.9 Update 1
    {13, 0, 0, "580.65.06"},   // CUDA 13.0 GA
    {13, 0, 1, "580.82.07"},   // CUDA 13.0 Update 1
    {13, 0, 2, "580.95.05"},   // CUDA 13.0 Update 2
    {13, 1, 0, "590.44.01"},   // CUDA 13.1 GA
    {13, 1, 1, "590.48.01"},   // CUDA 13.1 Update 1
    {13, 2, 0, "595.45.04"},   // CUDA 13.2 GA
    {13, 2, 1, "595.58.03"},   // CUDA 13.2 Update 1
    {13, 2, 2, "595.71.05"},   // CUDA 13.2 Update 2
}};

// NGC framework containers (PyTorch, TensorFlow, Triton Inference Server, NeMo, JAX, ...): each
// monthly release YY.MM is built on one CUDA release, the same for every framework of that
// release. Every row is the "Driver Requirements" sentence of that release's Triton Inference
// Server release notes, "Release YY.MM is based on CUDA X.Y.Z[.build]":
// https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-YY-MM.html
// (older pages also under .../deeplearning/sdk/inference-release-notes/rel-YY-MM.html), except:
//   23.01  TensorFlow release notes, .../frameworks/tensorflow-release-notes/rel-23-01.html
//   24.05  MXNet release notes, .../frameworks/mxnet-release-notes/rel-24-05.html ("NVIDIA CUDA
//          12.4.1"; Triton's page says "NVIDIA CUDA 12.4")
//   24.12  .../triton-inference-server/archives/triton-inference-server-2530/user-guide/docs/
//          introduction/release_notes.html
//   25.04  .../triton-inference-server/release-notes/Chunk786889861.html
// 24.04 ("NVIDIA CUDA 12.4") and 24.08 ("CUDA 12.6") name no update: their patch is unknown
// (kNoPatch), not guessed. Releases without such an NVIDIA statement (23.02, 24.09, 24.11, 25.05,
// 25.09, 25.11, 26.01, 26.03, 26.05, 26.07, 26.09) are absent: their images are unknown.
// Not every framework follows: MXNet 24.06 names CUDA 12.4.1
// (.../frameworks/mxnet-release-notes/rel-24-06.html), Triton 24.06 12.5.0.23.
struct NgcRow {
  std::string_view release;  // "24.05"
  int major;
  int minor;
  int patch;  // kNoPatch: the release notes name the minor only
};
constexpr int kNoPatch = -1;
constexpr std::array<NgcRow, 34> kNgcReleases = {{
    {"22.12", 11, 8, 0}, {"23.01", 12, 0, 1}, {"23.03", 12, 1, 0}, {"23.04", 12, 1, 0},
    {"23.05", 12, 1, 1}, {"23.06", 12, 1, 1}, {"23.07", 12, 1, 1}, {"23.08", 12, 2, 1},
    {"23.09", 12, 2, 1}, {"23.10", 12, 2, 2}, {"23.11", 12, 3, 0}, {"23.12", 12, 3, 2},
    {"24.01", 12, 3, 2}, {"24.02", 12, 3, 2}, {"24.03", 12, 4, 0}, {"24.04", 12, 4, kNoPatch},
    {"24.05", 12, 4, 1}, {"24.06", 12, 5, 0}, {"24.07", 12, 5, 1}, {"24.08", 12, 6, kNoPatch},
    {"24.10", 12, 6, 2}, {"24.12", 12, 6, 3}, {"25.01", 12, 8, 0}, {"25.02", 12, 8, 0},
    {"25.03", 12, 8, 1}, {"25.04", 12, 9, 0}, {"25.06", 12, 9, 1}, {"25.08", 13, 0, 0},
    {"25.10", 13, 0, 2}, {"26.02", 13, 1, 1}, {"26.04", 13, 2, 1}, {"26.06", 13, 3, 0},
    {"26.08", 13, 4, 1}, {"26.10", 13, 4, 3},
}};

// The NGC framework repositories whose tags are release numbers (nvcr.io/nvidia/<name>).
constexpr std::array<std::string_view, 9> kNgcFrameworks = {
    "pytorch", "tensorflow", "tritonserver",      "nemo", "jax",
    "paxml",   "mxnet",      "pytorch-geometric", "dgl"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A decimal of 1..4 digits (CUDA components, NGC numbers).
std::optional<int> small_number(std::string_view s) {
  if (s.empty() || s.size() > 4 || !std::all_of(s.begin(), s.end(), is_digit)) return std::nullopt;
  int n = 0;
  for (char c : s) n = n * 10 + (c - '0');
  return n;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

CudaVersion version_of(const ToolkitRow& r) { return CudaVersion{r.major, r.minor, r.patch}; }

// The repository (without tag or digest) and the tag ("" when none) of an image reference.
struct ImageRef {
  std::string_view repository;
  std::string_view tag;
};
ImageRef split_image(std::string_view image) {
  const size_t at = image.find('@');
  if (at != std::string_view::npos) image = image.substr(0, at);
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
    return {image, ""};
  }
  return {image.substr(0, colon), image.substr(colon + 1)};
}

// The leading version of a tag: "12.4.1-cudnn-runtime-ubuntu22.04" → 12.4.1; the version ends at
// '-' or the end.
std::optional<CudaVersion> leading_version(std::string_view tag) {
  const size_t dash = tag.find('-');
  return parse_cuda_version(tag.substr(0, dash));
}

// Tokens of a tag, split at '-' and '_' (cuda12.1 and cu121 are whole tokens in every convention
// this reads; '.' belongs to versions).
std::vector<std::string_view> tag_tokens(std::string_view tag) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= tag.size(); ++i) {
    if (i == tag.size() || tag[i] == '-' || tag[i] == '_') {
      if (i > start) out.push_back(tag.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

std::string CudaVersion::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor);
  if (patch) s += "." + std::to_string(*patch);
  return s;
}

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
  const std::vector<std::string_view> parts = split(text, '.');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  CudaVersion v;
  std::optional<int> n[3];
  for (size_t i = 0; i < parts.size(); ++i) {
    n[i] = small_number(parts[i]);
    if (!n[i]) return std::nullopt;
  }
  v.major = *n[0];
  v.minor = parts.size() > 1 ? *n[1] : 0;
  if (parts.size() > 2) v.patch = *n[2];
  return v;
}

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  const std::vector<std::string_view> parts = split(text, '.');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  DriverVersion d;
  d.text = std::string(text);
  for (std::string_view p : parts) {
    if (p.empty() || p.size() > 6 || !std::all_of(p.begin(), p.end(), is_digit)) {
      return std::nullopt;
    }
    int n = 0;
    for (char c : p) n = n * 10 + (c - '0');
    d.parts.push_back(n);
  }
  return d;
}

int compare_driver(const DriverVersion& a, const DriverVersion& b) {
  const size_t n = std::max(a.parts.size(), b.parts.size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.parts.size() ? a.parts[i] : 0;
    const int y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::optional<std::string_view> minimum_driver(const CudaVersion& cuda) {
  const ToolkitRow* best = nullptr;
  for (const ToolkitRow& r : kToolkitDrivers) {
    if (r.major != cuda.major || r.minor != cuda.minor) continue;
    if (best == nullptr || r.patch <= cuda.patch.value_or(0)) best = &r;
  }
  if (best == nullptr) return std::nullopt;
  return best->driver;
}

std::optional<CudaVersion> cuda_for_driver(const DriverVersion& driver) {
  std::optional<CudaVersion> best;
  for (const ToolkitRow& r : kToolkitDrivers) {
    const std::optional<DriverVersion> min = parse_driver_version(r.driver);
    if (!min || compare_driver(driver, *min) < 0) continue;
    CudaVersion v = version_of(r);
    v.patch.reset();
    if (!best || !v.runs_on(*best)) best = v;
  }
  return best;
}

std::optional<std::string_view> minor_version_compat_driver(int major) {
  // NVIDIA CUDA Compatibility guide, "Minor Version Compatibility", Table 2:
  // https://docs.nvidia.com/deploy/cuda-compatibility/index.html#minor-version-compatibility
  if (major == 12) return "525.60.13";
  if (major == 11) return "450.80.02";
  return std::nullopt;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point (the last '*'): linear in practice, never
  // exponential.
  size_t p = 0;
  size_t t = 0;
  size_t star = std::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<ImageCuda> image_cuda_version(std::string_view image) {
  const ImageRef ref = split_image(image);
  if (ref.tag.empty()) return std::nullopt;
  // NVIDIA's CUDA base images: Docker Hub nvidia/cuda and NGC nvcr.io/nvidia/cuda; the tag
  // begins with the CUDA version (https://hub.docker.com/r/nvidia/cuda, "Supported tags").
  for (std::string_view repo :
       {"nvidia/cuda", "docker.io/nvidia/cuda", "index.docker.io/nvidia/cuda",
        "registry-1.docker.io/nvidia/cuda", "nvcr.io/nvidia/cuda"}) {
    if (ref.repository != repo) continue;
    if (auto v = leading_version(ref.tag)) return ImageCuda{*v, CudaSource::kCudaImage};
    return std::nullopt;
  }
  // NGC framework images: nvcr.io/nvidia/<framework>:<YY.MM>-<variant>.
  constexpr std::string_view kNgc = "nvcr.io/nvidia/";
  if (ref.repository.starts_with(kNgc)) {
    const std::string_view name = ref.repository.substr(kNgc.size());
    if (std::find(kNgcFrameworks.begin(), kNgcFrameworks.end(), name) != kNgcFrameworks.end()) {
      const std::string_view release = ref.tag.substr(0, ref.tag.find('-'));
      for (const NgcRow& r : kNgcReleases) {
        if (r.release == release) {
          const std::optional<int> patch =
              r.patch == kNoPatch ? std::nullopt : std::optional<int>(r.patch);
          return ImageCuda{CudaVersion{r.major, r.minor, patch}, CudaSource::kNgcFramework};
        }
      }
      return std::nullopt;  // a release outside the table: unknown, not guessed
    }
  }
  for (std::string_view token : tag_tokens(ref.tag)) {
    // cuda12.1, cuda11.8.0: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime.
    if (token.starts_with("cuda") && token.size() > 4 && is_digit(token[4])) {
      if (auto v = parse_cuda_version(token.substr(4)); v && token.find('.') != std::string::npos) {
        return ImageCuda{*v, CudaSource::kCudaTag};
      }
    }
    // cu121 → 12.1, cu118 → 11.8: PyTorch's wheel index names (download.pytorch.org/whl/cu121);
    // three digits, the last the minor version. Two digits (cu92) and four are not read.
    if (token.size() == 5 && token.starts_with("cu") && is_digit(token[2]) && is_digit(token[3]) &&
        is_digit(token[4])) {
      return ImageCuda{CudaVersion{(token[2] - '0') * 10 + (token[3] - '0'), token[4] - '0', {}},
                       CudaSource::kCuTag};
    }
  }
  return std::nullopt;
}

namespace {

// One constraint of NVIDIA_REQUIRE_CUDA (factory.go parse): the property is what precedes the
// first of "<>=!", the operator the first of != <= >= = < > that prefixes the rest.
Tristate evaluate_constraint(std::string_view c, const DriverFacts& facts, bool& skipped) {
  skipped = false;
  const size_t end = c.find_first_of("<>=!");
  if (end == std::string_view::npos) return Tristate::kUnknown;  // the toolkit errors
  const std::string_view property = c.substr(0, end);
  std::string_view rest = c.substr(end);
  std::string_view op;
  for (std::string_view o : {"!=", "<=", ">=", "=", "<", ">"}) {
    if (rest.starts_with(o)) {
      op = o;
      break;
    }
  }
  const std::string_view value = rest.substr(op.size());
  int cmp = 0;
  if (property == "cuda") {
    const std::optional<CudaVersion> want = parse_cuda_version(value);
    if (!want || !facts.cuda) return Tristate::kUnknown;
    const CudaVersion& have = *facts.cuda;
    cmp = have.major != want->major     ? (have.major < want->major ? -1 : 1)
          : have.minor != want->minor   ? (have.minor < want->minor ? -1 : 1)
          : want->patch.value_or(0) > 0 ? -1
                                        : 0;
  } else if (property == "driver") {
    const std::optional<DriverVersion> want = parse_driver_version(value);
    if (!want || !facts.driver) return Tristate::kUnknown;
    cmp = compare_driver(*facts.driver, *want);
  } else if (property == "arch" || property == "brand") {
    return Tristate::kUnknown;  // the GPU's, read by the toolkit from NVML on the node
  } else {
    skipped = true;  // "Skipping unsupported constraint"
    return Tristate::kTrue;
  }
  bool holds = false;
  if (op == "!=")
    holds = cmp != 0;
  else if (op == "<=")
    holds = cmp <= 0;
  else if (op == ">=")
    holds = cmp >= 0;
  else if (op == "=")
    holds = cmp == 0;
  else if (op == "<")
    holds = cmp < 0;
  else if (op == ">")
    holds = cmp > 0;
  else
    return Tristate::kUnknown;  // no operator: the toolkit rejects the value
  return holds ? Tristate::kTrue : Tristate::kFalse;
}

}  // namespace

Tristate evaluate_require_cuda(std::string_view requirement, const DriverFacts& facts) {
  bool any_term = false;
  bool any_unknown = false;
  for (std::string_view term : split(requirement, ' ')) {
    Tristate term_value = Tristate::kTrue;
    bool any_factor = false;
    for (std::string_view factor : split(term, ',')) {
      if (factor.find_first_not_of(" \t") == std::string_view::npos) continue;
      bool skipped = false;
      const Tristate v = evaluate_constraint(factor, facts, skipped);
      if (skipped) continue;
      any_factor = true;
      if (v == Tristate::kFalse)
        term_value = Tristate::kFalse;
      else if (v == Tristate::kUnknown && term_value == Tristate::kTrue)
        term_value = v;
    }
    if (!any_factor) continue;  // a term of skipped constraints is dropped
    any_term = true;
    if (term_value == Tristate::kTrue) return Tristate::kTrue;
    if (term_value == Tristate::kUnknown) any_unknown = true;
  }
  if (!any_term) return Tristate::kTrue;  // OR of nothing: no constraint
  return any_unknown ? Tristate::kUnknown : Tristate::kFalse;
}

}  // namespace gpuadmit
