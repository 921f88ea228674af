#include "rules/cuda_compatibility.h"

#include "engine/cuda.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// The user's statement of the CUDA version every GPU container of the pod is built for (SPEC §2
// setting: pod annotation, then label, then the object's). It can only add a finding: where the
// image's name says a version, the higher of the two is judged (docs/security.md, "Who writes
// what gpuadmit reads").
constexpr std::string_view kCudaVersionKey = "gpuadmit.io/cuda-version";
constexpr std::string_view kRequireCudaEnv = "NVIDIA_REQUIRE_CUDA";
constexpr std::string_view kDisableRequireEnv = "NVIDIA_DISABLE_REQUIRE";

// What the class's nodes run, as engine/cuda.h evaluates requirements against.
struct ClassFacts {
  DriverFacts facts;
  std::string driver;  // "class a100's driver 535.104.05", "class h100's driver"
  std::string runs;    // "class a100's driver 535.104.05 runs up to CUDA 12.2"
};

std::optional<ClassFacts> class_facts(const GpuClass& c) {
  if (!c.driver) return std::nullopt;
  ClassFacts out;
  if (!c.driver->version.empty()) {
    out.facts.driver = parse_driver_version(c.driver->version);
    if (out.facts.driver) out.facts.cuda = cuda_for_driver(*out.facts.driver);
  } else {
    out.facts.cuda = parse_cuda_version(c.driver->cuda);
  }
  if (!out.facts.cuda) return std::nullopt;
  out.driver =
      "class " + c.name + "'s driver" + (c.driver->version.empty() ? "" : " " + c.driver->version);
  out.runs = out.driver + " runs up to CUDA " + out.facts.cuda->to_string();
  return out;
}

// The value of a container's env entry `name` when it is a literal (the last entry of that name
// wins, as kubelet builds the environment in order), with its index; nullopt when absent or
// from valueFrom (unknown at admission).
struct EnvValue {
  std::string value;
  size_t index = 0;
};
std::optional<EnvValue> env_literal(const Json& container, std::string_view name) {
  const Json* env = find_member(container, "env");
  if (env == nullptr || !env->is_array()) return std::nullopt;
  std::optional<EnvValue> out;
  for (size_t i = 0; i < env->size(); ++i) {
    const Json& e = (*env)[i];
    if (!e.is_object() || string_member(e, "name") != name) continue;
    const Json* v = find_member(e, "value");
    if (v != nullptr && v->is_string()) {
      out = EnvValue{v->get_ref<const std::string&>(), i};
    } else {
      out.reset();  // valueFrom, or no value: not known here
    }
  }
  return out;
}

// Go's strconv.ParseBool true spellings (the toolkit's HasDisableRequire).
bool parse_bool_true(std::string_view s) {
  return s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True";
}

// What a container's CUDA version was read from, for the message.
struct Stated {
  CudaVersion version;
  std::string subject;  // "image nvcr.io/nvidia/pytorch:24.05-py3"
  std::string path;
};

