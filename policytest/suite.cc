#include "policytest/suite.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "yaml/reader.h"

namespace gpuadmit::policytest {
namespace {

constexpr std::string_view kApiVersion = "gpuadmit.io/v1alpha1";
constexpr std::string_view kKind = "GPUPolicyTest";
// A suite, or a file one of its cases reads, larger than this is refused unread.
constexpr uintmax_t kMaxFileBytes = 16u << 20;

struct ReadFile {
  std::string text;
  std::string error;  // empty when read
};

ReadFile read_file(const std::string& path) {
  ReadFile r;
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    r.error = "cannot read " + path + ": " + ec.message();
    return r;
  }
  if (size > kMaxFileBytes) {
    r.error = path + " is larger than " + std::to_string(kMaxFileBytes) + " bytes";
    return r;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    r.error = "cannot read " + path;
    return r;
  }
  r.text.resize(size);
  r.text.resize(std::fread(r.text.data(), 1, size, f));
  std::fclose(f);
  return r;
}

// The one document of a YAML or JSON text, read with lint's reader (its document splitter and
// parsers terminate on any input, unlike yaml-cpp 0.7's LoadAll: issue 11).
struct OneDocument {
  yaml::SourceDocument source;
  yaml::ParsedDocument parsed;
  std::string error;  // empty when read
  int error_line = 0;
};

OneDocument read_one_document(std::string_view text, bool json) {
  OneDocument out;
  yaml::DocumentStream stream(text);
  yaml::SourceDocument source;
  bool found = false;
  while (stream.next(source)) {
    if (source.too_large) {
      out.error = "a document is larger than the reader's limit";
      out.error_line = source.first_line;
      return out;
    }
    yaml::ParsedDocument parsed = yaml::parse_document(source, json);
    if (parsed.error) {
      out.error = parsed.error->message;
      out.error_line = parsed.error->line;
      return out;
    }
    if (parsed.empty) continue;
    if (found) {
      out.error = "a second document starts here; the file must hold exactly one";
      out.error_line = parsed.line;
      return out;
    }
    found = true;
    out.source = source;
    out.parsed = std::move(parsed);
  }
  if (!found) out.error = "no document (the file is empty, holds only comments, or is not YAML)";
  return out;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

class Loader {
 public:
  explicit Loader(const std::string& file) : file_(file) {
    base_dir_ = std::filesystem::path(file).parent_path();
  }

  SuiteLoadResult load(std::string_view text) {
    SuiteLoadResult result;
    OneDocument doc = read_one_document(text, false);
    if (!doc.error.empty()) {
      result.errors.push_back(SuiteError{file_, doc.error_line, "", doc.error});
      return result;
    }
    doc_ = &doc;
    Suite suite;
    suite.file = file_;
    read_suite(doc.parsed.value, suite);
    locate();
    if (errors_.empty()) result.suite = std::move(suite);
    result.errors = std::move(errors_);
    return result;
  }

 private:
  void error(const std::string& path, std::string message) {
    errors_.push_back(SuiteError{file_, 0, path, std::move(message)});
  }

  // Every error's line, found in one pass over the document.
  void locate() {
    std::vector<std::string> paths;
    for (const SuiteError& e : errors_) paths.push_back(e.path);
    for (TestCase* c : case_lines_) paths.push_back(case_paths_[c]);
    const std::vector<int> lines = yaml::locate_paths(doc_->source, doc_->parsed, paths);
    for (size_t i = 0; i < errors_.size(); ++i) errors_[i].line = lines[i];
    for (size_t i = 0; i < case_lines_.size(); ++i) {
      case_lines_[i]->line = lines[errors_.size() + i];
    }
  }

  // Unknown members of an object are errors, as in the policy loader.
  bool check_object(const Json& value, const std::string& path,
                    const std::set<std::string_view>& known) {
    if (!value.is_object()) {
      error(path, "must be a mapping");
      return false;
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!known.count(it.key())) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        error(path.empty() ? it.key() : path + "." + it.key(),
              "unknown field " + in_quotes(it.key()) + " (known: " + list + ")");
      }
    }
    return true;
  }

