// Owners a tenant forges (SPEC §2, §7.1: what the requester writes is never evidence): anyone
// who creates a Pod writes its ownerReferences, uid included, so an owner in the export may fold
// a child only when it already reports every finding and pending mutation of the child. Each
// case is one export in one line of JSON (every object at line 1): a clean, already mutated
// Deployment ml/serve and its ReplicaSet (uid rs-serve), plus the case's objects.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "audit/audit.h"
#include "audit/report.h"
#include "tests/audit/audit_test_util.h"

namespace gpuadmit::audit {
namespace owners_test {
namespace {

using test_util::pipeline;
using test_util::test_policy;

Json owner(const std::string& api_version, const std::string& kind, const std::string& name,
           const std::string& uid) {
  return Json{{"apiVersion", api_version},
              {"kind", kind},
              {"name", name},
              {"uid", uid},
              {"controller", true}};
}

// A pod spec of one container with `gpus` as its limit (and request) or, `request_only`, its
// request without a limit (GPU001); `placed`: the class annotation and node affinity the
// webhook writes for class a100 (docs/mutations.md §2, §5) are in place.
Json pod_spec(int gpus, bool request_only, bool placed) {
  Json resources = request_only ? Json{{"requests", {{"nvidia.com/gpu", gpus}}}}
                                : Json{{"limits", {{"nvidia.com/gpu", gpus}}},
                                       {"requests", {{"nvidia.com/gpu", gpus}}}};
  Json spec = {
      {"containers",
       Json::array({{{"name", "c"}, {"image", "x"}, {"resources", std::move(resources)}}})}};
  if (placed) {
    spec["affinity"] =
        Json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.product",
        "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}]}]}}})");
  }
  return spec;
}

Json metadata(const std::string& name, const std::string& uid, bool placed,
              const Json& owners = Json()) {
  Json m = {{"name", name}, {"namespace", "ml"}, {"uid", uid}};
  if (placed) m["annotations"] = {{"gpuadmit.io/class", "a100"}};
  if (!owners.is_null()) m["ownerReferences"] = owners;
  return m;
}

Json pod(const std::string& name, const std::string& uid, const Json& owners, int gpus,
         bool request_only, bool placed) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", metadata(name, uid, placed, owners)},
          {"spec", pod_spec(gpus, request_only, placed)}};
}

Json workload(const std::string& kind, const std::string& name, const std::string& uid,
              const Json& owners) {
  Json tmpl = {{"metadata", {{"annotations", {{"gpuadmit.io/class", "a100"}}}}},
               {"spec", pod_spec(1, false, true)}};
  tmpl["spec"]["containers"][0]["resources"].erase("requests");
  return {{"apiVersion", "apps/v1"},
          {"kind", kind},
          {"metadata", metadata(name, uid, false, owners)},
          {"spec", {{"template", std::move(tmpl)}}}};
}

Json serve() { return workload("Deployment", "serve", "d-serve", Json()); }
Json serve_rs(const std::string& uid = "rs-serve") {
  return workload("ReplicaSet", "serve-5d4", uid,
                  Json::array({owner("apps/v1", "Deployment", "serve", "d-serve")}));
}
Json rs_owner() { return Json::array({owner("apps/v1", "ReplicaSet", "serve-5d4", "rs-serve")}); }

std::vector<std::string> placements(const AuditResult& r) {
  std::vector<std::string> out;
  for (const AuditObject& o : r.objects) {
    std::string line = o.kind + " " + o.name + ": ";
    line += o.reported() ? "here" : "at " + r.objects[o.reported_at].name;
    out.push_back(line);
  }
  return out;
}

constexpr const char* kGpu001 =
    "in.json:1: deny GPU001 Pod ml/sneaky: container c: nvidia.com/gpu request 1 has no limit; "
    "set limits[\"nvidia.com/gpu\"] to 1 as well "
    "[spec.containers[0].resources.requests[\"nvidia.com/gpu\"]]\n";

struct Case {
  std::string name;
  std::vector<Json> objects;  // after serve and its ReplicaSet
  std::vector<std::string> placements;
  std::string text_findings;  // the text report's finding lines
  int exit_code = 0;
};

