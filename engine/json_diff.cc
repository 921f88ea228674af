#include "engine/json_diff.h"

#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json_dump.h"

namespace gpuadmit {
namespace {

// One walk over both trees; operations are appended to `ops_` in Json::diff's order. The path
// of the current node is kept as a stack of tokens and spelled out (RFC 6901) only for an
// operation, so that walking the equal parts builds no strings.
class Differ {
 public:
  Differ(PatchForm form, Json& ops, std::string& text)
      : with_patch_(form != PatchForm::kNone),
        text_form_(form == PatchForm::kText),
        ops_(ops),
        text_(text) {
    path_.reserve(16);  // deeper than a pod's members: no regrowth on the way down
  }

  // Returns whether source == target (nlohmann's operator==); clears reproduces_ when the patch
  // applied to this subtree would not come out equal to target.
  bool walk(const Json& source, const Json& target) {
    // A mutation skeleton's placeholder (engine/mutation_skeleton.h): a member no mutator wrote.
    if (source.is_discarded()) return true;
    if (source.type() != target.type() || !source.is_structured()) {
      // Different types compare equal only as numbers (1 == 1.0), and then Json::diff emits
      // nothing either.
      if (source == target) return true;
      if (with_patch_) emit_value("replace", target);
      return false;
    }
    return source.is_array() ? walk_array(source, target) : walk_object(source, target);
  }

  bool reproduces() const { return reproduces_; }

 private:
  bool walk_array(const Json& source, const Json& target) {
    const Json::array_t& s = source.get_ref<const Json::array_t&>();
    const Json::array_t& t = target.get_ref<const Json::array_t&>();
    bool equal = s.size() == t.size();
    const size_t length = path_.size();
    size_t i = 0;
    for (; i < s.size() && i < t.size(); ++i) {
      if (with_patch_) append_index(i);
      if (!walk(s[i], t[i])) equal = false;
      if (with_patch_) path_.pop_back();
    }
    if (!with_patch_) return equal;
    // Json::diff inserts the removals in reverse order (highest index first).
    for (size_t k = s.size(); k > i; --k) {
      append_index(k - 1);
      emit("remove");
      path_.resize(length);
    }
    for (; i < t.size(); ++i) {
      path_.push_back(Token{nullptr, 0, true});
      emit_value("add", t[i]);
      path_.resize(length);
    }
    return equal;
  }

  bool walk_object(const Json& source, const Json& target) {
    const Json::object_t& s = source.get_ref<const Json::object_t&>();
    const Json::object_t& t = target.get_ref<const Json::object_t&>();
    bool equal = s.size() == t.size();
    const size_t length = path_.size();
    // Json::patch keeps the source's keys in place and appends added keys: the result has
    // target's key order only when the k-th kept key (in source order) is target's k-th key.
    size_t kept = 0;
    bool in_order = true;
    for (auto it = s.begin(); it != s.end(); ++it) {
      auto found = kept < t.size() && (t.begin() + kept)->first == it->first ? t.begin() + kept
                                                                             : t.find(it->first);
      if (with_patch_) append_key(it->first);
      if (found == t.end()) {
        equal = false;
        if (with_patch_) emit("remove");
      } else {
        if (found != t.begin() + kept) {
          in_order = false;
          equal = false;
        }
        ++kept;
        if (!walk(it->second, found->second)) equal = false;
      }
      if (with_patch_) path_.pop_back();
    }
    if (!in_order) reproduces_ = false;
    if (kept == t.size()) return equal;
    equal = false;
    if (!with_patch_) return equal;
    // The keys of target that source lacks, in target order. In order, they are target's keys
    // after the kept ones; otherwise each is looked up.
    for (auto it = in_order ? t.begin() + kept : t.begin(); it != t.end(); ++it) {
      if (!in_order && s.find(it->first) != s.end()) continue;
      append_key(it->first);
      emit_value("add", it->second);
      path_.resize(length);
    }
    return equal;
  }

  void append_index(size_t i) { path_.push_back(Token{nullptr, i, false}); }
  void append_key(const std::string& key) { path_.push_back(Token{&key, 0, false}); }

  // The RFC 6901 path of the current node, appended to `out`.
  void append_path(std::string& out) const {
    for (const Token& t : path_) {
      out += '/';
      if (t.append) {
        out += '-';
      } else if (t.key == nullptr) {
        char digits[24];
        const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, t.index);
        out.append(digits, end);
      } else {
        append_pointer_token(out, *t.key);
      }
    }
  }

  std::string path() const {
    std::string out;
    append_path(out);
    return out;
  }

  // {"op", "path"[, "value"]}, in that order, emplaced: no key lookups, no temporaries.
  void emit(const char* op, const Json* value = nullptr) {
    if (text_form_) {
      // The bytes dump_json writes for the same operation object.
      using namespace std::string_view_literals;
      if (text_.size() > 1) text_.push_back(',');
      text_.append(R"({"op":")"sv);
      text_.append(op);
      text_.append(R"(","path":)"sv);
      // Spelled out in place; quoted as dump_json would, escapes and all, should a key need it.
      const size_t start = text_.size();
      text_ += '"';
      append_path(text_);
      if (needs_json_escape(std::string_view(text_).substr(start + 1))) {
        const std::string raw = text_.substr(start + 1);
        text_.resize(start);
        append_json_string(text_, raw);
      } else {
        text_ += '"';
      }
      if (value != nullptr) {
        text_.append(R"(,"value":)"sv);
        append_json(text_, *value);
      }
      text_ += '}';
      return;
    }
    Json o = empty_object();
    Json::object_t& members = o.get_ref<Json::object_t&>();
    members.reserve(value != nullptr ? 3 : 2);
    members.emplace_back("op", op);
    members.emplace_back("path", path());
    if (value != nullptr) members.emplace_back("value", *value);
    ops_.push_back(std::move(o));
  }

  void emit_value(const char* op, const Json& value) { emit(op, &value); }

  bool with_patch_;
  bool text_form_;
  Json& ops_;
  std::string& text_;
  struct Token {
    const std::string* key;  // an object member, else an array index
    size_t index;
    bool append;  // "-": the end of an array
  };
  std::vector<Token> path_;
  bool reproduces_ = true;
};

}  // namespace

JsonDiff json_diff(const Json& source, const Json& target, PatchForm form) {
  JsonDiff d;
  if (form == PatchForm::kText) d.patch_text.push_back('[');
  Differ differ(form, d.patch, d.patch_text);
  d.equal = differ.walk(source, target);
  d.reproduces = differ.reproduces();
  if (form == PatchForm::kText) d.patch_text.push_back(']');
  return d;
}

}  // namespace gpuadmit
