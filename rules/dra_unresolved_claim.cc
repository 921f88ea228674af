#include "rules/dra_unresolved_claim.h"

#include "engine/dra.h"

namespace gpuadmit {
namespace {

// A Pod naming a DRA claim whose content gpuadmit does not know: the ResourceClaim or template
// was not found (lint: none among the manifests read; the API lookup: a 404), or could not be
// read (the lookup off, the API server down, slow or refusing, the review's lookup deadline
// passed). Such a claim would count 0 GPUs against maxGPUsPerPod, maxGPUsPerContainer, GPU006
// and the quota: a tenant could name claims it creates only after the Pod (each claim alone
// within GPU019), or enough names to run the lookups past their deadline, and take GPUs past
// every limit (issue 34). So the Pod is denied — fail closed — and never counted as 0.
// Only Pods are judged: a workload's pod template takes no GPUs; its Pods are judged at their
// CREATE, when the controller makes them and retries a denied one. Denying the template for a
// ResourceClaimTemplate not created yet would refuse `helm install` of a chart whose Deployment
// comes first (Helm creates kinds it does not know, ResourceClaimTemplate among them, last).
class DraUnresolvedClaimRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU023"; }
  std::string_view name() const override { return "DraClaimResolves"; }
  std::string_view summary() const override {
    return "a Pod's DRA claims must be known to gpuadmit (found through the API lookup, or lint: "
           "among the manifests read), so that their GPUs are counted";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (ctx.dra == nullptr || ctx.request == nullptr || pod.is_template()) return;
    for (const PodClaim& c : ctx.dra->claims) {
      if (c.status == ClaimLookup::kFound) continue;
      const bool tmpl = c.kind == ClaimKind::kTemplate;
      const std::string named = "claim " + c.name + " names " +
                                (tmpl ? "ResourceClaimTemplate " : "ResourceClaim ") + c.reference;
      const std::string why = c.error.empty() ? "" : " (" + c.error + ")";
      const std::string path =
          c.path + (tmpl ? ".resourceClaimTemplateName" : ".resourceClaimName");
      if (c.status == ClaimLookup::kNotFound) {
        out.push_back(Violation{
            named + ", which was not found in namespace " + ctx.request->ns + why +
                "; its GPUs cannot be counted against the tenant's limits and quota: create it "
                "in the Pod's namespace before the Pod (lint: pass its manifest too)",
            path});
      } else {
        out.push_back(Violation{
            named + " in namespace " + ctx.request->ns + ", which gpuadmit could not read" + why +
                "; its GPUs cannot be counted against the tenant's limits and quota: create the "
                "Pod again once the webhook can read it (serve --dra-lookup, with get on "
                "resourceclaims and resourceclaimtemplates: docs/dra.md)",
            path});
      }
    }
  }
};

}  // namespace

std::unique_ptr<const Rule> make_dra_unresolved_claim_rule() {
  return std::make_unique<DraUnresolvedClaimRule>();
}

}  // namespace gpuadmit
