#include "rules/dra_unresolved_claim.h"

#include "engine/controllers.h"
#include "engine/dra.h"
#include "rules/claim_rule_support.h"

namespace gpuadmit {
namespace {

// The claim asks for a DeviceClass the policy maps to a class.
bool has_gpu_request(const ClaimContext& ctx) {
  bool gpus = false;
  claim_rules::for_each_gpu_request(
      ctx, [&](const DraRequest&, const GpuClass&, const DeviceClassMapping&) { gpus = true; });
  return gpus;
}

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
//
// The same holds for a claim gpuadmit counted that is then replaced: a ResourceClaim not yet
// allocated has no finalizer, so a tenant can delete it and create a larger one under the same
// name while the Pod that names it waits (a second claim it cannot get keeps it pending), and the
// scheduler's DRA plugin, woken by the claim's events, allocates the new one to the Pod — each
// claim within GPU019, the Pod past maxGPUsPerPod (tenant-attack case 420). A template deleted and
// created again is the same for the claims the resource-claim controller makes from it. Since a
// Pod naming a claim or template that does not exist is denied (above), a Pod not yet scheduled
// that names the one being created was admitted with an earlier one: the CREATE is denied.
// Asked only of a claim or template with GPU requests (a DeviceClass the policy maps), of the
// webhook's cluster lookup (ClaimResolver::pending_pods_naming; lint has no cluster), failing
// closed when the Pods cannot be listed.
std::string pod_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 3;
  std::string text = names.size() == 1 ? "Pod " : "Pods ";
  for (size_t i = 0; i < names.size() && i < kShown; ++i) {
    text += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kShown) text += " and " + std::to_string(names.size() - kShown) + " more";
  return text;
}

void check_replaced_claim(const ClaimContext& ctx, std::vector<Violation>& out) {
  if (ctx.claims == nullptr || ctx.name.empty() || !has_gpu_request(ctx)) return;
  const bool tmpl = ctx.kind == "ResourceClaimTemplate";
  const PendingPods pods = ctx.claims->pending_pods_naming(
      tmpl ? ClaimKind::kTemplate : ClaimKind::kClaim, ctx.ns, ctx.name);
  const std::string what = std::string(ctx.kind) + " " + std::string(ctx.name);
  if (pods.status == PendingPodsLookup::kUnavailable) {
    out.push_back(Violation{
        what + ": gpuadmit could not list the Pods of namespace " + std::string(ctx.ns) +
            " not scheduled yet (" + pods.error + "), so it cannot tell whether this " +
            std::string(ctx.kind) +
            " replaces one a Pod was admitted with: create it again once the webhook can list "
            "them (serve --dra-lookup, with list on pods: docs/dra.md)",
        "metadata.name"});
    return;
  }
  if (pods.status != PendingPodsLookup::kListed || pods.names.empty()) return;
  const bool one = pods.names.size() == 1;
  out.push_back(Violation{
      what + " replaces the one " + pod_list(pods.names) + " of namespace " + std::string(ctx.ns) +
          (one ? " was" : " were") + " admitted with (not scheduled yet, " +
          (one ? "it names" : "they name") + " it): gpuadmit counted " +
          (one ? "that Pod's" : "their") + " GPUs with the earlier " + std::string(ctx.kind) +
          ", and the scheduler would give " + (one ? "it" : "them") + " this one; delete " +
          (one ? "the Pod" : "those Pods") + " first, or create this " + std::string(ctx.kind) +
          " under another name",
      "metadata.name"});
}

// A claim that names a controller is given by the scheduler to the Pod whose uid that
// ownerReference carries, whatever its kind says (resourceclaim.IsForPod: metav1.IsControlledBy
// compares uids), and the resource-claim controller adopts such a claim with the annotation
// resource.kubernetes.io/pod-claim-name for a Pod's template claim. A tenant creating one under
// the name a Pod's status records, or for a Pod not processed yet, would replace the claim
// gpuadmit counted (tenant-attack case 423). So a GPU claim's controller is believed only from
// its controller, as every owner is (engine/controllers.h sent_by_owner_controller): a Pod's
// claims from kube-controller-manager's resource-claim controller (bootstrappolicy
// controller_policy.go), another kind's from the controllers the policy names.
constexpr std::string_view kResourceClaimControllerUser =
    "system:serviceaccount:kube-system:resource-claim-controller";

// Exemption claim-owner (docs/security.md): a claim's controller believed from its sender only.
void check_claim_owner(const Json& object, const ClaimContext& ctx, std::vector<Violation>& out) {
  if (ctx.kind != "ResourceClaim") return;
  const std::optional<OwnerReference> owner = controller_reference(object);
  if (!owner || !has_gpu_request(ctx)) return;
  const bool claim_controller =
      owner->kind == "Pod" &&
      (ctx.username == kResourceClaimControllerUser || ctx.username == kKubeControllerManagerUser);
  if (claim_controller || sent_by_owner_controller(*owner, ctx.username, *ctx.policy)) return;
  out.push_back(Violation{
      "ResourceClaim " + object_name(object) + " names " + std::string(owner->kind) + " " +
          std::string(owner->name) + " as its controller, but " +
          (owner->kind == "Pod" ? std::string("only Kubernetes' resource-claim controller makes "
                                              "a Pod's claims")
                                : "that kind's controller did not send it") +
          ": the scheduler gives a claim to the Pod whose uid its controller reference carries, "
          "in place of the claim gpuadmit counted for that Pod; remove the ownerReference and "
          "name the claim in a Pod's resourceClaims",
      "metadata.ownerReferences"});
}

class DraUnresolvedClaimRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU023"; }
  std::string_view name() const override { return "DraClaimResolves"; }
  std::string_view summary() const override {
    return "a Pod's DRA claims must be known to gpuadmit (found through the API lookup, or lint: "
           "among the manifests read), so that their GPUs are counted, and not replaced while it "
           "waits";
  }
  Action default_action() const override { return Action::kDeny; }

  void check_claim(const Json& object, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    check_claim_owner(object, ctx, out);
    check_replaced_claim(ctx, out);
  }

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
