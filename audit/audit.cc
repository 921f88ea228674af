#include "audit/audit.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "engine/controllers.h"
#include "engine/dra.h"
#include "engine/workload.h"

namespace gpuadmit::audit {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The API group of an apiVersion ("apps/v1" → "apps", "v1" → "").
std::string_view group_of(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

constexpr size_t kNoOwner = std::numeric_limits<size_t>::max();
constexpr size_t kAmbiguous = kNoOwner - 1;

// The key a finding is compared by when a child is folded into its owner.
std::string finding_key(const AuditFinding& f) { return f.rule + '\x1f' + f.message; }

// True when every finding of `child` is one of `owner`'s, and a pending mutation of the child
// is one the owner has too.
bool covered_by(const AuditObject& child, const AuditObject& owner) {
  if (child.would_change && !owner.would_change) return false;
  if (child.findings.empty()) return true;
  std::unordered_set<std::string> keys;
  for (const AuditFinding& f : owner.findings) keys.insert(finding_key(f));
  return std::all_of(child.findings.begin(), child.findings.end(),
                     [&](const AuditFinding& f) { return keys.count(finding_key(f)) > 0; });
}

}  // namespace

// The owner index by uid, then each object's report target by walking up its foldable owners.
void fold_owners(std::vector<AuditObject>& objects) {
  std::unordered_map<std::string_view, size_t> by_uid;
  by_uid.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    if (objects[i].uid.empty()) continue;
    auto [it, added] = by_uid.emplace(objects[i].uid, i);
    if (!added) it->second = kAmbiguous;  // two objects claim one uid: neither is an owner
  }
  // The owner object is folded into, or kNoOwner.
  auto parent = [&](size_t i) -> size_t {
    const AuditObject& o = objects[i];
    if (!o.owner || o.owner->uid.empty()) return kNoOwner;
    const auto it = by_uid.find(o.owner->uid);
    if (it == by_uid.end() || it->second == kAmbiguous || it->second == i) return kNoOwner;
    const AuditObject& p = objects[it->second];
    if (p.kind != o.owner->kind || p.name != o.owner->name || p.ns != o.ns ||
        group_of(p.api_version) != group_of(o.owner->api_version)) {
      return kNoOwner;
    }
    return covered_by(o, p) ? it->second : kNoOwner;
  };
  constexpr size_t kUnknown = kNoOwner;
  std::vector<size_t> target(objects.size(), kUnknown);
  std::vector<size_t> walk;
  std::unordered_set<size_t> on_walk;
  for (size_t i = 0; i < objects.size(); ++i) {
    if (target[i] != kUnknown) continue;
    walk.clear();
    on_walk.clear();
    size_t cur = i;
    size_t top = kUnknown;
    bool cycle = false;
    while (true) {
      walk.push_back(cur);
      on_walk.insert(cur);
      const size_t p = parent(cur);
      if (p == kNoOwner) {
        top = cur;
        break;
      }
      if (target[p] != kUnknown) {
        top = target[p];
        break;
      }
      if (on_walk.count(p) > 0) {
        cycle = true;
        break;
      }
      cur = p;
    }
    for (size_t w : walk) target[w] = cycle ? w : top;
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    objects[i].folded = 0;
    objects[i].reported_at = target[i] == i ? kReportedHere : target[i];
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    if (!objects[i].reported()) ++objects[objects[i].reported_at].folded;
  }
}

Auditor::Auditor(PolicyPtr policy, const Pipeline& pipeline, const ClaimResolver* claims)
    : policy_(std::move(policy)), pipeline_(pipeline), claims_(claims) {}

void Auditor::read_file(const std::string& path) {
  fleet::read_export_file(path, *this, result_.errors);
}

void Auditor::read_stream(std::FILE* file, const std::string& display) {
  fleet::read_export_stream(file, display, *this, result_.errors);
}

void Auditor::read_text(std::string_view text, const std::string& display) {
  fleet::read_export_text(text, display, *this, result_.errors);
}

void Auditor::input_error(const std::string& display, const std::string& message) {
  result_.errors.push_back({display, 0, message});
}

void Auditor::add(Json object, const std::string& file, int line) {
  // A List inside a List (fleet's reader hands it over whole): its items one by one.
  if (object.is_object() && ends_with(string_member(object, "kind"), "List")) {
    if (Json* items = find_member(object, "items"); items != nullptr && items->is_array()) {
      for (Json& item : *items) add(std::move(item), file, line);
      free_json(object);
      return;
    }
  }
  if (object.is_object()) judge(object, file, line);
  free_json(object);
}

// As lint judges an object (lint/linter.cc lint_workload, lint_claim).
void Auditor::judge(Json& object, const std::string& file, int line) {
  AuditObject o;
  o.api_version = std::string(string_member(object, "apiVersion"));
  o.kind = std::string(string_member(object, "kind"));
  const bool claim = is_claim_object(o.api_version, o.kind);
  if (!claim && !is_workload_kind(o.api_version, o.kind, *policy_)) return;
  o.file = file;
  o.line = line;
  o.name = object_name(object);
  if (const Json* metadata = find_member(object, "metadata")) {
    o.ns = std::string(string_member(*metadata, "namespace"));
    o.uid = std::string(string_member(*metadata, "uid"));
  }
  if (auto owner = controller_reference(object)) {
    o.owner = OwnerRef{std::string(owner->api_version), std::string(owner->kind),
                       std::string(owner->name), std::string(owner->uid)};
  }
  EvaluateOptions options;
  options.claims = claims_;
  options.ns = o.ns;
  options.patch = false;
  options.copy_unchanged = false;
  Evaluation e;
  if (claim) {
    options.mutate = false;
    e = pipeline_.evaluate(object, options, *policy_);
  } else {
    options.operation = Operation::kCreate;
    options.mutate = true;
    // As the webhook: a controller's copy is judged, never patched (engine/controllers.h).
    options.judge_only = template_treatment(object, Operation::kCreate, TemplateMode::kMutate) ==
                         TemplateTreatment::kJudge;
    options.apply_mutation_failure_policy = false;
    // The object is the audit's own: the mutators may edit it where it is.
    e = pipeline_.evaluate_in_place(object, options, *policy_);
    if (!e.is_workload && !(e.exempt && !find_pod_specs(object, *policy_).empty())) return;
    o.would_change = e.changed();
    if (o.would_change) o.mutations = e.mutations;
  }
  o.findings.reserve(e.findings.size());
  for (Finding& f : e.findings) {
    o.findings.push_back(
        AuditFinding{std::move(f.rule), f.severity, std::move(f.message), std::move(f.path)});
  }
  result_.objects.push_back(std::move(o));
}

AuditResult Auditor::finish() {
  fold_owners(result_.objects);
  for (const AuditObject& o : result_.objects) {
    if (!o.reported()) {
      ++result_.folded;
      continue;
    }
    ++result_.reported;
    if (o.would_change) ++result_.would_change;
    for (const AuditFinding& f : o.findings) {
      switch (f.severity) {
        case Severity::kDeny:
          ++result_.deny;
          break;
        case Severity::kWarn:
          ++result_.warn;
          break;
        case Severity::kError:
          ++result_.error;
          break;
      }
    }
  }
  return std::move(result_);
}

}  // namespace gpuadmit::audit
