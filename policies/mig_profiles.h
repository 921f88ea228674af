#pragma once
// Which MIG profiles each NVIDIA product can make, from NVIDIA's mig-parted defaults
// (NVIDIA/mig-parted examples/config.yaml "all-1g.10gb"... and the product tables of the
// MIG user guide), keyed by the GPU Feature Discovery `nvidia.com/gpu.product` value.

#include <optional>
#include <string_view>
#include <vector>

namespace gpuadmit {

// True when `profile` has the form <n>g.<m>gb, optionally followed by +me (SPEC §3).
bool is_mig_profile_syntax(std::string_view profile);

// The profiles a product can make, or nullopt when the product is unknown (then any
// syntactically valid profile is accepted). Matching ignores a "-MIG-..." suffix and the
// "-SHARED" suffix GFD adds for time-slicing.
std::optional<std::vector<std::string_view>> mig_profiles_for_product(std::string_view product);

// A MIG profile's compute slices and memory: "3g.40gb" → {3, 40}; nullopt when not a profile.
struct MigProfileShape {
  int compute = 0;
  int memory_gb = 0;
};
std::optional<MigProfileShape> parse_mig_profile(std::string_view profile);

// What one GPU of a product holds, for counting slices against it (`gpuadmit fleet`): 7 compute
// and 8 memory slices on A100/H100/H200/B200/B300, 4 and 4 on A30 and RTX PRO 6000.
struct MigGpuGeometry {
  int compute_slices = 0;
  int memory_slices = 0;
  int memory_gb = 0;  // of the whole-GPU profile (7g.80gb: 80); 0 when unknown
};
// The geometry of a GPU that can make `profiles` (mig_profiles_for_product's, or a class's own
// list when the product is unknown): the profile with the most compute is the whole GPU.
MigGpuGeometry mig_gpu_geometry(const std::vector<std::string_view>& profiles);

// The slices one instance of `profile` takes on such a GPU: 1g.10gb {1, 1}, 1g.20gb {1, 2},
// 3g.40gb {3, 4}, 7g.80gb {7, 8} on an 80 GB A100. A GPU holds a set of instances when both
// sums fit: 1g.10gb ×7, 2g.20gb ×3, 3g.40gb ×2, 1g.20gb ×4 (mig-parted's `all-*` counts).
struct MigSlice {
  int compute = 0;
  int memory = 0;
};
MigSlice mig_slice(std::string_view profile, const MigGpuGeometry& geometry);

}  // namespace gpuadmit
