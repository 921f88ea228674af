// spec.tenants (policies/policy_reader.h).

#include <algorithm>

#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {

void PolicyReader::read_tenants(const YAML::Node& node, const std::string& path) {
  auto items = list(node, path);
  if (!items) return;
  TenantNames seen;
  for (size_t i = 0; i < items->size(); ++i) read_tenant((*items)[i], index_path(path, i), seen);
}

void PolicyReader::read_tenant(const YAML::Node& node, const std::string& tp, TenantNames& seen) {
  Tenant t;
  auto m = map(node, tp,
               {"name", "namespaces", "defaultClass", "allowedClasses", "defaults", "limits",
                "quota", "priority", "queue", "dra", "enforcement"});
  if (!m) return;
  read_tenant_name(*m, tp, t, seen);
  if (const Field* f = m->get("namespaces")) {
    const std::string np = child(tp, "namespaces");
    t.namespaces = patterns(f->value, np);
    if (f->value.IsSequence() && f->value.size() == 0) {
      add(f->value, np, "must list at least one namespace pattern");
    }
  } else {
    missing(*m, "namespaces");
  }
  read_tenant_classes(*m, t);
  with(*m, "defaults",
       [&](const YAML::Node& n, const std::string& p) { read_tenant_defaults(n, p, t.defaults); });
  with(*m, "limits",
       [&](const YAML::Node& n, const std::string& p) { read_tenant_limits(n, p, t.limits); });
  with(*m, "quota", [&](const YAML::Node& n, const std::string& p) {
    auto qm = map(n, p, {"gpus"});
    if (!qm) return;
    with(*qm, "gpus",
         [&](const YAML::Node& v, const std::string& vp) { t.quota_gpus = count(v, vp, 0); });
  });
  with(*m, "priority",
       [&](const YAML::Node& n, const std::string& p) { read_tenant_priority(n, p, t.priority); });
  with(*m, "queue", [&](const YAML::Node& n, const std::string& p) { t.queue = read_queue(n, p); });
  with(*m, "dra", [&](const YAML::Node& n, const std::string& p) { read_tenant_dra(n, p, t.dra); });
  with(*m, "enforcement", [&](const YAML::Node& n, const std::string& p) {
    read_tenant_enforcement(n, p, t.enforcement);
  });
  policy_.tenants.push_back(std::move(t));
}

void PolicyReader::read_tenant_name(const MapView& m, const std::string& tp, Tenant& t,
                                    TenantNames& seen) {
  const Field* f = m.get("name");
  if (f == nullptr) {
    missing(m, "name");
    return;
  }
  const std::string np = child(tp, "name");
  auto s = nonempty_string(f->value, np);
  if (!s) return;
  t.name = *s;
  auto dup = std::find_if(seen.begin(), seen.end(), [&](const auto& s2) { return s2.first == *s; });
  if (dup != seen.end()) {
    add(f->value, np, "duplicate tenant name " + quote(*s) + " (also " + dup->second + ")");
  } else {
    seen.emplace_back(*s, tp);
  }
}

void PolicyReader::read_tenant_classes(const MapView& m, Tenant& t) {
  std::optional<Ref> default_class;
  with(m, "defaultClass", [&](const YAML::Node& n, const std::string& p) {
    if (auto s = nonempty_string(n, p)) {
      t.default_class = *s;
      default_class = Ref{p, n.Mark(), *s};
      class_refs_.push_back(*default_class);
    }
  });
  with(m, "allowedClasses", [&](const YAML::Node& n, const std::string& p) {
    std::vector<Ref> refs = names(n, p);
    std::vector<std::string> allowed;
    for (Ref& r : refs) {
      allowed.push_back(r.name);
      class_refs_.push_back(std::move(r));
    }
    if (n.IsSequence()) {
      if (default_class) {
        class_members_.push_back(MemberRef{*default_class, "allowedClasses", p, allowed});
      }
      t.allowed_classes = std::move(allowed);
    }
  });
}

void PolicyReader::read_tenant_defaults(const YAML::Node& n, const std::string& p,
                                        TenantDefaults& d) {
  auto dm = map(n, p, {"request", "limit", "perGPU"});
  if (!dm) return;
  std::vector<YAML::Mark> request_marks;
  with(*dm, "request", [&](const YAML::Node& r, const std::string& rp) {
    d.request = resources(r, rp, &request_marks);
  });
  with(*dm, "limit",
       [&](const YAML::Node& r, const std::string& rp) { d.limit = resources(r, rp); });
  with(*dm, "perGPU",
       [&](const YAML::Node& r, const std::string& rp) { d.per_gpu = resources(r, rp); });
  // LimitRange rejects a defaultRequest above the default limit; so do we.
  for (size_t i = 0; i < d.request.size(); ++i) {
    const auto& [name, q] = d.request[i];
    for (const auto& [lname, lq] : d.limit) {
      if (lname == name && q > lq) {
        add(request_marks[i], key_path(child(p, "request"), name),
            "default request " + q.to_string() + " is above the default limit " + lq.to_string());
      }
    }
  }
}

