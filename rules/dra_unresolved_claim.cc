#include "rules/dra_unresolved_claim.h"

#include "engine/dra.h"

namespace gpuadmit {
namespace {

// A pod's spec.resourceClaims entry that names a ResourceClaim or ResourceClaimTemplate that
// does not exist (lint: none among the manifests read; webhook lookup: the API's 404). The pod
// is not guessed at: its claim's GPUs are not counted, and it is still never taken for a
// non-GPU pod. A claim that could not be looked up (lookup off, API down) is not reported
// here: that is not the pod's fault (docs/dra.md).
class DraUnresolvedClaimRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU023"; }
  std::string_view name() const override { return "DraClaimResolves"; }
  std::string_view summary() const override {
    return "a pod's DRA claim must name a ResourceClaim or ResourceClaimTemplate that exists "
           "(lint: among the manifests read)";
  }
  Action default_action() const override { return Action::kWarn; }

  void check(const PodView&, const PodContext& ctx, std::vector<Violation>& out) const override {
    if (ctx.dra == nullptr || ctx.request == nullptr) return;
    for (const PodClaim& c : ctx.dra->claims) {
      if (c.status != ClaimLookup::kNotFound) continue;
      const bool tmpl = c.kind == ClaimKind::kTemplate;
      out.push_back(Violation{
          "claim " + c.name + " names " + (tmpl ? "ResourceClaimTemplate " : "ResourceClaim ") +
              c.reference + ", which was not found in namespace " + ctx.request->ns +
              (c.error.empty() ? "" : " (" + c.error + ")") +
              "; its GPUs are not counted: create it in the pod's namespace" +
              " (lint: pass its manifest too)",
          c.path + (tmpl ? ".resourceClaimTemplateName" : ".resourceClaimName")});
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_unresolved_claim_rule() {
  return std::make_unique<DraUnresolvedClaimRule>();
}

}  // namespace gpuadmit
