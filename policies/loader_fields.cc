// The policy reader's errors, node budget and typed field readers (policies/policy_reader.h).

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "engine/join.h"
#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {

namespace {

bool is_identifier(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string child(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}

std::string key_path(const std::string& path, std::string_view key) {
  if (is_identifier(key)) return child(path, key);
  return path + "[" + std::string(key) + "]";
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

bool is_plain(const YAML::Node& node) { return node.Tag() == "?"; }

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return (is_plain(node) ? "" : "string ") + quote(yaml::utf8_from_yaml_cpp(node.Scalar()));
    default:
      return "nothing";
  }
}

void PolicyReader::add(const YAML::Mark& mark, std::string path, std::string message) {
  if (errors_.size() >= kMaxErrors) {
    truncated_ = true;
    return;
  }
  PolicyError e;
  e.path = std::move(path);
  e.message = std::move(message);
  e.file = file_;
  if (!mark.is_null() && mark.line >= 0) {
    e.line = mark.line + 1;  // yaml-cpp marks are 0-based
    e.column = mark.column + 1;
  }
  errors_.push_back(std::move(e));
}

void PolicyReader::add(const YAML::Node& at, std::string path, std::string message) {
  YAML::Mark mark = at.Mark();
  if (at.IsNull()) {
    // yaml-cpp places an empty value at the next token (often the next line): point at its key.
    if (auto it = null_value_keys_.find(mark.pos); it != null_value_keys_.end()) mark = it->second;
  }
  add(mark, std::move(path), std::move(message));
}

void PolicyReader::add_scan_problem(const yaml::YamlProblem& problem) {
  switch (problem.kind) {
    case yaml::YamlProblem::Kind::kSyntax:
      add(problem.mark, "", "invalid YAML: " + problem.message);
      return;
    case yaml::YamlProblem::Kind::kTooManyDocuments:
      add(problem.mark, "",
          "a policy file holds exactly one YAML document; this one has more than " +
              std::to_string(kMaxDocuments) + " (empty ones included)");
      return;
    case yaml::YamlProblem::Kind::kTooManyNodes:
      add(problem.mark, "",
          "the policy has more than " + std::to_string(kMaxNodes) +
              " YAML nodes; it is too large to be a policy, check that this is the right file");
      return;
  }
}

bool PolicyReader::visit(const YAML::Node& node) {
  if (++visited_ <= kMaxNodes) return true;
  if (!budget_reported_) {
    budget_reported_ = true;
    add(node, "",
        "the policy has more than " + std::to_string(kMaxNodes) +
            " YAML nodes once aliases are expanded; it is too large to be a policy "
            "(check for alias bombs)");
  }
  return false;
}

std::optional<MapView> PolicyReader::map(const YAML::Node& node, const std::string& path,
                                         std::initializer_list<std::string_view> allowed) {
  if (!visit(node)) return std::nullopt;
  if (!node.IsMap()) {
    add(node, path, "must be a map, got " + describe(node));
    return std::nullopt;
  }
  MapView view{path, node, {}};
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!visit(it->first)) return std::nullopt;
    if (!it->first.IsScalar()) {
      add(it->first, path, "map keys must be strings, got " + describe(it->first));
      continue;
    }
    const std::string key = yaml::utf8_from_yaml_cpp(it->first.Scalar());
    const std::string field_path = key_path(path, key);
    if (const Field* prev = view.get(key)) {
      add(it->first, field_path,
          "duplicate key " + quote(key) + " (first set at line " +
              std::to_string(prev->key_node.Mark().line + 1) + ")");
      continue;
    }
    if (allowed.size() > 0 && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string message = "unknown field " + quote(key);
      for (std::string_view candidate : allowed) {
        if (edit_distance(candidate, key) <= 2) {
          message += " (did you mean " + quote(candidate) + "?)";
          break;
        }
      }
      add(it->first, field_path, message);
      continue;
    }
    if (it->second.IsNull()) null_value_keys_.emplace(it->second.Mark().pos, it->first.Mark());
    view.fields.push_back(Field{key, it->first, it->second});
  }
  return view;
}

std::optional<MapView> PolicyReader::free_map(const YAML::Node& node, const std::string& path) {
  return map(node, path, {});
}

