#pragma once
// A small flag parser shared by the subcommands: "--name value", "--name=value", boolean flags,
// and positional arguments. Unknown flags are usage errors (exit 2). `-h` or `--help` anywhere
// before `--` ends parsing with help() set: the command prints its usage on stdout and exits 0
// (print_usage), whatever else the line holds.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuadmit::cli {

class Args {
 public:
  // `value_flags` take a value; `bool_flags` do not. Returns an error message on bad usage.
  static std::optional<std::string> parse(const std::vector<std::string>& argv,
                                          const std::set<std::string>& value_flags,
                                          const std::set<std::string>& bool_flags, Args& out);

  bool help() const { return help_; }
  bool has(const std::string& flag) const { return values_.count(flag) || bools_.count(flag); }
  std::optional<std::string> value(const std::string& flag) const;
  // Every value of a repeatable flag ("--san a --san b").
  std::vector<std::string> values(const std::string& flag) const;
  std::string value_or(const std::string& flag, const std::string& fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::multimap<std::string, std::string> values_;
  std::set<std::string> bools_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Prints a command's usage on stdout for -h/--help; returns the exit code, 0.
int print_usage(const char* usage);

// Prints "gpuadmit COMMAND: MESSAGE" and the command's usage on stderr; returns the exit code, 2.
int usage_error(const char* command, const char* usage, const std::string& message);

}  // namespace gpuadmit::cli
