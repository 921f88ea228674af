#include "webhook/metrics.h"

#include <cstdio>

namespace gpuadmit::webhook {
namespace {

// Label values are escaped as the exposition format says: backslash, quote, newline. The runs
// between them are appended whole (every review adds several series: this is the hot path).
void append_escaped(std::string& out, std::string_view value) {
  size_t run = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c != '\\' && c != '"' && c != '\n') continue;
    out.append(value.data() + run, i - run);
    out += c == '\n' ? "\\n" : c == '"' ? "\\\"" : "\\\\";
    run = i + 1;
  }
  out.append(value.data() + run, value.size() - run);
}

void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  out += name;
  out += labels;
  out += ' ';
  out += buf;
  out += '\n';
}

void sample(std::string& out, std::string_view name, std::string_view labels, std::uint64_t value) {
  out += name;
  out += labels;
  out += ' ';
  out += std::to_string(value);
  out += '\n';
}

}  // namespace

void append_metric_header(std::string& out, std::string_view name, std::string_view type,
                          std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void LabeledCounter::build_key(std::string& key, const std::string_view* values,
                               size_t count) const {
  key.clear();
  key += '{';
  for (size_t i = 0; i < labels_.size(); ++i) {
    if (i > 0) key += ',';
    key += labels_[i];
    key += "=\"";
    append_escaped(key, i < count ? values[i] : std::string_view());
    key += '"';
  }
  key += '}';
}

void LabeledCounter::add(const std::string_view* values, size_t count, std::uint64_t n) {
  thread_local std::string key;
  build_key(key, values, count);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = series_.find(std::string_view(key));
  if (it != series_.end()) {
    it->second += n;
    return;
  }
  if (series_.size() >= kMaxSeries) {
    std::string other = "{";
    for (size_t i = 0; i < labels_.size(); ++i) {
      if (i > 0) other += ',';
      other += labels_[i] + "=\"other\"";
    }
    other += '}';
    series_[other] += n;
    return;
  }
  series_.emplace(key, n);
}

std::uint64_t LabeledCounter::value(const std::vector<std::string_view>& values) const {
  std::string key;
  build_key(key, values.data(), values.size());
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = series_.find(key);
  return it == series_.end() ? 0 : it->second;
}

void LabeledCounter::render(std::string& out) const {
  append_metric_header(out, name_, "counter", help_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [labels, value] : series_) sample(out, name_, labels, value);
}

void LatencyHistogram::observe(std::uint64_t micros) {
  const double seconds = static_cast<double>(micros) / 1e6;
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(micros, std::memory_order_relaxed);
}

void LatencyHistogram::render(std::string& out, std::string_view name,
                              std::string_view endpoint) const {
  std::uint64_t cumulative = 0;
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i <= kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    char le[32];
    if (i < kBounds.size()) {
      std::snprintf(le, sizeof le, "%g", kBounds[i]);
    } else {
      std::snprintf(le, sizeof le, "+Inf");
    }
    sample(out, bucket, "{endpoint=\"" + std::string(endpoint) + "\",le=\"" + le + "\"}",
           cumulative);
  }
  const std::string labels = "{endpoint=\"" + std::string(endpoint) + "\"}";
  sample(out, std::string(name) + "_sum", labels,
         static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6);
  sample(out, std::string(name) + "_count", labels, count_.load(std::memory_order_relaxed));
}

std::string Metrics::render() const {
  std::string out;
  out.reserve(8192);
  requests.render(out);
  constexpr std::string_view kLatency = "gpuadmit_request_duration_seconds";
  append_metric_header(out, kLatency, "histogram",
                       "Time from a complete request body to the encoded answer, by endpoint.");
  mutate_latency.render(out, kLatency, "mutate");
  validate_latency.render(out, kLatency, "validate");
  violations.render(out);
  findings.render(out);
  mutations.render(out);
  mutation_errors.render(out);
  rejected.render(out);

  append_metric_header(out, "gpuadmit_fast_path_reviews_total", "counter",
                       "AdmissionReview requests answered without cpp-httplib's request handling.");
  sample(out, "gpuadmit_fast_path_reviews_total", "",
         fast_path_reviews.load(std::memory_order_relaxed));
  append_metric_header(out, "gpuadmit_policy_reloads_total", "counter",
                       "Policy reloads by result.");
  sample(out, "gpuadmit_policy_reloads_total", "{result=\"success\"}",
         policy_reload_success.load(std::memory_order_relaxed));
  sample(out, "gpuadmit_policy_reloads_total", "{result=\"failure\"}",
         policy_reload_failure.load(std::memory_order_relaxed));
  append_metric_header(
      out, "gpuadmit_policy_generation", "gauge",
      "Generation of the policy being served: 1 at start, +1 per successful reload.");
  sample(out, "gpuadmit_policy_generation", "", policy_generation.load(std::memory_order_relaxed));
  append_metric_header(out, "gpuadmit_certificate_reloads_total", "counter",
                       "Serving certificate reloads by result.");
  sample(out, "gpuadmit_certificate_reloads_total", "{result=\"success\"}",
         cert_reload_success.load(std::memory_order_relaxed));
  sample(out, "gpuadmit_certificate_reloads_total", "{result=\"failure\"}",
         cert_reload_failure.load(std::memory_order_relaxed));
  append_metric_header(out, "gpuadmit_client_ca_reloads_total", "counter",
                       "Client CA (--client-ca) reloads by result.");
  sample(out, "gpuadmit_client_ca_reloads_total", "{result=\"success\"}",
         client_ca_reload_success.load(std::memory_order_relaxed));
  sample(out, "gpuadmit_client_ca_reloads_total", "{result=\"failure\"}",
         client_ca_reload_failure.load(std::memory_order_relaxed));
  append_metric_header(out, "gpuadmit_certificate_expiry_timestamp_seconds", "gauge",
                       "notAfter of the serving certificate being served, as Unix time.");
  sample(out, "gpuadmit_certificate_expiry_timestamp_seconds", "",
         static_cast<double>(cert_expiry_unix.load(std::memory_order_relaxed)));
  append_metric_header(out, "gpuadmit_ready", "gauge", "1 when /readyz answers 200.");
  sample(out, "gpuadmit_ready", "", std::uint64_t{ready.load() ? 1u : 0u});
  return out;
}

}  // namespace gpuadmit::webhook
