#include "webhook/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace gpuadmit::webhook {
namespace {

std::string_view level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// RFC 3339 UTC with milliseconds, as log collectors parse without configuration.
std::string timestamp() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

void Logger::log(LogLevel level, std::string_view msg, const Json& fields) const {
  if (!enabled(level)) return;
  // {"ts":...,"level":...,"msg":...} then the fields in their order, as one object. The fields
  // are serialized as they are and spliced in (no copy into a second object); a field named
  // ts, level or msg replaces the header's value in place, as a merge would.
  const bool spliced = fields.is_object() && !fields.empty() && !fields.contains("ts") &&
                       !fields.contains("level") && !fields.contains("msg");
  Json line = Json::object();
  line["ts"] = timestamp();
  line["level"] = level_name(level);
  line["msg"] = msg;
  if (fields.is_object() && !spliced) {
    for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = it.value();
  }
  // Invalid UTF-8 from a request (a name, a uid) is replaced, never a throw from a log line.
  std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (spliced) {
    text.back() = ',';  // the header's closing brace
    const std::string rest = fields.dump(-1, ' ', false, Json::error_handler_t::replace);
    text.append(rest, 1);
  }
  text += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace gpuadmit::webhook
