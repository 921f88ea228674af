#include "policytest/runner.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/admission.h"
#include "mutators/all_mutators.h"
#include "rules/all_rules.h"
#include "yaml/reader.h"

namespace gpuadmit::policytest {
namespace {

std::string list_text(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& s : items) out += (out.size() > 1 ? ", " : "") + s;
  return out + "]";
}

std::vector<std::string> sorted_unique(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  return items;
}

void check_set(std::vector<std::string>& failures, std::string_view what,
               const std::optional<std::vector<std::string>>& want,
               const std::vector<std::string>& got) {
  if (!want) return;
  const std::vector<std::string> w = sorted_unique(*want), g = sorted_unique(got);
  if (w != g) {
    failures.push_back(std::string(what) + ": got " + list_text(g) + ", want " + list_text(w));
  }
}

// Values compare as JSON with sorted keys: the order in which a suite writes a mapping does not
// matter (Json objects keep their key order and compare it).
bool same_value(const Json& a, const Json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

struct Answer {
  const Json* response = nullptr;  // the AdmissionResponse
  Json patched;                    // the object with the patch applied
  bool patched_ok = true;
  std::string patch_error;
  size_t patch_operations = 0;
  std::vector<std::string> rules, warning_rules, mutations, messages;
};

Answer read_answer(const TestCase& test, const AdmissionOutcome& outcome) {
  Answer a;
  a.response = &outcome.response["response"];
  const Json* request = find_member(test.review, "request");
  const Json* object = request != nullptr ? find_member(*request, "object") : nullptr;
  a.patched = object != nullptr ? *object : Json();
  if (const Json* patch = find_member(*a.response, "patch")) {
    // As the API server applies it: base64 → JSON Patch → applied to the object.
    std::optional<std::string> text = base64_decode(patch->get<std::string>());
    try {
      const Json ops = Json::parse(text.value_or(""));
      a.patch_operations = ops.size();
      a.patched = a.patched.patch(ops);
    } catch (const std::exception& e) {
      a.patched_ok = false;
      a.patch_error = e.what();
    }
  }
  for (const Finding& f : outcome.evaluation.findings) {
    a.rules.push_back(f.rule);
    if (f.severity == Severity::kWarn) a.warning_rules.push_back(f.rule);
  }
  if (const Json* audit = find_member(*a.response, "auditAnnotations")) {
    a.mutations = split_commas(string_member(*audit, "mutations"));
  }
  if (const Json* status = find_member(*a.response, "status")) {
    a.messages.emplace_back(string_member(*status, "message"));
  }
  if (const Json* warnings = find_member(*a.response, "warnings")) {
    for (const Json& w : *warnings) a.messages.push_back(w.get<std::string>());
  }
  return a;
}

void check_fields(const Expectation& e, const Answer& a, std::vector<std::string>& failures) {
  for (const FieldExpectation& field : e.fields) {
    const Json* got = find_path(a.patched, field.path);
    const bool absent = got == nullptr || got->is_null();
    if (field.value.is_null()) {
      if (!absent)
        failures.push_back("fields: " + field.path + ": got " + got->dump() + ", want absent");
    } else if (absent) {
      failures.push_back("fields: " + field.path + ": absent, want " + field.value.dump());
    } else if (!same_value(*got, field.value)) {
      failures.push_back("fields: " + field.path + ": got " + got->dump() + ", want " +
                         field.value.dump());
    }
  }
}

void check_answer(const Expectation& e, const Answer& a, std::vector<std::string>& failures) {
  const bool allowed = a.response->value("allowed", false);
  if (e.allowed && *e.allowed != allowed) {
    std::string why = std::string("allowed: got ") + (allowed ? "true" : "false") + ", want " +
                      (*e.allowed ? "true" : "false");
    if (!allowed && !a.messages.empty()) why += " (" + a.messages.front() + ")";
    failures.push_back(why);
  }
  check_set(failures, "rules", e.rules, a.rules);
  check_set(failures, "warnings", e.warnings, a.warning_rules);
  check_set(failures, "mutations", e.mutations, a.mutations);
  const bool has_patch = find_member(*a.response, "patch") != nullptr;
  if (e.unchanged && *e.unchanged && has_patch) {
    failures.push_back("unchanged: got a patch of " + std::to_string(a.patch_operations) +
                       " operations, want none");
  }
  if (e.unchanged && !*e.unchanged && !has_patch) {
    failures.push_back("unchanged: got no patch, want one");
  }
  if (!a.patched_ok) failures.push_back("the response's patch does not apply: " + a.patch_error);
  check_fields(e, a, failures);
  for (const std::string& text : e.message_contains) {
    const bool found = std::any_of(a.messages.begin(), a.messages.end(), [&](const std::string& m) {
      return m.find(text) != std::string::npos;
    });
    if (!found) {
      failures.push_back("messageContains: \"" + text +
                         "\" is in neither the denial message nor a warning");
    }
  }
  const Json* audit = find_member(*a.response, "auditAnnotations");
  for (const auto& [key, want] : e.audit_annotations) {
    const Json* got = audit != nullptr ? find_member(*audit, key) : nullptr;
    if (got == nullptr) {
      failures.push_back("auditAnnotations." + key + ": absent, want \"" + want + "\"");
    } else if (*got != want) {
      failures.push_back("auditAnnotations." + key + ": got " + got->dump() + ", want \"" + want +
                         "\"");
    }
  }
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = base64_value(c)) < 0) return std::nullopt;
    }
    const uint32_t n =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += char((n >> 16) & 0xFF);
    if (pad < 2) out += char((n >> 8) & 0xFF);
    if (pad < 1) out += char(n & 0xFF);
  }
  return out;
}

