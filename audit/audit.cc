#include "audit/audit.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
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

// True when every finding of `child` (rule and message) is also one of `owner`'s.
bool findings_covered(const AuditObject& child, const AuditObject& owner) {
  if (child.findings.empty()) return true;
  std::unordered_set<std::string> keys;
  for (const AuditFinding& f : owner.findings) keys.insert(finding_key(f));
  return std::all_of(child.findings.begin(), child.findings.end(),
                     [&](const AuditFinding& f) { return keys.count(finding_key(f)) > 0; });
}

// True when the webhook would change `child` only in ways it would change `target` (a Pod of a
// Deployment admitted before gpuadmit lacks what the template lacks; its ReplicaSet, a copy
// gpuadmit never patches, has no mutation of its own).
bool mutations_covered(const AuditObject& child, const AuditObject& target) {
  if (!child.would_change) return true;
  if (!target.would_change) return false;
  return std::all_of(child.mutations.begin(), child.mutations.end(), [&](const std::string& m) {
    return std::find(target.mutations.begin(), target.mutations.end(), m) != target.mutations.end();
  });
}

// Each object's owner in the export when its findings are the owner's too, else kNoOwner.
std::vector<size_t> foldable_owners(const std::vector<AuditObject>& objects) {
  std::unordered_map<std::string_view, size_t> by_uid;
  by_uid.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    if (objects[i].uid.empty()) continue;
    auto [it, added] = by_uid.emplace(objects[i].uid, i);
    if (!added) it->second = kAmbiguous;  // two objects claim one uid: neither is an owner
  }
  std::vector<size_t> up(objects.size(), kNoOwner);
  for (size_t i = 0; i < objects.size(); ++i) {
    const AuditObject& o = objects[i];
    if (!o.owner || o.owner->uid.empty()) continue;
    const auto it = by_uid.find(o.owner->uid);
    if (it == by_uid.end() || it->second == kAmbiguous || it->second == i) continue;
    const AuditObject& p = objects[it->second];
    if (p.kind != o.owner->kind || p.name != o.owner->name || p.ns != o.ns ||
        group_of(p.api_version) != group_of(o.owner->api_version)) {
      continue;
    }
    if (findings_covered(o, p)) up[i] = it->second;
  }
  return up;
}

}  // namespace

// Each object's report target, resolved from the top down: an object goes to its foldable
// owner's target when its pending mutations are that target's too, else it is reported itself.
// Findings need no second check: they are the owner's, whose are its target's.
void fold_owners(std::vector<AuditObject>& objects) {
  const std::vector<size_t> up = foldable_owners(objects);
  constexpr size_t kUnknown = kNoOwner;
  std::vector<size_t> target(objects.size(), kUnknown);
  std::vector<size_t> chain;
  std::unordered_set<size_t> on_chain;
  for (size_t i = 0; i < objects.size(); ++i) {
    if (target[i] != kUnknown) continue;
    chain.assign(1, i);
    on_chain.clear();
    on_chain.insert(i);
    while (true) {
      const size_t cur = chain.back();
      const size_t p = up[cur];
      if (p == kNoOwner) {  // a top-level object
        target[cur] = cur;
        chain.pop_back();
        break;
      }
      if (target[p] != kUnknown) break;
      if (on_chain.count(p) > 0) {  // a cycle of forged owners: each of it is reported itself
        while (true) {
          const size_t n = chain.back();
          target[n] = n;
          chain.pop_back();
          if (n == p) break;
        }
        break;
      }
      chain.push_back(p);
      on_chain.insert(p);
    }
    for (auto n = chain.rbegin(); n != chain.rend(); ++n) {
      const size_t t = target[up[*n]];
      target[*n] = mutations_covered(objects[*n], objects[t]) ? t : *n;
    }
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    objects[i].folded = 0;
    objects[i].reported_at = target[i] == i ? kReportedHere : target[i];
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    if (!objects[i].reported()) ++objects[objects[i].reported_at].folded;
  }
}

// The reading thread hands batches of objects to the judging thread through a bounded queue,
// so memory holds a few batches, not the export.
struct Auditor::Queue {
  static constexpr size_t kBatch = 64;
  static constexpr size_t kMaxBatches = 8;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<Item>> batches;
  std::vector<Item> filling;
  std::deque<std::string> files;  // the display names, stable for the items that point to them
  bool closed = false;
  std::thread worker;
};

Auditor::Auditor(PolicyPtr policy, const Pipeline& pipeline, lint::ManifestClaims* claims,
                 bool pipelined)
    : policy_(std::move(policy)), pipeline_(pipeline), claims_(claims) {
  if (pipelined) {
    queue_ = std::make_unique<Queue>();
    queue_->worker = std::thread([this] { judge_queued(); });
  }
}

Auditor::~Auditor() { stop(); }

void Auditor::take(Json object, const std::string& file, int line) {
  if (!queue_) {
    judge(object, file, line);
    free_json(object);
    return;
  }
  Queue& q = *queue_;
  if (q.files.empty() || q.files.back() != file) q.files.push_back(file);
  q.filling.push_back(Item{std::move(object), &q.files.back(), line});
  if (q.filling.size() < Queue::kBatch) return;
  std::unique_lock lock(q.mutex);
  q.changed.wait(lock, [&] { return q.batches.size() < Queue::kMaxBatches; });
  q.batches.push_back(std::move(q.filling));
  q.filling.clear();
  q.changed.notify_all();
}

void Auditor::judge_queued() {
  Queue& q = *queue_;
  while (true) {
    std::vector<Item> batch;
    {
      std::unique_lock lock(q.mutex);
      q.changed.wait(lock, [&] { return !q.batches.empty() || q.closed; });
      if (q.batches.empty()) return;
      batch = std::move(q.batches.front());
      q.batches.pop_front();
      q.changed.notify_all();
    }
    for (Item& item : batch) {
      judge(item.object, *item.file, item.line);
      free_json(item.object);
    }
  }
}

void Auditor::stop() {
  if (!queue_ || !queue_->worker.joinable()) return;
  Queue& q = *queue_;
  {
    std::lock_guard lock(q.mutex);
    if (!q.filling.empty()) q.batches.push_back(std::move(q.filling));
    q.filling.clear();
    q.closed = true;
    q.changed.notify_all();
  }
  q.worker.join();
}

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
  if (object.is_object()) {
    take(std::move(object), file, line);
  } else {
    free_json(object);
  }
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
    if (claims_ != nullptr) claims_->add(object);
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
    o.exempt = e.exempt;
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
  stop();
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