// NVIDIA's toolkit refuses a container whose image needs a newer CUDA than the driver reports
// (NVIDIA_REQUIRE_CUDA=cuda>=<major>.<minor>, set by nvidia/cuda and every NGC image built on it:
// "requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer
// version"); an image without it fails at its first CUDA call unless CUDA minor-version
// compatibility covers it, which no admission can see (NVIDIA CUDA Compatibility guide: no PTX
// JIT, no API newer than the driver). GPU027 treats a CUDA version as satisfied only when the
// driver's own CUDA version is at least its major.minor (docs/rules.md#gpu027).
class CudaCompatibilityRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU027"; }
  std::string_view name() const override { return "CudaDriverCompatibility"; }
  std::string_view summary() const override {
    return "a GPU container's CUDA version runs on its class's driver";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.gpu_class == nullptr) return;
    const std::optional<ClassFacts> facts = class_facts(*ctx.gpu_class);
    if (!facts) return;
    const std::optional<std::string> setting = pod.setting(kCudaVersionKey);
    const std::optional<CudaVersion> stated = setting ? parse_cuda_version(*setting) : std::nullopt;
    const GpuResources gpu(pod, ctx);
    const std::vector<ContainerRef>& containers = pod.containers();
    for (size_t i = 0; i < containers.size(); ++i) {
      const ContainerRef& ref = containers[i];
      if (!in_scope(ctx.request, ref) || !gets_gpus(ctx, *gpu, i)) continue;
      const Json& container = pod.container(ref);
      std::optional<Stated> need = image_need(ctx, container, ref);
      if (stated && (!need || older(need->version, *stated))) {
        need = Stated{*stated, std::string(kCudaVersionKey), setting_path(pod, kCudaVersionKey)};
      }
      if (need && !need->version.runs_on(*facts->facts.cuda)) {
        out.push_back(Violation{image_message(ref, *need, *facts), need->path});
      }
      check_require_cuda(container, ref, *facts, out);
    }
  }

 private:
  static bool older(const CudaVersion& a, const CudaVersion& b) {
    if (a.major != b.major) return a.major < b.major;
    if (a.minor != b.minor) return a.minor < b.minor;
    return a.patch.value_or(0) < b.patch.value_or(0);
  }

  static bool gets_gpus(const PodContext& ctx, const PodGpuResources& gpu, size_t i) {
    for (const ContainerGpuResource& r : gpu.of(i)) {
      if (is_positive(r.effective_quantity())) return true;
    }
    return claim_units(ctx, i) > 0;
  }

  // The image's CUDA version: the policy's cudaImages (first match), else its name.
  static std::optional<Stated> image_need(const PodContext& ctx, const Json& container,
                                          const ContainerRef& ref) {
    const std::string_view image = string_member(container, "image");
    if (image.empty()) return std::nullopt;
    const std::string subject = "image " + std::string(image);
    const std::string path = ref.path + ".image";
    const std::vector<CudaImagePattern>& patterns = ctx.policy->policy().cuda_images;
    for (size_t k = 0; k < patterns.size(); ++k) {
      if (!glob_match(patterns[k].pattern, image)) continue;
      if (auto v = parse_cuda_version(patterns[k].cuda)) {
        return Stated{*v, subject + " (spec.cudaImages[" + std::to_string(k) + "])", path};
      }
    }
    if (auto v = image_cuda_version(image)) return Stated{v->version, subject, path};
    return std::nullopt;
  }

  static std::string image_message(const ContainerRef& ref, const Stated& need,
                                   const ClassFacts& facts) {
    const std::optional<std::string_view> min = minimum_driver(need.version);
    const CudaVersion major_minor{need.version.major, need.version.minor, {}};
    return container_label(ref) + ": " + need.subject + " needs CUDA " + need.version.to_string() +
           (min ? " (driver >= " + std::string(*min) + ")" : "") + "; " + facts.runs +
           "; use an image built for CUDA " + facts.facts.cuda->to_string() +
           " or earlier, or a class whose driver runs CUDA " + major_minor.to_string();
  }

  // NVIDIA_REQUIRE_CUDA written in the pod's env replaces the image's (the toolkit reads the
  // container's final environment); NVIDIA_DISABLE_REQUIRE=true there turns the check off.
  static void check_require_cuda(const Json& container, const ContainerRef& ref,
                                 const ClassFacts& facts, std::vector<Violation>& out) {
    const std::optional<EnvValue> require = env_literal(container, kRequireCudaEnv);
    if (!require) return;
    if (const auto disable = env_literal(container, kDisableRequireEnv);
        disable && parse_bool_true(disable->value)) {
      return;
    }
    if (evaluate_require_cuda(require->value, facts.facts) != Tristate::kFalse) return;
    out.push_back(Violation{
        container_label(ref) + ": env " + std::string(kRequireCudaEnv) + " " +
            json_text(Json(require->value)) + " is not met by " + facts.driver + " (CUDA " +
            facts.facts.cuda->to_string() + ")" +
            ": NVIDIA's container toolkit refuses to start the container (\"unsatisfied "
            "condition\"); use an image built for CUDA " +
            facts.facts.cuda->to_string() + " or earlier, or a class whose driver meets it",
        ref.path + ".env[" + std::to_string(require->index) + "]"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_cuda_compatibility_rule() {
  return std::make_unique<CudaCompatibilityRule>();
}

}  // namespace gpuadmit