const Json* find_path(const Json& root, std::string_view dotted_path) {
  const Json* node = &root;
  for (const std::string& token : yaml::split_dotted_path(dotted_path)) {
    if (node->is_object()) {
      node = find_member(*node, token);
    } else if (node->is_array()) {
      if (token.empty() || !std::all_of(token.begin(), token.end(), ::isdigit) ||
          token.size() > 9 || std::stoul(token) >= node->size()) {
        return nullptr;
      }
      node = &(*node)[std::stoul(token)];
    } else {
      return nullptr;
    }
    if (node == nullptr) return nullptr;
  }
  return node;
}

CaseResult run_case(const TestCase& test, const Pipeline& pipeline, const CompiledPolicy& policy) {
  CaseResult result;
  result.name = test.name;
  result.line = test.line;
  const AdmissionResult answer =
      handle_admission_review(test.review, test.endpoint, pipeline, policy);
  if (answer.error) {
    result.failures.push_back("the review is refused (HTTP 400): " + answer.error->message);
    return result;
  }
  check_answer(test.expect, read_answer(test, *answer.outcome), result.failures);
  return result;
}

size_t SuiteOutcome::failed() const {
  return std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) { return !c.passed(); });
}

SuiteRunner::SuiteRunner() : pipeline_(default_mutators(), default_rules()) {}

SuiteOutcome SuiteRunner::run_file(const std::string& file) {
  SuiteOutcome outcome;
  outcome.file = file;
  outcome.name = file;
  SuiteLoadResult loaded = load_suite_file(file);
  if (!loaded.suite) {
    outcome.errors = std::move(loaded.errors);
    return outcome;
  }
  const Suite& suite = *loaded.suite;
  outcome.name = suite.name;
  auto it = policies_.find(suite.policy_file);
  if (it == policies_.end()) {
    it = policies_.emplace(suite.policy_file, load_compiled_policy(suite.policy_file)).first;
  }
  if (!it->second.policy) {
    for (const PolicyError& e : it->second.errors) {
      outcome.errors.push_back(SuiteError{file, 0, "spec.policy", e.to_string()});
    }
    return outcome;
  }
  for (const TestCase& test : suite.cases) {
    outcome.cases.push_back(run_case(test, pipeline_, *it->second.policy));
  }
  return outcome;
}

std::vector<std::string> find_suite_files(const std::vector<std::string>& paths,
                                          std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_regular_file(ec) && name.size() > 10 &&
            name.compare(name.size() - 10, 10, ".test.yaml") == 0) {
          found.push_back(it->path().string());
        }
      }
      if (ec) errors.push_back(path + ": " + ec.message());
      if (found.empty() && !ec) errors.push_back(path + ": no *.test.yaml suite in this folder");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      errors.push_back(path + ": no such file or folder");
    }
  }
  return files;
}

}  // namespace gpuadmit::policytest