TEST_CASE("audit owners: a forged ownerReference never hides a finding", "[audit][owners]") {
  const std::vector<Case> cases = {
      {"a bare GPU pod without a GPU limit claiming the clean Deployment's ReplicaSet uid",
       {pod("sneaky", "p-sneaky", rs_owner(), 1, true, false)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod sneaky: here"},
       kGpu001,
       1},
      {"... claiming the Deployment itself",
       {pod("sneaky", "p-sneaky", Json::array({owner("apps/v1", "Deployment", "serve", "d-serve")}),
            1, true, false)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod sneaky: here"},
       kGpu001,
       1},
      {"... claiming an owner that is not controller (controller: false is no controller)",
       {[] {
         Json owners = rs_owner();
         owners[0]["controller"] = false;
         return pod("sneaky", "p-sneaky", owners, 1, true, false);
       }()},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod sneaky: here"},
       kGpu001,
       1},
      {"a clean, placed copy of the template claiming the ReplicaSet: folded, it hides nothing",
       {pod("copy", "p-copy", rs_owner(), 1, false, true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: at serve"},
       "",
       0},
      {"a clean pod the webhook would still place claiming the ReplicaSet: its drift is its own",
       {pod("copy", "p-copy", rs_owner(), 1, false, false)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "in.json:1: mutation Pod ml/copy: the mutating webhook would now change it: class, "
       "node-affinity (admitted before gpuadmit or before the policy changed)\n",
       0},
      {"the owner's uid with another kind",
       {pod("copy", "p-copy",
            Json::array({owner("apps/v1", "StatefulSet", "serve-5d4", "rs-serve")}), 1, false,
            true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "",
       0},
      {"the owner's uid with another name",
       {pod("copy", "p-copy", Json::array({owner("apps/v1", "ReplicaSet", "other", "rs-serve")}), 1,
            false, true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "",
       0},
      {"the owner's uid with another API group",
       {pod("copy", "p-copy",
            Json::array({owner("example.com/v1", "ReplicaSet", "serve-5d4", "rs-serve")}), 1, false,
            true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "",
       0},
      {"an owner uid absent from the export",
       {pod("copy", "p-copy", Json::array({owner("apps/v1", "ReplicaSet", "serve-5d4", "gone")}), 1,
            false, true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "",
       0},
      {"two objects with the owner's uid: neither is an owner",
       {serve_rs("rs-serve"), pod("copy", "p-copy", rs_owner(), 1, false, true)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve",
        "ReplicaSet serve-5d4: at serve", "Pod copy: here"},
       "",
       0},
      {"two pods that own each other, with one finding: a cycle folds nothing",
       {pod("sneaky", "p-a", Json::array({owner("v1", "Pod", "sneaky", "p-b")}), 1, true, false),
        pod("sneaky", "p-b", Json::array({owner("v1", "Pod", "sneaky", "p-a")}), 1, true, false)},
       {"Deployment serve: here", "ReplicaSet serve-5d4: at serve", "Pod sneaky: here",
        "Pod sneaky: here"},
       std::string(kGpu001) + kGpu001,
       1},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Json items = Json::array({serve(), serve_rs()});
      for (const Json& o : c.objects) items.push_back(o);
      const Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
      Auditor auditor(test_policy(), pipeline(), nullptr);
      auditor.read_text(list.dump(), "in.json");
      const AuditResult r = auditor.finish();
      CHECK(placements(r) == c.placements);
      const std::string text = text_report(r);
      CHECK(text.substr(0, text.rfind('\n', text.size() - 2) + 1) == c.text_findings);
      CHECK(r.exit_code() == c.exit_code);
    }
  }
}

// fold_owners alone: a chain of three folds to its top; a child whose finding the owner lacks
// stays, and so do the objects below it (they fold into it).
TEST_CASE("audit owners: chains fold to their top-level owner", "[audit][owners]") {
  auto object = [](std::string kind, std::string uid, std::string owner_kind, std::string owner_uid,
                   std::vector<std::string> rules) {
    AuditObject o;
    o.api_version = kind == "Pod" ? "v1" : "apps/v1";
    o.kind = kind;
    o.name = kind + "-" + uid;
    o.ns = "ml";
    o.uid = uid;
    if (!owner_uid.empty()) {
      o.owner = OwnerRef{owner_kind == "Pod" ? "v1" : "apps/v1", owner_kind,
                         owner_kind + "-" + owner_uid, owner_uid};
    }
    for (std::string& r : rules) o.findings.push_back({r, Severity::kDeny, "m " + r, "spec"});
    return o;
  };
  struct FoldCase {
    std::string name;
    std::vector<AuditObject> objects;
    std::vector<size_t> reported_at;  // kReportedHere written as the object's own index
  };
  const std::vector<FoldCase> cases = {
      {"pod → replicaset → deployment, same finding",
       {object("Deployment", "d", "", "", {"GPU005"}),
        object("ReplicaSet", "r", "Deployment", "d", {"GPU005"}),
        object("Pod", "p", "ReplicaSet", "r", {"GPU005"})},
       {0, 0, 0}},
      {"children listed before their owners",
       {object("Pod", "p", "ReplicaSet", "r", {}), object("ReplicaSet", "r", "Deployment", "d", {}),
        object("Deployment", "d", "", "", {})},
       {2, 2, 2}},
      {"the replicaset has a finding the deployment lacks: the pod folds into the replicaset",
       {object("Deployment", "d", "", "", {}),
        object("ReplicaSet", "r", "Deployment", "d", {"GPU001"}),
        object("Pod", "p", "ReplicaSet", "r", {"GPU001"})},
       {0, 1, 1}},
      {"a pod with a finding of its own under a clean chain",
       {object("Deployment", "d", "", "", {}), object("ReplicaSet", "r", "Deployment", "d", {}),
        object("Pod", "p", "ReplicaSet", "r", {"GPU001"})},
       {0, 0, 2}},
      {"a pod whose finding's message differs from the owner's",
       {object("Deployment", "d", "", "", {"GPU005"}),
        [&] {
          AuditObject p = object("Pod", "p", "Deployment", "d", {"GPU005"});
          p.findings[0].message = "other";
          return p;
        }()},
       {0, 1}},
      {"an object claiming itself", {object("Pod", "p", "Pod", "p", {})}, {0}},
  };
  for (const FoldCase& c : cases) {
    SECTION(c.name) {
      std::vector<AuditObject> objects = c.objects;
      fold_owners(objects);
      std::vector<size_t> at;
      for (size_t i = 0; i < objects.size(); ++i) {
        at.push_back(objects[i].reported() ? i : objects[i].reported_at);
      }
      CHECK(at == c.reported_at);
    }
  }
}

}  // namespace
}  // namespace owners_test
}  // namespace gpuadmit::audit
