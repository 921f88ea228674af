// A mutator body per WRITE (0-4), compiled by check_contract.cmake: WRITE=0 writes only what the
// mutation contract allows (engine/pod_writer.h) and must compile; each other writes a member
// outside it and must not, which is what keeps the webhook's in-place patch complete.
#include "engine/mutator.h"

namespace gpuadmit {

class ContractProbe final : public Mutator {
 public:
  std::string_view name() const override { return "probe"; }
  MutationOutcome mutate(PodWriter& pod, PodContext& /*ctx*/) const override {
#if WRITE == 0
    for (const ContainerRef& ref : pod.containers()) {
      if (Json* env = pod.container(ref, ContainerMember::kEnv).array()) env->push_back(1);
    }
    const bool selector = pod.spec(SpecMember::kNodeSelector).set(Json::object());
    const bool annotation = pod.set_annotation("a", "b");
    return MutationOutcome::changed_if(selector || annotation);
#elif WRITE == 1
    pod.view().spec()["runtimeClassName"] = "nvidia";  // a spec member outside the contract
#elif WRITE == 2
    pod.view().container(pod.containers()[0])["image"] = "x";  // a container member outside it
#elif WRITE == 3
    pod.view().object()["metadata"]["labels"] = Json::object();  // the object's metadata
#elif WRITE == 4
    pod.spec("runtimeClassName").set("nvidia");  // a member named by string
#endif
    return MutationOutcome::applied();
  }
};

}  // namespace gpuadmit
