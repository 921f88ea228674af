// MIG profile syntax and the per-product profile table (NVIDIA mig-parted defaults).

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "policies/mig_profiles.h"

namespace gpuadmit {
namespace mig_profiles_test {
namespace {

TEST_CASE("policy: MIG profile syntax", "[policy][mig]") {
  struct Case {
    const char* profile;
    bool valid;
  };
  const Case cases[] = {
      {"1g.10gb", true},    {"3g.40gb", true},     {"7g.80gb", true},     {"1g.5gb", true},
      {"7g.141gb", true},   {"1g.10gb+me", true},  {"1g.24gb+gfx", true}, {"1g.24gb+me.all", true},
      {"1g.24gb-me", true}, {"", false},           {"1g", false},         {"1g.10", false},
      {"1g.10gb+", false},  {"1g.10gb+xx", false}, {"0g.10gb", false},    {"1g.0gb", false},
      {"01g.10gb", false},  {"1G.10GB", false},    {"g.10gb", false},     {"1g.gb", false},
      {"1g10gb", false},    {"1c.3g.40gb", false}, {"1g.10gb.me", false}, {" 1g.10gb", false},
      {"1g.10gb ", false},  {"99999g.1gb", false},
  };
  for (const Case& c : cases) {
    INFO(c.profile);
    CHECK(is_mig_profile_syntax(c.profile) == c.valid);
  }
}

bool can_make(std::string_view product, std::string_view profile) {
  auto profiles = mig_profiles_for_product(product);
  REQUIRE(profiles.has_value());
  return std::find(profiles->begin(), profiles->end(), profile) != profiles->end();
}

TEST_CASE("policy: MIG profiles per product", "[policy][mig]") {
  struct Case {
    const char* product;
    const char* profile;
    bool valid;
  };
  const Case cases[] = {
      {"NVIDIA-A100-SXM4-40GB", "1g.5gb", true},
      {"NVIDIA-A100-SXM4-40GB", "1g.5gb+me", true},
      {"NVIDIA-A100-SXM4-40GB", "7g.40gb", true},
      {"NVIDIA-A100-SXM4-40GB", "1g.10gb", true},
      {"NVIDIA-A100-SXM4-40GB", "3g.40gb", false},
      {"NVIDIA-A100-PCIE-40GB", "3g.20gb", true},
      {"NVIDIA-A100-SXM4-80GB", "1g.10gb", true},
      {"NVIDIA-A100-SXM4-80GB", "1g.20gb", true},
      {"NVIDIA-A100-SXM4-80GB", "7g.80gb", true},
      {"NVIDIA-A100-SXM4-80GB", "1g.5gb", false},
      {"NVIDIA-A100-80GB-PCIe", "3g.40gb", true},
      {"NVIDIA-A30", "1g.6gb", true},
      {"NVIDIA-A30", "2g.12gb+me", true},
      {"NVIDIA-A30", "4g.24gb", true},
      {"NVIDIA-A30", "7g.80gb", false},
      // mig-parted config-default.yaml: B300 (0x3182) and RTX PRO 6000 Blackwell (0x2BB5).
      {"NVIDIA-B300-SXM6-AC", "1g.34gb", true},
      {"NVIDIA-B300-SXM6-AC", "7g.269gb", true},
      {"NVIDIA-B300-SXM6-AC", "7g.278gb", false},  // GB300's
      {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "1g.24gb+gfx", true},
      {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "4g.96gb", true},
      {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "7g.96gb", false},
      {"NVIDIA-H100-80GB-HBM3", "1g.10gb+me", true},
      {"NVIDIA-H100-80GB-HBM3", "4g.40gb", true},
      {"NVIDIA-H100-PCIe", "2g.20gb", true},
      {"NVIDIA-H100-NVL", "3g.47gb", true},
      {"NVIDIA-H100-NVL", "7g.94gb", true},
      {"NVIDIA-H100-NVL", "3g.40gb", false},
      {"NVIDIA-GH200-480GB", "7g.96gb", true},
      {"NVIDIA-H20", "3g.48gb", true},
      {"NVIDIA-H200", "1g.18gb", true},
      {"NVIDIA-H200", "7g.141gb", true},
      {"NVIDIA-H200", "7g.80gb", false},
      {"NVIDIA-H200-NVL", "3g.71gb", true},
      {"NVIDIA-GH200-144G-HBM3e", "7g.144gb", true},
      {"NVIDIA-B200", "1g.23gb", true},
      {"NVIDIA-B200", "7g.180gb", true},
      {"NVIDIA-B200", "7g.186gb", false},
      // Pre-R510 drivers reported names without "NVIDIA "; case does not matter.
      {"A100-SXM4-40GB", "2g.10gb", true},
      {"nvidia-a100-sxm4-80gb", "2g.20gb", true},
      // GFD suffixes: "-MIG-<profile>" (single strategy) and "-SHARED" (time-slicing).
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "3g.20gb", true},
      {"NVIDIA-H100-80GB-HBM3-SHARED", "3g.40gb", true},
      {"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED", "7g.80gb", true},
  };
  for (const Case& c : cases) {
    INFO(c.product << " " << c.profile);
    CHECK(can_make(c.product, c.profile) == c.valid);
  }
}

TEST_CASE("policy: unknown products accept any profile", "[policy][mig]") {
  for (const char* product : {"NVIDIA-L4", "Tesla-T4", "NVIDIA-A100", "", "NVIDIA-", "-MIG-"}) {
    INFO(product);
    CHECK_FALSE(mig_profiles_for_product(product).has_value());
  }
}

TEST_CASE("policy: every table entry is valid profile syntax", "[policy][mig]") {
  for (const char* product :
       {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-A30", "NVIDIA-H100-NVL",
        "NVIDIA-GH200-480GB", "NVIDIA-H200", "NVIDIA-GH200-144G-HBM3e", "NVIDIA-B200",
        "NVIDIA-GB200", "NVIDIA-B300-SXM6-AC", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"}) {
    auto profiles = mig_profiles_for_product(product);
    REQUIRE(profiles);
    CHECK(profiles->size() >= 5);
    for (std::string_view p : *profiles) {
      INFO(product << " " << p);
      CHECK(is_mig_profile_syntax(p));
    }
  }
}

// What one GPU holds, for the fleet report: the whole-GPU profile's compute, 8 memory slices
// with 7 compute and 4 with 4; each instance's slices (mig-parted's `all-<profile>` counts:
// all-1g.10gb 7, all-1g.20gb 4, all-2g.20gb 3, all-3g.40gb 2; RTX PRO 6000 all-1g.24gb 4,
// all-2g.48gb 2; B300 all-1g.34gb 7, all-1g.67gb 4, all-2g.67gb 3, all-3g.135gb 2).
TEST_CASE("policy: MIG GPU geometry and instance slices", "[policy][mig]") {
  struct Case {
    const char* product;
    int compute, memory;
    const char* profile;
    int slice_compute, slice_memory;
  };
  const Case cases[] = {
      {"NVIDIA-A100-SXM4-80GB", 7, 8, "1g.10gb", 1, 1},
      {"NVIDIA-A100-SXM4-80GB", 7, 8, "1g.20gb", 1, 2},
      {"NVIDIA-A100-SXM4-80GB", 7, 8, "2g.20gb", 2, 2},
      {"NVIDIA-A100-SXM4-80GB", 7, 8, "3g.40gb", 3, 4},
      {"NVIDIA-A100-SXM4-80GB", 7, 8, "7g.80gb", 7, 8},
      {"NVIDIA-A30", 4, 4, "2g.12gb", 2, 2},
      {"NVIDIA-H100-NVL", 7, 8, "1g.12gb", 1, 1},
      {"NVIDIA-H100-NVL", 7, 8, "1g.24gb", 1, 2},
      {"NVIDIA-B300-SXM6-AC", 7, 8, "1g.34gb", 1, 1},
      {"NVIDIA-B300-SXM6-AC", 7, 8, "1g.67gb", 1, 2},
      {"NVIDIA-B300-SXM6-AC", 7, 8, "3g.135gb", 3, 4},
      {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", 4, 4, "1g.24gb+gfx", 1, 1},
      {"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", 4, 4, "2g.48gb", 2, 2},
  };
  for (const Case& c : cases) {
    INFO(c.product << " " << c.profile);
    const MigGpuGeometry g = mig_gpu_geometry(*mig_profiles_for_product(c.product));
    CHECK(g.compute_slices == c.compute);
    CHECK(g.memory_slices == c.memory);
    const MigSlice s = mig_slice(c.profile, g);
    CHECK(s.compute == c.slice_compute);
    CHECK(s.memory == c.slice_memory);
  }
}

}  // namespace
}  // namespace mig_profiles_test
}  // namespace gpuadmit
