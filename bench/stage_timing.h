#pragma once
// Where evaluate's time goes, by mutator and by rule: each of the default mutators and rules
// wrapped in a decorator that adds the time of its calls to a named counter. The wrapped
// pipeline answers exactly as the plain one (the decorators only forward); each timed call costs
// two clock reads (~40 ns on the development machine), which the printed shares include.
//
//   StageClock clock;
//   const Pipeline timed(timed_mutators(clock), timed_rules(clock));
//   ... timed.evaluate(...) N times ...
//   clock.print("evaluate by mutator and rule", N);

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/mutator.h"
#include "engine/rule.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"

namespace gpuadmit::bench {

class StageClock {
 public:
  using Clock = std::chrono::steady_clock;
  void add(const std::string& name, Clock::duration d) { ns_[name] += d.count(); }
  void reset() { ns_.clear(); }
  double total_us(long evaluations) const {
    long long total = 0;
    for (const auto& [name, ns] : ns_) total += ns;
    return total / 1e3 / evaluations;
  }
  // Each counter as µs per evaluation, the largest first.
  void print(const char* title, long evaluations) const {
    std::vector<std::pair<std::string, long long>> rows(ns_.begin(), ns_.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    long long total = 0;
    for (const auto& r : rows) total += r.second;
    std::printf("%s (mean us per evaluation, %ld evaluations):\n", title, evaluations);
    for (const auto& [name, ns] : rows) {
      if (ns * 1000 < total) continue;  // under 0.1%: not worth a line
      std::printf("  %-40s %7.3f us\n", name.c_str(), ns / 1e3 / evaluations);
    }
    std::printf("  %-40s %7.3f us\n", "(sum of the above)", total / 1e3 / evaluations);
  }

 private:
  std::map<std::string, long long> ns_;
};

class TimedMutator final : public Mutator {
 public:
  TimedMutator(std::unique_ptr<const Mutator> inner, StageClock& clock)
      : inner_(std::move(inner)), clock_(clock), name_("mutator " + std::string(inner_->name())) {}
  std::string_view name() const override { return inner_->name(); }
  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    const auto t0 = StageClock::Clock::now();
    MutationOutcome outcome = inner_->mutate(pod, ctx);
    clock_.add(name_, StageClock::Clock::now() - t0);
    return outcome;
  }
  bool may_change(const PodContext& ctx) const override { return inner_->may_change(ctx); }
  bool evaluates_added_ephemeral_containers() const override {
    return inner_->evaluates_added_ephemeral_containers();
  }

 private:
  std::unique_ptr<const Mutator> inner_;
  StageClock& clock_;
  std::string name_;
};

class TimedRule final : public Rule {
 public:
  TimedRule(std::unique_ptr<const Rule> inner, StageClock& clock)
      : inner_(std::move(inner)), clock_(clock), name_("rule " + std::string(inner_->id())) {}
  std::string_view id() const override { return inner_->id(); }
  std::string_view name() const override { return inner_->name(); }
  std::string_view summary() const override { return inner_->summary(); }
  Action default_action() const override { return inner_->default_action(); }
  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    const auto t0 = StageClock::Clock::now();
    inner_->check(pod, ctx, out);
    clock_.add(name_, StageClock::Clock::now() - t0);
  }
  void check_claim(const Json& object, const ClaimContext& ctx,
                   std::vector<Violation>& out) const override {
    inner_->check_claim(object, ctx, out);
  }
  bool evaluates_added_ephemeral_containers() const override {
    return inner_->evaluates_added_ephemeral_containers();
  }

 private:
  std::unique_ptr<const Rule> inner_;
  StageClock& clock_;
  std::string name_;
};

inline std::vector<std::unique_ptr<const Mutator>> timed_mutators(StageClock& clock) {
  std::vector<std::unique_ptr<const Mutator>> out;
  for (auto& m : default_mutators())
    out.push_back(std::make_unique<TimedMutator>(std::move(m), clock));
  return out;
}

inline std::vector<std::unique_ptr<const Rule>> timed_rules(StageClock& clock) {
  std::vector<std::unique_ptr<const Rule>> out;
  for (auto& r : default_rules()) out.push_back(std::make_unique<TimedRule>(std::move(r), clock));
  return out;
}

}  // namespace gpuadmit::bench
