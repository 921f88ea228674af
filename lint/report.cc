#include "lint/report.h"

#include "lint/explain.h"
#include "xml/escape.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <system_error>

namespace gpuadmit::lint {
namespace {

constexpr auto kReplace = Json::error_handler_t::replace;

void put(std::FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

std::string dump(const Json& j, int indent = -1) { return j.dump(indent, ' ', false, kReplace); }

std::string object_label(const LintFinding& f) {
  if (f.kind.empty()) return {};
  std::string label = f.kind + " ";
  if (!f.ns.empty()) label += f.ns + "/";
  label += f.name.empty() ? std::string("(unnamed)") : f.name;
  return label;
}

// ---------------------------------------------------------------------------------------------
// text

class TextReporter final : public Reporter {
 public:
  TextReporter(std::FILE* out, bool color, std::optional<Json> explain)
      : out_(out), color_(color), explain_(std::move(explain)) {}

  void begin_file(const std::string& file) override {
    file_ = file;
    lines_.clear();
  }
  void object(const ObjectResult& result) override {
    for (const LintFinding& f : result.findings) add(f);
  }
  void end_file(const std::string&) override {
    if (lines_.empty()) return;
    put(out_, paint("1", file_) + "\n" + lines_ + "\n");
  }
  void namespace_result(const NamespaceQuotaResult& result) override {
    if (!result.finding) return;
    const LintFinding& f = *result.finding;
    quota_lines_ += "  " + f.file + ":" + std::to_string(f.line) + "  " + severity(f.severity) +
                    "  " + f.rule + "  " + f.message + "\n";
  }
  void end(const LintSummary& s) override {
    if (!quota_lines_.empty())
      put(out_, paint("1", "namespace GPU quotas") + "\n" + quota_lines_ + "\n");
    std::string line = std::to_string(s.deny) + " deny, " + std::to_string(s.warn) + " warn, " +
                       std::to_string(s.errors) + " error" + (s.errors == 1 ? "" : "s") + " in " +
                       std::to_string(s.documents) + " document" + (s.documents == 1 ? "" : "s") +
                       " (" + std::to_string(s.workloads) + " workload" +
                       (s.workloads == 1 ? "" : "s") + ") from " + std::to_string(s.files) +
                       " file" + (s.files == 1 ? "" : "s");
    if (s.fixable > 0) {
      line += "; " + std::to_string(s.fixable) + " would be changed by the webhook (see --fix)";
    }
    const char* code = s.exit_code() == 0 ? "32" : "31";
    put(out_, paint(code, line) + "\n");
  }

 private:
  std::string paint(const char* code, const std::string& text) const {
    return color_ ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
  }
  std::string severity(Severity s) const {
    switch (s) {
      case Severity::kDeny:
        return paint("31", "deny ");
      case Severity::kWarn:
        return paint("33", "warn ");
      case Severity::kError:
        return paint("35", "error");
    }
    return "deny ";
  }
  void add(const LintFinding& f) {
    std::string label = object_label(f);
    lines_ += "  " + std::to_string(f.line) + ":  " + severity(f.severity) + "  " + f.rule + "  " +
              (label.empty() ? std::string() : label + ": ") + f.message;
    if (!f.path.empty()) lines_ += " " + paint("2", "[" + f.path + "]");
    lines_ += "\n";
    if (explain_) lines_ += "      because: " + explain_text(*explain_, f.policy_path) + "\n";
  }

  std::FILE* out_;
  bool color_;
  std::optional<Json> explain_;
  std::string file_;
  std::string lines_;  // one file's findings
  std::string quota_lines_;
};

// ---------------------------------------------------------------------------------------------
// json

class JsonReporter final : public Reporter {
 public:
  JsonReporter(std::FILE* out, bool explain) : out_(out), explain_(explain) {
    put(out_, "{\"findings\": [");
  }

  void object(const ObjectResult& result) override {
    for (const LintFinding& f : result.findings) add(f);
  }
  void namespace_result(const NamespaceQuotaResult& result) override {
    if (result.finding) add(*result.finding);
  }
  void end(const LintSummary& s) override {
    Json summary = {{"documents", s.documents}, {"workloads", s.workloads}, {"deny", s.deny},
                    {"warn", s.warn},           {"errors", s.errors},       {"fixable", s.fixable},
                    {"files", s.files}};
    put(out_, std::string(first_ ? "" : "\n") + "],\n\"summary\": " + dump(summary) + "}\n");
  }

 private:
  void add(const LintFinding& f) {
    Json json = finding_json(f);
    if (explain_) json["policyPath"] = f.policy_path;
    put(out_, std::string(first_ ? "\n" : ",\n") + dump(json));
    first_ = false;
  }
  std::FILE* out_;
  bool explain_;
  bool first_ = true;
};

// ---------------------------------------------------------------------------------------------
// sarif

std::string sarif_level(Severity s) { return s == Severity::kWarn ? "warning" : "error"; }

// FNV-1a: a fingerprint that survives line moves (GitHub matches alerts across commits by it).
std::string fingerprint(const LintFinding& f) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* part : {&f.rule, &f.file, &f.kind, &f.ns, &f.name, &f.path}) {
    for (unsigned char c : *part) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

class SarifReporter final : public Reporter {
 public:
  SarifReporter(std::FILE* out, const ReportOptions& options) : out_(out) {
    std::error_code ec;
    base_dir_ = std::filesystem::current_path(ec).string();
    Json rules = Json::array();
    for (const RuleInfo& r : options.rules) {
      index_[r.id] = rules.size();
      rules.push_back({{"id", r.id},
                       {"name", r.name},
                       {"shortDescription", {{"text", r.summary}}},
                       {"fullDescription", {{"text", r.summary}}},
                       {"help",
                        {{"text", r.summary + ". See docs/lint.md and SPEC §5."},
                         {"markdown", "**" + r.id + "**: " + r.summary}}},
                       {"defaultConfiguration", {{"level", sarif_level(r.default_severity)}}},
                       {"properties", {{"tags", {"kubernetes", "gpu"}}}}});
    }
    Json driver = {{"name", "gpuadmit"},
                   {"informationUri", "https://github.com/gpuadmit/gpuadmit"},
                   {"version", options.version.empty() ? std::string("0.0.0") : options.version},
                   {"rules", rules}};
    put(out_,
        "{\n\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
        "\"version\": \"2.1.0\",\n\"runs\": [{\n\"tool\": {\"driver\": " +
            dump(driver) + "},\n\"columnKind\": \"utf16CodeUnits\",\n\"results\": [");
  }

  void object(const ObjectResult& result) override {
    for (const LintFinding& f : result.findings) add(f);
  }
  void namespace_result(const NamespaceQuotaResult& result) override {
    if (result.finding) add(*result.finding);
  }
  void end(const LintSummary& s) override {
    Json invocation = {{"executionSuccessful", !s.input_error}};
    put(out_, std::string(first_ ? "" : "\n") + "],\n\"invocations\": [" + dump(invocation) +
                  "]\n}]\n}\n");
  }

 private:
  void add(const LintFinding& f) {
    Json location = {{"physicalLocation",
                      {{"artifactLocation", {{"uri", sarif_uri(f.file, base_dir_)}}},
                       {"region", {{"startLine", f.line > 0 ? f.line : 1}}}}}};
    if (!f.kind.empty()) {
      location["logicalLocations"] = Json::array(
          {{{"name", f.name}, {"fullyQualifiedName", object_label(f)}, {"kind", "resource"}}});
    }
    std::string text = f.message;
    if (!f.path.empty()) text += " (at " + f.path + ")";
    Json result = {{"ruleId", f.rule},
                   {"level", sarif_level(f.severity)},
                   {"message", {{"text", text}}},
                   {"locations", Json::array({location})},
                   {"partialFingerprints", {{"gpuadmitFinding/v1", fingerprint(f)}}}};
    auto it = index_.find(f.rule);
    if (it != index_.end()) result["ruleIndex"] = it->second;
    put(out_, std::string(first_ ? "\n" : ",\n") + dump(result));
    first_ = false;
  }

  std::FILE* out_;
  bool first_ = true;
  std::map<std::string, size_t> index_;
  std::string base_dir_;  // absolute paths under it are written relative to it
};

// ---------------------------------------------------------------------------------------------
// junit

std::string finding_line(const LintFinding& f) {
  std::string s = f.file + ":" + std::to_string(f.line) + ": " +
                  std::string(severity_name(f.severity)) + " " + f.rule + ": " + f.message;
  if (!f.path.empty()) s += " [" + f.path + "]";
  return s;
}

class JunitReporter final : public Reporter {
 public:
  explicit JunitReporter(std::FILE* out) : out_(out), spool_(std::tmpfile()) {}
  ~JunitReporter() override {
    if (spool_ != nullptr) std::fclose(spool_);
  }

  void begin_file(const std::string& file) override {
    file_ = file;
    suite_.clear();
    suite_tests_ = suite_failures_ = suite_errors_ = 0;
  }
  void object(const ObjectResult& r) override {
    std::string name;
    if (r.unreadable) {
      name = "document at line " + std::to_string(r.line);
    } else {
      name = r.kind + " " + r.ns + "/" + (r.name.empty() ? "(unnamed)" : r.name) + " (line " +
             std::to_string(r.line) + ")";
    }
    std::string failures, warnings, types;
    for (const LintFinding& f : r.findings) {
      if (f.severity == Severity::kWarn) {
        warnings += finding_line(f) + "\n";
      } else {
        failures += finding_line(f) + "\n";
        if (types.find(f.rule) == std::string::npos) types += (types.empty() ? "" : ",") + f.rule;
      }
    }
    ++suite_tests_;
    suite_ += "    <testcase classname=\"" + xml::escape(file_) + "\" name=\"" + xml::escape(name) +
              "\">\n";
    if (r.unreadable) {
      ++suite_errors_;
      suite_ += "      <error type=\"PARSE\" message=\"" + xml::escape(r.findings.front().message) +
                "\">" + xml::escape(failures) + "</error>\n";
    } else if (!failures.empty()) {
      ++suite_failures_;
      suite_ += "      <failure type=\"" + xml::escape(types) + "\" message=\"" +
                xml::escape(first_failure(r)) + "\">" + xml::escape(failures) + "</failure>\n";
    }
    if (!warnings.empty())
      suite_ += "      <system-out>" + xml::escape(warnings) + "</system-out>\n";
    suite_ += "    </testcase>\n";
  }
  void end_file(const std::string&) override { flush_suite(file_); }
  void namespace_result(const NamespaceQuotaResult& r) override {
    if (!in_quota_suite_) {
      begin_file("namespace GPU quotas");
      in_quota_suite_ = true;
    }
    ++suite_tests_;
    const std::string name = "namespace " + r.ns + ": " + std::to_string(r.total) + " of " +
                             std::to_string(r.quota) + " GPUs (tenant " + r.tenant + ")";
    suite_ +=
        "    <testcase classname=\"namespace GPU quotas\" name=\"" + xml::escape(name) + "\">\n";
    if (r.finding && r.finding->severity != Severity::kWarn) {
      ++suite_failures_;
      suite_ += "      <failure type=\"GPU013\" message=\"" + xml::escape(r.finding->message) +
                "\">" + xml::escape(finding_line(*r.finding)) + "</failure>\n";
    } else if (r.finding) {
      suite_ += "      <system-out>" + xml::escape(finding_line(*r.finding)) + "</system-out>\n";
    }
    suite_ += "    </testcase>\n";
  }
  void end(const LintSummary&) override {
    if (in_quota_suite_) flush_suite("namespace GPU quotas");
    put(out_,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpuadmit lint\" tests=\"" +
            std::to_string(tests_) + "\" failures=\"" + std::to_string(failures_) + "\" errors=\"" +
            std::to_string(errors_) + "\" skipped=\"0\">\n");
    if (spool_ != nullptr) {
      std::rewind(spool_);
      char buf[1 << 16];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, spool_)) > 0) std::fwrite(buf, 1, n, out_);
    } else {
      put(out_, held_);
    }
    put(out_, "</testsuites>\n");
  }

