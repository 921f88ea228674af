#pragma once
// Structured logs: one JSON object per line on stderr, e.g.
//   {"ts":"2024-05-01T10:00:00.123Z","level":"info","msg":"decision","uid":"...",...}
// Thread-safe; a line is written with one fwrite so lines from workers never interleave.

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "engine/json.h"

namespace gpuadmit::webhook {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug" | "info" | "warn" | "error" → level; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view name);

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr)
      : level_(level), out_(out) {}

  bool enabled(LogLevel level) const { return level >= level_.load(std::memory_order_relaxed); }
  // Writes {"ts", "level", "msg", ...fields}; `fields` must be a JSON object (or null).
  void log(LogLevel level, std::string_view msg, const Json& fields = Json()) const;

  void info(std::string_view msg, const Json& fields = Json()) const {
    log(LogLevel::kInfo, msg, fields);
  }
  void warn(std::string_view msg, const Json& fields = Json()) const {
    log(LogLevel::kWarn, msg, fields);
  }
  void error(std::string_view msg, const Json& fields = Json()) const {
    log(LogLevel::kError, msg, fields);
  }

 private:
  std::atomic<LogLevel> level_;
  std::FILE* out_;
  mutable std::mutex mutex_;
};

}  // namespace gpuadmit::webhook
