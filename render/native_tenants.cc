#include "render/native_tenants.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "render/native_cel.h"

namespace gpuadmit::render::native {
namespace {

// A pattern of letters, digits, '-' and '_' matches only itself (policies/compiled_policy.cc
// is_literal): a key of the names' map; the rest are RE2 full matches.
bool is_plain(std::string_view pattern) {
  return !pattern.empty() && std::all_of(pattern.begin(), pattern.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// A pattern that full-matches every namespace name: no later tenant is reached.
bool matches_all(std::string_view pattern) { return pattern == ".*" || pattern == ".+"; }

// A map literal "{'k': v, ...}" of members written in order, members added only when set; the
// pairs are kept for the columns (tenant_columns).
class Record {
 public:
  void add(std::string_view key, const std::string& value) {
    pairs_.emplace_back(std::string(key), value);
  }
  std::string str() const {
    std::string text;
    for (const auto& [k, v] : pairs_) text += (text.empty() ? "" : ", ") + quote(k) + ": " + v;
    return "{" + text + "}";
  }
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

std::string resource_map(const CompiledPolicy& policy, const ResourceList& list) {
  Record r;
  for (const auto& [name, q] : list) {
    if (!policy.is_gpu_resource(name)) r.add(name, quote(q.to_string()));
  }
  return r.str();
}

void add_validating(const CompiledPolicy& policy, const Tenant& t, Record& r) {
  if (t.allowed_classes) r.add("ac", string_list(*t.allowed_classes));
  if (t.limits.max_gpus_per_container) {
    r.add("mc", std::to_string(*t.limits.max_gpus_per_container));
  }
  if (t.limits.max_gpus_per_pod) r.add("mp", std::to_string(*t.limits.max_gpus_per_pod));
  if (t.quota_gpus) r.add("q", std::to_string(*t.quota_gpus));
  if (t.priority.allowed) {
    std::vector<std::string> ok = *t.priority.allowed;
    const PriorityClassDecl* d = policy.global_default_priority_class();
    if (d != nullptr && std::find(ok.begin(), ok.end(), d->name) == ok.end()) {
      ok.push_back(d->name);
    }
    r.add("pa", string_list(ok));
  }
  if (t.dra.allocation_mode_all) r.add("aa", "true");
  if (t.dra.admin_access) r.add("ad", "true");
  if (t.queue && t.queue->require) r.add("qr", "true");
  if (t.enforcement.audit) r.add("au", "true");
  if (!t.enforcement.rules.empty()) {
    Record x;
    for (const auto& [id, action] : t.enforcement.rules)
      x.add(id, quote(std::string(1, action_code(action))));
    r.add("x", x.str());
  }
}

void add_mutating(const CompiledPolicy& policy, const Tenant& t, Record& r) {
  if (!t.enforcement.mutate) r.add("nm", "true");
  const TenantDefaults& d = t.defaults;
  Record df;
  if (resource_map(policy, d.request) != "{}") df.add("r", resource_map(policy, d.request));
  if (resource_map(policy, d.limit) != "{}") df.add("l", resource_map(policy, d.limit));
  if (resource_map(policy, d.per_gpu) != "{}") df.add("g", resource_map(policy, d.per_gpu));
  if (df.str() != "{}") r.add("df", df.str());
  if (t.priority.default_class) r.add("pd", quote(*t.priority.default_class));
  if (!t.priority.by_workload.empty()) {
    Record pw;
    for (const auto& [workload, cls] : t.priority.by_workload) pw.add(workload, quote(cls));
    r.add("pw", pw.str());
  }
  if (t.queue && !t.queue->name.empty()) r.add("qn", quote(t.queue->name));
}

}  // namespace

char action_code(Action action) {
  return action == Action::kOff ? 'o' : action == Action::kWarn ? 'w' : 'd';
}

Json tenant_variables(const CompiledPolicy& policy) {
  const std::vector<Tenant>& tenants = policy.policy().tenants;
  // Every literal name a tenant lists, with the tenant that gets it (the first match, which may
  // be an earlier tenant's pattern).
  std::map<std::string, size_t> names;
  for (const Tenant& t : tenants) {
    for (const std::string& p : t.namespaces) {
      // An exempt name is never admitted by the policies (their matchConditions, bindings).
      if (!is_plain(p) || names.count(p) != 0 || policy.is_exempt(p)) continue;
      const Tenant* owner = policy.tenant_for(p);
      names[p] = owner != nullptr ? static_cast<size_t>(owner - tenants.data()) : tenants.size();
    }
  }
  // Any other name can only be matched by a pattern: the first tenant in order with a matching
  // pattern gets it; none after a tenant that matches every name.
  std::vector<std::pair<std::string, size_t>> arms;
  std::string chain = std::to_string(tenants.size());
  for (size_t i = 0; i < tenants.size(); ++i) {
    const std::vector<std::string>& ps = tenants[i].namespaces;
    if (std::any_of(ps.begin(), ps.end(), matches_all)) {
      chain = std::to_string(i);
      break;
    }
    std::vector<std::string> matches;
    for (const std::string& p : ps) {
      if (!is_plain(p)) matches.push_back(full_match("request.namespace", p));
    }
    if (!matches.empty()) arms.emplace_back(any_of(matches), i);
  }
  for (auto a = arms.rbegin(); a != arms.rend(); ++a) {
    chain = a->first + " ? " + std::to_string(a->second) + " : (" + chain + ")";
  }
  Json vars = Json::array();
  if (!names.empty()) {
    Record map;
    for (const auto& [name, index] : names) map.add(name, std::to_string(index));
    vars.push_back({{"name", "nsm"}, {"expression", map.str()}});
    chain =
        "request.namespace in variables.nsm ? variables.nsm[request.namespace] : (" + chain + ")";
  }
  vars.push_back({{"name", "tn"}, {"expression", chain}});
  // The records' members as the expressions read them (render/native_tenants.h); the policy
  // replaces this stand-in with the columns it reads (tenant_columns).
  vars.push_back({{"name", "t"}, {"expression", "{}"}});
  return vars;
}

namespace {

// CEL's parser refuses an expression of more than 100,000 code points (cel-go parser/parser.go,
// the ExpressionSizeCodePointLimit default, which Kubernetes keeps). A column over that is split
// by tenant index into chunks, and the column picks the chunk that holds the namespace's tenant.
constexpr size_t kChunk = 90000;

void add_column(const std::string& name, const std::vector<std::pair<size_t, std::string>>& entries,
                Json& vars) {
  std::vector<std::pair<size_t, std::string>> chunks;  // first index, entries
  for (const auto& [index, value] : entries) {
    const std::string entry = std::to_string(index) + ": " + value;
    if (chunks.empty() || chunks.back().second.size() + entry.size() > kChunk) {
      chunks.emplace_back(index, "");
    }
    std::string& text = chunks.back().second;
    text += (text.empty() ? "" : ", ") + entry;
  }
  if (chunks.size() <= 1) {
    vars.push_back(
        {{"name", name}, {"expression", "{" + (chunks.empty() ? "" : chunks[0].second) + "}"}});
    return;
  }
  std::string pick = "variables." + name + "_" + std::to_string(chunks.size() - 1);
  for (size_t c = 0; c < chunks.size(); ++c) {
    vars.push_back(
        {{"name", name + "_" + std::to_string(c)}, {"expression", "{" + chunks[c].second + "}"}});
  }
  for (size_t c = chunks.size() - 1; c-- > 0;) {
    pick = "variables.tn < " + std::to_string(chunks[c + 1].first) + " ? variables." + name + "_" +
           std::to_string(c) + " : " + pick;
  }
  vars.push_back({{"name", name}, {"expression", pick}});
}

// Many tenants share a value (the same defaults, priority or classes): a column whose distinct
// values are few is written as the list of them, `<name>_v`, and the map from tenant index to
// a position in it, when that is shorter (2,000 generated tenants' defaults: 211 KB as one map).
// Returns whether it is; its reads are then `variables.<name>_v[variables.<name>[...]]`
// (indexed_reads).
bool add_indexed(const std::string& name,
                 const std::vector<std::pair<size_t, std::string>>& entries, Json& vars) {
  std::map<std::string, size_t> position;
  std::string values;
  std::vector<std::pair<size_t, std::string>> indexes;
  size_t plain = 0, indexed = 0;
  for (const auto& [tenant, value] : entries) {
    auto [it, added] = position.emplace(value, position.size());
    if (added) values += (values.empty() ? "" : ", ") + value;
    indexes.emplace_back(tenant, std::to_string(it->second));
    plain += value.size();
    indexed += indexes.back().second.size();
  }
  if (values.size() + indexed >= plain || values.size() + 2 > kChunk) return false;
  vars.push_back({{"name", name + "_v"}, {"expression", "[" + values + "]"}});
  add_column(name, indexes, vars);
  return true;
}

}  // namespace

Json tenant_columns(const CompiledPolicy& policy, TenantFields fields,
                    const TenantRecordFilter& filter, std::set<std::string>& indexed) {
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> columns;
  for (const std::string& key : filter.keys) columns[key];
  const std::vector<Tenant>& tenants = policy.policy().tenants;
  for (size_t i = 0; i < tenants.size(); ++i) {
    const Tenant& t = tenants[i];
    if (filter.audit_only && !t.enforcement.audit) continue;
    Record r;
    if (t.default_class) r.add("dc", quote(*t.default_class));
    if (fields == TenantFields::kValidating) {
      add_validating(policy, t, r);
    } else {
      add_mutating(policy, t, r);
    }
    for (const auto& [key, value] : r.pairs()) {
      auto column = columns.find(key);
      if (column != columns.end()) column->second.emplace_back(i, value);
    }
  }
  Json vars = Json::array();
  for (const auto& [key, entries] : columns) {
    if (add_indexed("t_" + key, entries, vars)) {
      indexed.insert(key);
    } else {
      add_column("t_" + key, entries, vars);
    }
  }
  return vars;
}

std::string indexed_reads(const std::string& expression, const std::set<std::string>& indexed) {
  std::string out = expression;
  for (const std::string& key : indexed) {
    const std::string read = "variables.t_" + key + "[variables.tn]";
    const std::string through = "variables.t_" + key + "_v[" + read + "]";
    for (size_t at = out.find(read); at != std::string::npos;
         at = out.find(read, at + through.size())) {
      out.replace(at, read.size(), through);
    }
  }
  return out;
}

std::string columnar(const std::string& expression) {
  static const std::regex presence("'([a-z]+)' in variables\\.t(?![._a-zA-Z0-9])");
  static const std::regex read("variables\\.t\\.([a-z]+)");
  return std::regex_replace(
      std::regex_replace(expression, presence, "variables.tn in variables.t_$1"), read,
      "variables.t_$1[variables.tn]");
}

TenantRecordFilter members_read(const std::string& text) {
  static const std::regex column("variables\\.t_([a-z]+)");
  TenantRecordFilter filter;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), column); m != std::sregex_iterator();
       ++m) {
    filter.keys.insert((*m)[1].str());
  }
  return filter;
}

std::string no_tenant(const CompiledPolicy& policy) {
  return "variables.tn == " + std::to_string(policy.policy().tenants.size());
}

}  // namespace gpuadmit::render::native