 private:
  // "GPU001: message" of the first deny/error finding (warnings may come before it).
  static std::string first_failure(const ObjectResult& r) {
    for (const LintFinding& f : r.findings) {
      if (f.severity != Severity::kWarn) return f.rule + ": " + f.message;
    }
    return {};
  }
  void flush_suite(const std::string& name) {
    if (suite_tests_ == 0) return;
    tests_ += suite_tests_;
    failures_ += suite_failures_;
    errors_ += suite_errors_;
    const std::string text =
        "  <testsuite name=\"" + xml::escape(name) + "\" tests=\"" + std::to_string(suite_tests_) +
        "\" failures=\"" + std::to_string(suite_failures_) + "\" errors=\"" +
        std::to_string(suite_errors_) + "\" skipped=\"0\">\n" + suite_ + "  </testsuite>\n";
    if (spool_ != nullptr) {
      std::fwrite(text.data(), 1, text.size(), spool_);
    } else {
      held_ += text;  // no temporary file available: hold it in memory
    }
    suite_.clear();
    suite_tests_ = 0;
  }

  std::FILE* out_;
  std::FILE* spool_;
  std::string held_;
  std::string file_, suite_;
  size_t suite_tests_ = 0, suite_failures_ = 0, suite_errors_ = 0;
  size_t tests_ = 0, failures_ = 0, errors_ = 0;
  bool in_quota_suite_ = false;
};

}  // namespace

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  if (name == "text") return OutputFormat::kText;
  if (name == "json") return OutputFormat::kJson;
  if (name == "sarif") return OutputFormat::kSarif;
  if (name == "junit") return OutputFormat::kJunit;
  return std::nullopt;
}

