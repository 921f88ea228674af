// MIG profile syntax and the per-product profile table (NVIDIA mig-parted defaults).

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "policies/mig_profiles.h"

namespace gpuadmit {
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
  for (const char* product : {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-A30",
                              "NVIDIA-H100-NVL", "NVIDIA-GH200-480GB", "NVIDIA-H200",
                              "NVIDIA-GH200-144G-HBM3e", "NVIDIA-B200", "NVIDIA-GB200"}) {
    auto profiles = mig_profiles_for_product(product);
    REQUIRE(profiles);
    CHECK(profiles->size() >= 5);
    for (std::string_view p : *profiles) {
      INFO(product << " " << p);
      CHECK(is_mig_profile_syntax(p));
    }
  }
}

}  // namespace
}  // namespace gpuadmit
