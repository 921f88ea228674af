#pragma once
// The webhook's Prometheus metrics (SPEC §7.1), hand-written text exposition format 0.0.4:
// lock-free atomics on the hot path, a small mutex-guarded map for labelled counters whose
// label values come from requests (kinds, rule ids), capped so no input can grow it unbounded.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::webhook {

// A counter family with a fixed set of label names, e.g. requests{endpoint,operation,kind,result}.
class LabeledCounter {
 public:
  LabeledCounter(std::string name, std::string help, std::vector<std::string> labels)
      : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)) {}
  // `values` in the order of the label names. Past kMaxSeries distinct series, new ones are
  // counted under every label value "other".
  void add(std::initializer_list<std::string_view> values, std::uint64_t n = 1) {
    add(values.begin(), values.size(), n);
  }
  void add(const std::vector<std::string_view>& values, std::uint64_t n = 1) {
    add(values.data(), values.size(), n);
  }
  std::uint64_t value(const std::vector<std::string_view>& values) const;
  void render(std::string& out) const;

  static constexpr size_t kMaxSeries = 1000;

 private:
  // Hot path: the key is built in a per-thread buffer and looked up without a copy; a string
  // is allocated only for a series seen for the first time.
  void add(const std::string_view* values, size_t count, std::uint64_t n);
  void build_key(std::string& key, const std::string_view* values, size_t count) const;

  std::string name_, help_;
  std::vector<std::string> labels_;
  mutable std::mutex mutex_;
  // key: rendered label set {a="x",b="y"}
  std::map<std::string, std::uint64_t, std::less<>> series_;
};

// A latency histogram per endpoint, in seconds.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                     0.0025,  0.005,  0.01,    0.025,  0.05,
                                                     0.1,     0.25,   0.5,     1.0};
  void observe(std::uint64_t micros);
  void render(std::string& out, std::string_view name, std::string_view endpoint) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_micros_{0};
};

struct Metrics {
  LabeledCounter requests{"gpuadmit_requests_total",
                          "AdmissionReview requests by endpoint, operation, kind and result "
                          "(allowed, denied, error).",
                          {"endpoint", "operation", "kind", "result"}};
  LatencyHistogram mutate_latency, validate_latency;
  LabeledCounter violations{"gpuadmit_violations_total",
                            "Findings by rule id and severity (deny, warn, error).",
                            {"rule", "severity"}};
  // Staged rollout (docs/rollout.md): label values come from the policy only — rule ids, the
  // tenant's name ("" outside every tenant), mutation names; never namespaces or pod names.
  LabeledCounter findings{"gpuadmit_findings_total",
                          "Findings by rule id, severity (deny, warn, error, audit: would deny, "
                          "tenant in audit mode) and tenant.",
                          {"rule", "severity", "tenant"}};
  LabeledCounter mutations{"gpuadmit_mutations_total",
                           "Mutations applied, by mutation name and tenant.",
                           {"mutation", "tenant"}};
  // A mutator that could not complete (engine/mutator.h): the review was answered by
  // enforcement.mutationFailurePolicy. Label values are the pipeline's mutator names.
  LabeledCounter mutation_errors{"gpuadmit_mutation_errors_total",
                                 "Reviews in which a mutator could not complete, by mutator.",
                                 {"mutator"}};
  LabeledCounter rejected{"gpuadmit_http_rejected_total",
                          "HTTP requests refused before the engine ran, by status code.",
                          {"code"}};
  // Reviews answered by the review fast path (webhook/review_fast_path.h), the rest of
  // gpuadmit_requests_total went through cpp-httplib.
  std::atomic<std::uint64_t> fast_path_reviews{0};
  std::atomic<std::uint64_t> policy_reload_success{0}, policy_reload_failure{0};
  std::atomic<std::uint64_t> policy_generation{1};
  std::atomic<std::uint64_t> cert_reload_success{0}, cert_reload_failure{0};
  std::atomic<std::uint64_t> client_ca_reload_success{0}, client_ca_reload_failure{0};
  std::atomic<std::int64_t> cert_expiry_unix{0};
  std::atomic<bool> ready{false};

  // The whole exposition, text/plain; version=0.0.4.
  std::string render() const;
};

// Appends a metric family's "# HELP" and "# TYPE" lines (the exposition format's header).
void append_metric_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help);

}  // namespace gpuadmit::webhook