Json finding_json(const LintFinding& f) {
  return {{"file", f.file},
          {"line", f.line},
          {"apiVersion", f.api_version},
          {"kind", f.kind},
          {"namespace", f.ns},
          {"name", f.name},
          {"rule", f.rule},
          {"severity", std::string(severity_name(f.severity))},
          {"message", f.message},
          {"path", f.path},
          {"documentLine", f.document_line}};
}

std::string sarif_uri(std::string_view path, std::string_view base_dir) {
  while (base_dir.size() > 1 && base_dir.back() == '/') base_dir.remove_suffix(1);
  // No `.` or `..` segments (SARIF1002: with symbolic links they may not mean what they say): a
  // path is made whole against the base folder, then normalised lexically.
  std::filesystem::path whole(path);
  if (whole.is_relative() && !base_dir.empty()) whole = std::filesystem::path(base_dir) / whole;
  std::string p = path == "<stdin>" ? std::string(path) : whole.lexically_normal().generic_string();
  if (!base_dir.empty() && base_dir != "/" && p.size() > base_dir.size() + 1 &&
      p.compare(0, base_dir.size(), base_dir) == 0 && p[base_dir.size()] == '/') {
    p.erase(0, base_dir.size() + 1);
  }
  for (char& c : p) {
    if (c == '\\') c = '/';
  }
  while (p.size() > 2 && p[0] == '.' && p[1] == '/') p.erase(0, 2);
  std::string out = !p.empty() && p[0] == '/' ? "file://" : "";
  static const char* kHex = "0123456789ABCDEF";
  for (unsigned char c : p) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        std::string_view("-._~/").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (path == "<stdin>") return "stdin";
  return out;
}

std::unique_ptr<Reporter> make_reporter(OutputFormat format, std::FILE* out,
                                        ReportOptions options) {
  switch (format) {
    case OutputFormat::kText:
      return std::make_unique<TextReporter>(out, options.color, std::move(options.explain_policy));
    case OutputFormat::kJson:
      return std::make_unique<JsonReporter>(out, options.explain_policy.has_value());
    case OutputFormat::kSarif:
      return std::make_unique<SarifReporter>(out, options);
    case OutputFormat::kJunit:
      return std::make_unique<JunitReporter>(out);
  }
  return nullptr;
}

}  // namespace gpuadmit::lint
