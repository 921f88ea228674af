#include "policies/mig_profiles.h"

#include <array>
#include <cctype>
#include <initializer_list>

namespace gpuadmit {

namespace {

// Reads one or more decimal digits without a leading zero; false when there are none.
bool consume_count(std::string_view& s) {
  if (s.empty() || s.front() < '1' || s.front() > '9') return false;
  size_t n = 0;
  while (n < s.size() && n < 4 && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) return false;  // absurd
  s.remove_prefix(n);
  return true;
}

bool consume(std::string_view& s, std::string_view literal) {
  if (s.substr(0, literal.size()) != literal) return false;
  s.remove_prefix(literal.size());
  return true;
}

// The profile lists of NVIDIA's MIG user guide ("Supported MIG Profiles"), cross-checked
// against the `all-<profile>` and `all-balanced` entries of NVIDIA/mig-parted
// examples/config.yaml and deployments/.../config-default.yaml (shared corpus:
// configs/mig-parted__config-default.yaml, mig-parted__dgx-station-80gb-config.yaml).
// "+me" profiles (one slice with the media engines) exist where mig-parted lists `all-*.me`.
constexpr std::array kA100_40gb = {std::string_view("1g.5gb"),  std::string_view("1g.5gb+me"),
                                   std::string_view("1g.10gb"), std::string_view("2g.10gb"),
                                   std::string_view("3g.20gb"), std::string_view("4g.20gb"),
                                   std::string_view("7g.40gb")};
// A100-80GB, A800-80GB, H100-80GB (SXM5 and PCIe), H800-80GB: the same geometry.
constexpr std::array k80gb = {std::string_view("1g.10gb"), std::string_view("1g.10gb+me"),
                              std::string_view("1g.20gb"), std::string_view("2g.20gb"),
                              std::string_view("3g.40gb"), std::string_view("4g.40gb"),
                              std::string_view("7g.80gb")};
constexpr std::array kA30 = {std::string_view("1g.6gb"), std::string_view("1g.6gb+me"),
                             std::string_view("2g.12gb"), std::string_view("2g.12gb+me"),
                             std::string_view("4g.24gb")};
// H100 NVL / H800 NVL (94 GB).
constexpr std::array kH100_94gb = {std::string_view("1g.12gb"), std::string_view("1g.12gb+me"),
                                   std::string_view("1g.24gb"), std::string_view("1g.24gb+me"),
                                   std::string_view("2g.24gb"), std::string_view("3g.47gb"),
                                   std::string_view("4g.47gb"), std::string_view("7g.94gb")};
// H100-96GB, GH200 480GB (96 GB HBM3), H20: mig-parted's "H100-96GB, PG506-96GB, GH200, H20".
constexpr std::array kH100_96gb = {std::string_view("1g.12gb"), std::string_view("1g.12gb+me"),
                                   std::string_view("1g.24gb"), std::string_view("1g.24gb+me"),
                                   std::string_view("2g.24gb"), std::string_view("3g.48gb"),
                                   std::string_view("4g.48gb"), std::string_view("7g.96gb")};
// H200 141 GB (SXM and NVL).
constexpr std::array kH200 = {std::string_view("1g.18gb"), std::string_view("1g.18gb+me"),
                              std::string_view("1g.35gb"), std::string_view("2g.35gb"),
                              std::string_view("3g.71gb"), std::string_view("4g.71gb"),
                              std::string_view("7g.141gb")};
// GH200 144G HBM3e.
constexpr std::array kGh200_144gb = {std::string_view("1g.18gb"), std::string_view("1g.18gb+me"),
                                     std::string_view("1g.36gb"), std::string_view("2g.36gb"),
                                     std::string_view("3g.72gb"), std::string_view("4g.72gb"),
                                     std::string_view("7g.144gb")};
// B200 (mig-parted device 0x2901).
constexpr std::array kB200 = {std::string_view("1g.23gb"), std::string_view("1g.23gb+me"),
                              std::string_view("1g.45gb"), std::string_view("2g.45gb"),
                              std::string_view("3g.90gb"), std::string_view("4g.90gb"),
                              std::string_view("7g.180gb")};
// GB200 (mig-parted device 0x2941, "GB200 HGX").
constexpr std::array kGb200 = {std::string_view("1g.23gb"), std::string_view("1g.23gb+me"),
                               std::string_view("1g.47gb"), std::string_view("2g.47gb"),
                               std::string_view("3g.93gb"), std::string_view("4g.93gb"),
                               std::string_view("7g.186gb")};

// B300 (mig-parted device 0x3182: `all-balanced` 1g.34gb ×2, 2g.67gb, 3g.135gb; `all-1g.34gb`,
// `all-1g.34gb.me`, `all-1g.67gb`, `all-2g.67gb`, `all-3g.135gb`, `all-4g.135gb`,
// `all-7g.269gb` in NVIDIA/mig-parted deployments/systemd/config-default.yaml, shared corpus
// configs/mig-parted__config-default.yaml).
constexpr std::array kB300 = {std::string_view("1g.34gb"),  std::string_view("1g.34gb+me"),
                              std::string_view("1g.67gb"),  std::string_view("2g.67gb"),
                              std::string_view("3g.135gb"), std::string_view("4g.135gb"),
                              std::string_view("7g.269gb")};
// RTX PRO 6000 Blackwell (device 0x2BB5; the same file's "# RTX PRO 6000 Blackwell" block:
// `all-1g.24gb.gfx`, `.me.all`, `-me`, `all-2g.48gb` and its variants, `all-4g.96gb(.gfx)`, and
// `all-balanced` 1g.24gb ×2, 2g.48gb). Four compute slices: 4g.96gb is the whole GPU.
constexpr std::array kRtxPro6000 = {
    std::string_view("1g.24gb"),     std::string_view("1g.24gb+me.all"),
    std::string_view("1g.24gb+gfx"), std::string_view("1g.24gb-me"),
    std::string_view("2g.48gb"),     std::string_view("2g.48gb+me.all"),
    std::string_view("2g.48gb+gfx"), std::string_view("2g.48gb-me"),
    std::string_view("4g.96gb"),     std::string_view("4g.96gb+gfx")};

struct Product {
  std::string_view name;  // the GFD label value without its "NVIDIA-" prefix
  const std::string_view* profiles;
  size_t count;
};

template <size_t N>
constexpr Product product(std::string_view name, const std::array<std::string_view, N>& p) {
  return Product{name, p.data(), N};
}

// `nvidia.com/gpu.product` is the NVML device name with spaces turned into '-' (GPU Feature
// Discovery / k8s-device-plugin internal/lm/resource.go), e.g. "NVIDIA A100 80GB PCIe" →
// "NVIDIA-A100-80GB-PCIe". Drivers before R510 reported names without the "NVIDIA " prefix,
// so the prefix is optional when matching.
constexpr std::array kProducts = {
    product("A100-SXM4-40GB", kA100_40gb),
    product("A100-PCIE-40GB", kA100_40gb),
    product("A100-SXM4-80GB", k80gb),
    product("A100-80GB-PCIe", k80gb),
    product("A100-SXM-80GB", k80gb),  // DGX Station A100 80GB
    product("A800-SXM4-80GB", k80gb),
    product("A800-80GB-PCIe", k80gb),
    product("H100-80GB-HBM3", k80gb),
    product("H100-PCIe", k80gb),
    product("H100-SXM5-80GB", k80gb),
    product("H800", k80gb),
    product("H800-PCIe", k80gb),
    product("A30", kA30),
    product("H100-NVL", kH100_94gb),
    product("H800-NVL", kH100_94gb),
    product("H100-96GB-HBM3", kH100_96gb),
    product("GH200-480GB", kH100_96gb),
    product("H20", kH100_96gb),
    product("H200", kH200),
    product("H200-NVL", kH200),
    product("GH200-144G-HBM3e", kGh200_144gb),
    product("B200", kB200),
    product("GB200", kGb200),
    product("B300-SXM6-AC", kB300),  // NVML "NVIDIA B300 SXM6 AC"
    product("B300", kB300),
    product("RTX-PRO-6000-Blackwell-Server-Edition", kRtxPro6000),
    product("RTX-PRO-6000-Blackwell-Workstation-Edition", kRtxPro6000),
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool iends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

}  // namespace

bool is_mig_profile_syntax(std::string_view profile) {
  std::string_view s = profile;
  if (!consume_count(s) || !consume(s, "g.") || !consume_count(s) || !consume(s, "gb")) {
    return false;
  }
  // "+me" (SPEC §3). mig-parted's config-default.yaml also names the RTX PRO 6000 Blackwell
  // profiles "+gfx", "+me.all" and "-me" (graphics / all media engines / no media engine).
  for (std::string_view suffix : {"", "+me", "+me.all", "+gfx", "-me"}) {
    if (s == suffix) return true;
  }
  return false;
}

std::optional<std::vector<std::string_view>> mig_profiles_for_product(std::string_view product) {
  // GFD labels MIG nodes "<product>-MIG-<profile>" (single strategy) and time-sliced nodes
  // "<product>-SHARED".
  if (iends_with(product, "-SHARED")) product.remove_suffix(7);
  for (size_t i = 0; i + 5 <= product.size(); ++i) {
    if (iequals(product.substr(i, 5), "-MIG-")) {
      product = product.substr(0, i);
      break;
    }
  }
  if (istarts_with(product, "NVIDIA-")) product.remove_prefix(7);
  for (const Product& p : kProducts) {
    if (iequals(p.name, product)) {
      return std::vector<std::string_view>(p.profiles, p.profiles + p.count);
    }
  }
  return std::nullopt;
}

std::optional<MigProfileShape> parse_mig_profile(std::string_view profile) {
  if (!is_mig_profile_syntax(profile)) return std::nullopt;
  MigProfileShape shape;
  size_t i = 0;
  while (std::isdigit(static_cast<unsigned char>(profile[i]))) {
    shape.compute = shape.compute * 10 + (profile[i++] - '0');
  }
  i += 2;  // "g."
  while (std::isdigit(static_cast<unsigned char>(profile[i]))) {
    shape.memory_gb = shape.memory_gb * 10 + (profile[i++] - '0');
  }
  return shape;
}

MigGpuGeometry mig_gpu_geometry(const std::vector<std::string_view>& profiles) {
  // The whole-GPU profile is the one with the most compute (7g on A100/H100/H200/B200/B300,
  // 4g on A30 and RTX PRO 6000); it holds all the memory. A GPU has 8 memory slices with 7
  // compute slices and as many memory slices as compute slices with 4 (MIG user guide,
  // "Supported MIG Profiles": A30 and RTX PRO 6000 4 + 4, the others 7 + 8).
  MigGpuGeometry geometry;
  for (std::string_view p : profiles) {
    auto shape = parse_mig_profile(p);
    if (shape && shape->compute > geometry.compute_slices) {
      geometry.compute_slices = shape->compute;
      geometry.memory_gb = shape->memory_gb;
    }
  }
  if (geometry.compute_slices == 0) geometry.compute_slices = 7;
  geometry.memory_slices = geometry.compute_slices == 7 ? 8 : geometry.compute_slices;
  return geometry;
}

MigSlice mig_slice(std::string_view profile, const MigGpuGeometry& geometry) {
  MigSlice slice;
  const auto shape = parse_mig_profile(profile);
  if (!shape) return slice;
  slice.compute = shape->compute;
  // Memory slices: the profile's share of the GPU's memory, rounded (1g.12gb of 94 GB is one
  // of 8 slices, 1g.24gb two). Without a known whole-GPU size, one memory slice per compute.
  slice.memory =
      geometry.memory_gb > 0
          ? static_cast<int>((shape->memory_gb * geometry.memory_slices * 2 + geometry.memory_gb) /
                             (2 * geometry.memory_gb))
          : shape->compute;
  if (slice.memory < 1) slice.memory = 1;
  return slice;
}

}  // namespace gpuadmit