  std::optional<std::string> string_at(const Json& parent, const std::string& path,
                                       std::string_view key, bool required) {
    const Json* v = find_member(parent, key);
    const std::string at = path.empty() ? std::string(key) : path + "." + std::string(key);
    if (v == nullptr || v->is_null()) {
      if (required) error(at, "is required");
      return std::nullopt;
    }
    if (v->is_boolean()) {
      error(at,
            "must be a string (YAML reads an unquoted yes, no, on, off, true, false as a "
            "boolean: quote it)");
      return std::nullopt;
    }
    if (!v->is_string()) {
      error(at, "must be a string");
      return std::nullopt;
    }
    if (v->get_ref<const std::string&>().empty()) {
      error(at, "must not be empty");
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::optional<bool> bool_at(const Json& parent, const std::string& path, std::string_view key) {
    const Json* v = find_member(parent, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      error(path + "." + std::string(key), "must be true or false");
      return std::nullopt;
    }
    return v->get<bool>();
  }

  std::optional<std::vector<std::string>> strings_at(const Json& parent, const std::string& path,
                                                     std::string_view key) {
    const Json* v = find_member(parent, key);
    if (v == nullptr) return std::nullopt;
    const std::string at = path + "." + std::string(key);
    if (!v->is_array()) {
      error(at, "must be a list of strings (empty: none)");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) {
        error(at + "[" + std::to_string(i) + "]", "must be a string");
        continue;
      }
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }

  void read_suite(const Json& root, Suite& suite) {
    if (!check_object(root, "", {"apiVersion", "kind", "metadata", "spec"})) return;
    if (auto v = string_at(root, "", "apiVersion", true); v && *v != kApiVersion) {
      error("apiVersion", "must be " + in_quotes(kApiVersion) + ", got " + in_quotes(*v));
    }
    if (auto v = string_at(root, "", "kind", true); v && *v != kKind) {
      error("kind", "must be " + in_quotes(kKind) + ", got " + in_quotes(*v));
    }
    const Json* metadata = find_member(root, "metadata");
    if (metadata == nullptr) {
      error("metadata", "is required (metadata.name names the suite in reports)");
    } else if (check_object(*metadata, "metadata", {"name"})) {
      suite.name = string_at(*metadata, "metadata", "name", true).value_or("");
    }
    const Json* spec = find_member(root, "spec");
    if (spec == nullptr) {
      error("spec", "is required");
      return;
    }
    if (!check_object(*spec, "spec", {"policy", "cases"})) return;
    if (auto policy = string_at(*spec, "spec", "policy", true)) {
      suite.policy_file = resolve(*policy);
    }
    const Json* cases = find_member(*spec, "cases");
    if (cases == nullptr || !cases->is_array() || cases->empty()) {
      error("spec.cases", "must be a non-empty list of cases");
      return;
    }
    suite.cases.reserve(cases->size());  // case_lines_ points into it
    std::set<std::string> names;
    for (size_t i = 0; i < cases->size(); ++i) {
      const std::string path = "spec.cases[" + std::to_string(i) + "]";
      TestCase c;
      if (!read_case((*cases)[i], path, c)) continue;
      if (!names.insert(c.name).second) {
        error(path + ".name", "duplicate case name " + in_quotes(c.name));
        continue;
      }
      suite.cases.push_back(std::move(c));
      case_lines_.push_back(&suite.cases.back());
      case_paths_[&suite.cases.back()] = path;
    }
  }

  std::string resolve(const std::string& relative) const {
    const std::filesystem::path p(relative);
    return p.is_absolute() ? relative : (base_dir_ / p).lexically_normal().string();
  }

  // The one object of `objectFile` / `reviewFile`.
  std::optional<Json> read_input_file(const std::string& relative, const std::string& path) {
    const std::string file = resolve(relative);
    ReadFile read = read_file(file);
    if (!read.error.empty()) {
      error(path, read.error);
      return std::nullopt;
    }
    const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
    OneDocument doc = read_one_document(read.text, json);
    if (!doc.error.empty()) {
      error(path, file + ":" + std::to_string(doc.error_line) + ": " + doc.error);
      return std::nullopt;
    }
    if (!doc.parsed.value.is_object()) {
      error(path, file + " must hold one mapping");
      return std::nullopt;
    }
    return std::move(doc.parsed.value);
  }

  bool read_case(const Json& value, const std::string& path, TestCase& c) {
    const size_t errors_before = errors_.size();
    if (!check_object(value, path,
                      {"name", "namespace", "operation", "endpoint", "object", "objectFile",
                       "review", "reviewFile", "expect"})) {
      return false;
    }
    c.name = string_at(value, path, "name", true).value_or("");
    const std::optional<std::string> ns = string_at(value, path, "namespace", false);
    const std::optional<std::string> operation = string_at(value, path, "operation", false);
    if (operation && *operation != "CREATE" && *operation != "UPDATE" && *operation != "DELETE" &&
        *operation != "CONNECT") {
      error(path + ".operation",
            "must be CREATE, UPDATE, DELETE or CONNECT, got " + in_quotes(*operation));
    }
    if (auto endpoint = string_at(value, path, "endpoint", false)) {
      if (*endpoint == "validate") {
        c.endpoint = Endpoint::kValidate;
      } else if (*endpoint != "mutate") {
        error(path + ".endpoint", "must be mutate or validate, got " + in_quotes(*endpoint));
      }
    }
    if (!read_case_input(value, path, ns, operation, c)) return false;

    const Json* expect = find_member(value, "expect");
    if (expect == nullptr) {
      error(path,
            "the case asserts nothing: add expect (allowed, rules, warnings, mutations, "
            "unchanged, fields, messageContains, auditAnnotations)");
    } else {
      read_expect(*expect, path + ".expect", c.expect);
    }
    return errors_.size() == errors_before;
  }

  // The case's object or review (exactly one of object, objectFile, review, reviewFile) as the
  // AdmissionReview to answer; false when the case names none or several.
  bool read_case_input(const Json& value, const std::string& path,
                       const std::optional<std::string>& ns,
                       const std::optional<std::string>& operation, TestCase& c) {
    int inputs = 0;
    for (const char* key : {"object", "objectFile", "review", "reviewFile"}) {
      inputs += find_member(value, key) != nullptr;
    }
    if (inputs != 1) {
      error(path, "give exactly one of object, objectFile, review, reviewFile");
      return false;
    }
    std::optional<Json> object, review;
    if (const Json* o = find_member(value, "object")) {
      if (o->is_object())
        object = *o;
      else
        error(path + ".object", "must be a mapping (a Kubernetes object)");
    } else if (auto file = string_at(value, path, "objectFile", false)) {
      object = read_input_file(*file, path + ".objectFile");
    } else if (const Json* r = find_member(value, "review")) {
      if (r->is_object())
        review = *r;
      else
        error(path + ".review", "must be a mapping (an AdmissionReview)");
    } else if (auto file = string_at(value, path, "reviewFile", false)) {
      review = read_input_file(*file, path + ".reviewFile");
    }
    if (review && (ns || operation)) {
      error(path, "namespace and operation come from the review's request; do not set them");
    }
    if (object) c.review = review_of(*object, ns, operation.value_or("CREATE"));
    if (review) c.review = std::move(*review);
    return true;
  }

  // The AdmissionReview the API server would send for the object (request.kind from its
  // apiVersion and kind; the namespace, when not given, is the codec's: metadata.namespace, else
  // "default").
  static Json review_of(const Json& object, const std::optional<std::string>& ns,
                        const std::string& operation) {
    const std::string api_version(string_member(object, "apiVersion"));
    const size_t slash = api_version.find('/');
    Json kind = Json::object();
    kind["group"] = slash == std::string::npos ? "" : api_version.substr(0, slash);
    kind["version"] = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    kind["kind"] = std::string(string_member(object, "kind"));
    Json request = Json::object();
    request["uid"] = "gpuadmit-test";
    request["kind"] = std::move(kind);
    request["operation"] = operation;
    if (ns) request["namespace"] = *ns;
    request["object"] = object;
    if (operation == "UPDATE") request["oldObject"] = object;
    Json review = Json::object();
    review["apiVersion"] = "admission.k8s.io/v1";
    review["kind"] = "AdmissionReview";
    review["request"] = std::move(request);
    return review;
  }

  void read_expect(const Json& value, const std::string& path, Expectation& e) {
    if (!check_object(value, path,
                      {"allowed", "rules", "warnings", "mutations", "unchanged", "fields",
                       "messageContains", "auditAnnotations"})) {
      return;
    }
    e.allowed = bool_at(value, path, "allowed");
    e.rules = strings_at(value, path, "rules");
    e.warnings = strings_at(value, path, "warnings");
    e.mutations = strings_at(value, path, "mutations");
    e.unchanged = bool_at(value, path, "unchanged");
    if (auto messages = strings_at(value, path, "messageContains")) e.message_contains = *messages;
    if (const Json* fields = find_member(value, "fields")) {
      if (!fields->is_object() || fields->empty()) {
        error(path + ".fields", "must be a non-empty mapping of object paths to values");
      } else {
        for (auto it = fields->begin(); it != fields->end(); ++it) {
          e.fields.push_back(FieldExpectation{it.key(), it.value()});
        }
      }
    }
    if (const Json* annotations = find_member(value, "auditAnnotations")) {
      if (!annotations->is_object() || annotations->empty()) {
        error(path + ".auditAnnotations", "must be a non-empty mapping of keys to values");
      } else {
        for (auto it = annotations->begin(); it != annotations->end(); ++it) {
          if (!it.value().is_string()) {
            error(path + ".auditAnnotations." + it.key(), "must be a string");
            continue;
          }
          e.audit_annotations.emplace_back(it.key(), it.value().get<std::string>());
        }
      }
    }
    if (e.empty() && value.empty()) {
      error(path,
            "the case asserts nothing: give at least one of allowed, rules, warnings, "
            "mutations, unchanged, fields, messageContains, auditAnnotations");
    }
  }

  std::string file_;
  std::filesystem::path base_dir_;
  const OneDocument* doc_ = nullptr;
  std::vector<SuiteError> errors_;
  std::vector<TestCase*> case_lines_;
  std::map<TestCase*, std::string> case_paths_;
};

}  // namespace

bool Expectation::empty() const {
  return !allowed && !rules && !warnings && !mutations && !unchanged && fields.empty() &&
         message_contains.empty() && audit_annotations.empty();
}

std::string SuiteError::to_string() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  s += ": ";
  if (!path.empty()) s += path + ": ";
  return s + message;
}

SuiteLoadResult load_suite(std::string_view text, const std::string& file_name) {
  try {
    return Loader(file_name).load(text);
  } catch (const std::exception& e) {
    SuiteLoadResult r;
    r.errors.push_back(
        SuiteError{file_name, 0, "", std::string("cannot read the suite: ") + e.what()});
    return r;
  }
}

SuiteLoadResult load_suite_file(const std::string& path) {
  ReadFile read = read_file(path);
  if (!read.error.empty()) {
    SuiteLoadResult r;
    r.errors.push_back(SuiteError{path, 0, "", read.error});
    return r;
  }
  return load_suite(read.text, path);
}

}  // namespace gpuadmit::policytest
