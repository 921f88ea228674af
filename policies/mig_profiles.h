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

}  // namespace gpuadmit