std::optional<std::vector<YAML::Node>> PolicyReader::list(const YAML::Node& node,
                                                          const std::string& path) {
  if (!visit(node)) return std::nullopt;
  if (!node.IsSequence()) {
    add(node, path, "must be a list, got " + describe(node));
    return std::nullopt;
  }
  std::vector<YAML::Node> items;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!visit(*it)) return std::nullopt;
    items.push_back(*it);
  }
  return items;
}

std::optional<std::string> PolicyReader::string(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    add(node, path, "must be a string, got " + describe(node));
    return std::nullopt;
  }
  return yaml::utf8_from_yaml_cpp(node.Scalar());  // yaml-cpp 0.7 writes \_ and \N as Latin-1
}

std::optional<std::string> PolicyReader::nonempty_string(const YAML::Node& node,
                                                         const std::string& path) {
  auto s = string(node, path);
  if (s && s->empty()) {
    add(node, path, "must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> PolicyReader::integer(const YAML::Node& node, const std::string& path) {
  const std::string bad = "must be an integer, got " + describe(node);
  if (!node.IsScalar() || !(is_plain(node) || node.Tag() == "tag:yaml.org,2002:int")) {
    add(node, path, bad);
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || !std::all_of(s.begin() + i, s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    add(node, path, bad);
    return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE) {
    add(node, path, "integer " + s + " is out of range");
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

std::optional<int64_t> PolicyReader::count(const YAML::Node& node, const std::string& path,
                                           int64_t min) {
  auto v = integer(node, path);
  if (!v) return std::nullopt;
  if (*v < 0) {
    add(node, path, "must not be negative, got " + std::to_string(*v));
    return std::nullopt;
  }
  if (*v < min) {
    add(node, path, "must be at least " + std::to_string(min) + ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> PolicyReader::boolean(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && (is_plain(node) || node.Tag() == "tag:yaml.org,2002:bool")) {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  add(node, path, "must be true or false, got " + describe(node));
  return std::nullopt;
}

std::optional<std::string> PolicyReader::one_of(const YAML::Node& node, const std::string& path,
                                                const std::vector<std::string_view>& values) {
  auto s = string(node, path);
  if (!s) return std::nullopt;
  if (std::find(values.begin(), values.end(), *s) == values.end()) {
    add(node, path, "invalid value " + quote(*s) + ": must be one of " + gpuadmit::join(values));
    return std::nullopt;
  }
  return s;
}

std::optional<Action> PolicyReader::action(const YAML::Node& node, const std::string& path,
                                           const std::vector<std::string_view>& allowed) {
  auto s = one_of(node, path, allowed);
  if (!s) return std::nullopt;
  if (*s == "fix") return Action::kFix;
  if (*s == "deny") return Action::kDeny;
  if (*s == "warn") return Action::kWarn;
  if (*s == "off") return Action::kOff;
  return Action::kStrip;
}

std::optional<Quantity> PolicyReader::quantity(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    add(node, path,
        "must be a quantity such as \"4\", \"500m\" or \"16Gi\", got " + describe(node));
    return std::nullopt;
  }
  auto q = Quantity::parse(node.Scalar());
  if (!q) {
    add(node, path,
        "invalid quantity " + quote(node.Scalar()) +
            ": must be a Kubernetes quantity such as \"4\", \"500m\" or \"16Gi\"");
    return std::nullopt;
  }
  if (q->is_negative()) {
    add(node, path, "must not be negative, got " + quote(node.Scalar()));
    return std::nullopt;
  }
  return q;
}

std::vector<std::string> PolicyReader::patterns(const YAML::Node& node, const std::string& path) {
  std::vector<std::string> out;
  auto items = list(node, path);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string p = index_path(path, i);
    auto s = string((*items)[i], p);
    if (!s) continue;
    RE2 re(*s, RE2::Quiet);
    if (!re.ok()) {
      add((*items)[i], p, "invalid regular expression " + quote(*s) + ": " + re.error());
      continue;
    }
    out.push_back(*s);
  }
  return out;
}

std::vector<Ref> PolicyReader::names(const YAML::Node& node, const std::string& path) {
  std::vector<Ref> out;
  auto items = list(node, path);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string p = index_path(path, i);
    if (auto s = nonempty_string((*items)[i], p)) out.push_back(Ref{p, (*items)[i].Mark(), *s});
  }
  return out;
}

void PolicyReader::missing(const MapView& m, std::string_view key) {
  add(m.node, child(m.path, key), "required field is missing");
}

bool PolicyReader::is_dns_subdomain(std::string_view s, size_t max) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > max || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

}  // namespace gpuadmit::policy_reader
