#include "cli/args.h"

#include <cstdio>
#include <iostream>

namespace gpuadmit::cli {

std::optional<std::string> Args::parse(const std::vector<std::string>& argv,
                                       const std::set<std::string>& value_flags,
                                       const std::set<std::string>& bool_flags, Args& out) {
  bool only_positional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (!only_positional && (arg == "-h" || arg == "--help")) {
      out.help_ = true;
      return std::nullopt;
    }
    if (only_positional || arg == "-" || arg.rfind("--", 0) != 0) {
      out.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (value_flags.count(name)) {
      if (inline_value) {
        out.values_.emplace(name, *inline_value);
      } else if (i + 1 < argv.size()) {
        out.values_.emplace(name, argv[++i]);
      } else {
        return "flag --" + name + " needs a value";
      }
    } else if (bool_flags.count(name) && !inline_value) {
      out.bools_.insert(name);
    } else {
      return "unknown flag --" + name;
    }
  }
  return std::nullopt;
}

int print_usage(const char* usage) {
  std::fputs(usage, stdout);
  return 0;
}

int usage_error(const char* command, const char* usage, const std::string& message) {
  std::cerr << "gpuadmit " << command << ": " << message << "\n" << usage;
  return 2;
}

std::optional<std::string> Args::value(const std::string& flag) const {
  auto range = values_.equal_range(flag);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;  // the last one wins, as with most CLIs
}

std::vector<std::string> Args::values(const std::string& flag) const {
  std::vector<std::string> result;
  auto range = values_.equal_range(flag);
  for (auto it = range.first; it != range.second; ++it) result.push_back(it->second);
  return result;
}

std::string Args::value_or(const std::string& flag, const std::string& fallback) const {
  auto v = value(flag);
  return v ? *v : fallback;
}

}  // namespace gpuadmit::cli
