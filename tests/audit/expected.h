#pragma once
// The expected reports of tests/audit/data/export.yaml under tests/audit/data/policy.yaml,
// written by hand: each message is docs/rules.md's for its rule (GPU003, GPU005, GPU014 tables)
// with this export's values, each mutation name docs/mutations.md's (§2 class, §5 node-affinity,
// §9 gpu-visibility). Shared by the library's and the binary's tests.

#include <string>

namespace gpuadmit::audit::expected {

inline constexpr const char* kGpu005Train =
    "pod requests 4 GPUs (container trainer: 4), more than maxGPUsPerPod 2 of tenant ml; request "
    "at most 2 per pod, or split the work across pods";
inline constexpr const char* kGpu005Nightly =
    "pod requests 3 GPUs (container worker: 3), more than maxGPUsPerPod 2 of tenant ml; request "
    "at most 2 per pod, or split the work across pods";
inline constexpr const char* kGpu014Nightly =
    "pod requests 3 GPUs (container worker: 3): 3 on an 8-GPU node of class a100 strands 2; "
    "request 1, 2, 4 or 8 GPUs per pod";
inline constexpr const char* kGpu003Web =
    "namespace web belongs to no tenant of the policy; it may not use GPUs: ask the platform team "
    "for a tenant whose namespaces match it, or a catch-all tenant (namespaces: [\".*\"]) last in "
    "spec.tenants";

// The text report, each line prefixed with `file` (the name the export was read as).
inline std::string export_text(const std::string& file) {
  const std::string at = file + ":";
  return at + "8: deny GPU005 Deployment ml/train (+3 owned): " + kGpu005Train +
         " [spec.template.spec]\n" +  //
         at +
         "135: mutation Deployment ml/notebook (+2 owned): the mutating webhook would now change "
         "it: class, node-affinity (admitted before gpuadmit or before the policy changed)\n" +
         at + "148: deny GPU005 CronJob ml/nightly (+2 owned): " + kGpu005Nightly +
         " [spec.jobTemplate.spec.template.spec]\n" +  //
         at + "148: warn GPU014 CronJob ml/nightly (+2 owned): " + kGpu014Nightly +
         " [spec.jobTemplate.spec.template.spec]\n" +                              //
         at + "197: deny GPU005 Pod ml/orphan-1: " + kGpu005Train + " [spec]\n" +  //
         at +
         "213: mutation Deployment web/site: the mutating webhook would now change it: "
         "gpu-visibility (admitted before gpuadmit or before the policy changed)\n" +
         at + "221: deny GPU003 Pod web/render: " + kGpu003Web + " [spec]\n" +
         "4 deny, 1 warn, 0 errors in 7 objects (9 more reported at their owner); 2 would be "
         "changed by the webhook; 0 input errors\n";
}

}  // namespace gpuadmit::audit::expected
