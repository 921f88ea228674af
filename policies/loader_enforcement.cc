// spec.enforcement and a tenant's enforcement (policies/policy_reader.h).

#include <cctype>

#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {

void PolicyReader::read_enforcement(const YAML::Node& node, const std::string& path) {
  auto m = map(node, path,
               {"requestsEqualLimits", "nonGpuOnGpuPool", "fragmentation", "rules", "exempt",
                "nodeAgents", "gpuVisibility", "mutationFailurePolicy"});
  if (!m) return;
  Enforcement& e = policy_.enforcement;
  with(*m, "requestsEqualLimits", [&](const YAML::Node& n, const std::string& p) {
    if (auto a = action(n, p, {"fix", "deny", "warn"})) e.requests_equal_limits = *a;
  });
  with(*m, "nonGpuOnGpuPool", [&](const YAML::Node& n, const std::string& p) {
    if (auto a = action(n, p, {"deny", "strip", "warn", "off"})) e.non_gpu_on_gpu_pool = *a;
  });
  with(*m, "fragmentation", [&](const YAML::Node& n, const std::string& p) {
    if (auto a = action(n, p, {"deny", "warn", "off"})) e.fragmentation = *a;
  });
  with(*m, "gpuVisibility", [&](const YAML::Node& n, const std::string& p) {
    if (auto a = action(n, p, {"fix", "deny", "warn", "off"})) e.gpu_visibility = *a;
  });
  with(*m, "mutationFailurePolicy", [&](const YAML::Node& n, const std::string& p) {
    if (auto v = one_of(n, p, {"Fail", "Ignore"})) {
      e.mutation_failure_policy = *v == "Fail" ? FailurePolicy::kFail : FailurePolicy::kIgnore;
    }
  });
  with(*m, "rules",
       [&](const YAML::Node& n, const std::string& p) { read_rule_actions(n, p, e.rules); });
  with(*m, "exempt", [&](const YAML::Node& n, const std::string& p) {
    auto xm = map(n, p, {"namespaces"});
    if (!xm) return;
    with(*xm, "namespaces", [&](const YAML::Node& v, const std::string& vp) {
      e.exempt_namespaces = patterns(v, vp);
    });
  });
  with(*m, "nodeAgents", [&](const YAML::Node& n, const std::string& p) {
    auto am = map(n, p, {"namespaces"});
    if (!am) return;
    with(*am, "namespaces", [&](const YAML::Node& v, const std::string& vp) {
      e.node_agent_namespaces = patterns(v, vp);
    });
  });
}

void PolicyReader::read_tenant_enforcement(const YAML::Node& node, const std::string& path,
                                           TenantEnforcement& te) {
  auto m = map(node, path, {"mode", "mutate", "rules"});
  if (!m) return;
  with(*m, "mode", [&](const YAML::Node& n, const std::string& p) {
    if (auto s = nonempty_string(n, p)) {
      if (*s == "audit" || *s == "enforce") {
        te.audit = *s == "audit";
      } else {
        add(n, p, "must be enforce or audit, got " + quote(*s));
      }
    }
  });
  with(*m, "mutate", [&](const YAML::Node& n, const std::string& p) {
    if (auto b = boolean(n, p)) te.mutate = *b;
  });
  with(*m, "rules",
       [&](const YAML::Node& n, const std::string& p) { read_rule_actions(n, p, te.rules); });
}

void PolicyReader::read_rule_actions(const YAML::Node& node, const std::string& path,
                                     std::vector<std::pair<std::string, Action>>& rules) {
  auto rm = free_map(node, path);
  if (!rm) return;
  for (const Field& f : rm->fields) {
    const std::string rp = key_path(path, f.key);
    if (!is_rule_id(f.key)) {
      add(f.key_node, rp,
          "unknown rule " + quote(f.key) + ": rule ids are GPU001 to GPU0" +
              std::to_string(kLastRuleNumber));
      continue;
    }
    if (auto a = action(f.value, rp, {"deny", "warn", "off"})) rules.emplace_back(f.key, *a);
  }
}

bool PolicyReader::is_rule_id(std::string_view id) {
  if (id.size() != 6 || id.substr(0, 3) != "GPU" ||
      !std::isdigit(static_cast<unsigned char>(id[3])) ||
      !std::isdigit(static_cast<unsigned char>(id[4])) ||
      !std::isdigit(static_cast<unsigned char>(id[5]))) {
    return false;
  }
  const int n = std::stoi(std::string(id.substr(3)));
  return n >= 1 && n <= kLastRuleNumber;
}

}  // namespace gpuadmit::policy_reader