ResourceList PolicyReader::resources(const YAML::Node& node, const std::string& path,
                                     std::vector<YAML::Mark>* marks) {
  ResourceList out;
  auto m = free_map(node, path);
  if (!m) return out;
  for (const Field& f : m->fields) {
    const std::string rp = key_path(path, f.key);
    if (f.key.empty()) {
      add(f.key_node, rp, "resource name must not be empty");
      continue;
    }
    if (auto q = quantity(f.value, rp)) {
      out.emplace_back(f.key, *q);
      if (marks) marks->push_back(f.value.Mark());
    }
  }
  return out;
}

void PolicyReader::read_tenant_limits(const YAML::Node& n, const std::string& p,
                                      TenantLimits& limits) {
  auto lm = map(n, p, {"maxGPUsPerContainer", "maxGPUsPerPod"});
  if (!lm) return;
  with(*lm, "maxGPUsPerContainer", [&](const YAML::Node& v, const std::string& vp) {
    limits.max_gpus_per_container = count(v, vp, 0);
  });
  with(*lm, "maxGPUsPerPod", [&](const YAML::Node& v, const std::string& vp) {
    limits.max_gpus_per_pod = count(v, vp, 0);
  });
}

std::optional<TenantQueue> PolicyReader::read_queue(const YAML::Node& node,
                                                    const std::string& path) {
  auto m = map(node, path, {"name", "require"});
  if (!m) return std::nullopt;
  TenantQueue q;
  with(*m, "name", [&](const YAML::Node& n, const std::string& p) {
    auto s = nonempty_string(n, p);
    if (s && !is_dns_subdomain(*s, 63)) {
      add(n, p,
          "invalid LocalQueue name " + quote(*s) +
              ": must be a lowercase DNS subdomain of at most 63 characters (it is written as "
              "the kueue.x-k8s.io/queue-name label)");
    } else if (s) {
      q.name = *s;
    }
  });
  with(*m, "require", [&](const YAML::Node& n, const std::string& p) {
    if (auto b = boolean(n, p)) q.require = *b;
  });
  if (node.size() == 0) {  // an unknown key is reported as such
    add(node, path, "set name (the tenant's LocalQueue), require: true, or both");
  }
  return q;
}

void PolicyReader::read_tenant_priority(const YAML::Node& node, const std::string& path,
                                        TenantPriority& tp) {
  auto m = map(node, path, {"default", "byWorkload", "allowed"});
  if (!m) return;
  std::vector<Ref> used;  // default and byWorkload values: must be in `allowed` when it is set
  with(*m, "default", [&](const YAML::Node& n, const std::string& p) {
    if (auto s = nonempty_string(n, p)) {
      tp.default_class = *s;
      used.push_back(Ref{p, n.Mark(), *s});
    }
  });
  with(*m, "byWorkload", [&](const YAML::Node& n, const std::string& p) {
    auto bm = free_map(n, p);
    if (!bm) return;
    for (const Field& f : bm->fields) {
      const std::string wp = key_path(p, f.key);
      if (auto s = nonempty_string(f.value, wp)) {
        tp.by_workload.emplace_back(f.key, *s);
        used.push_back(Ref{wp, f.value.Mark(), *s});
      }
    }
  });
  for (const Ref& r : used) priority_refs_.push_back(r);
  with(*m, "allowed", [&](const YAML::Node& n, const std::string& p) {
    std::vector<Ref> refs = names(n, p);
    std::vector<std::string> allowed;
    for (Ref& r : refs) {
      allowed.push_back(r.name);
      priority_refs_.push_back(std::move(r));
    }
    if (!n.IsSequence()) return;
    for (const Ref& r : used) priority_members_.push_back(MemberRef{r, "allowed", p, allowed});
    tp.allowed = std::move(allowed);
  });
}

void PolicyReader::read_tenant_dra(const YAML::Node& node, const std::string& path,
                                   TenantDra& dra) {
  auto m = map(node, path, {"allocationModeAll", "adminAccess"});
  if (!m) return;
  with(*m, "allocationModeAll", [&](const YAML::Node& n, const std::string& p) {
    if (auto b = boolean(n, p)) dra.allocation_mode_all = *b;
  });
  with(*m, "adminAccess", [&](const YAML::Node& n, const std::string& p) {
    if (auto b = boolean(n, p)) dra.admin_access = *b;
  });
}

}  // namespace gpuadmit::policy_reader
