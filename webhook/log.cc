#include "webhook/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace gpuadmit::webhook {
namespace {

constexpr std::size_t kKeptBuffer = 256 * 1024;

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

// RFC 3339 UTC with milliseconds, as log collectors parse without configuration. The part up
// to the second is formatted once a second per thread.
void append_timestamp(std::string& out) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  thread_local std::time_t cached_secs = -1;
  thread_local char cached[80];
  if (secs != cached_secs) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_secs = secs;
  }
  out += cached;
  const int m = static_cast<int>(ms);
  out += static_cast<char>('0' + m / 100);
  out += static_cast<char>('0' + m / 10 % 10);
  out += static_cast<char>('0' + m % 10);
  out += 'Z';
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

Logger::Logger(LogLevel level, std::FILE* out, Output output)
    : level_(level), out_(out), output_(output) {
  if (output_ == Output::kBuffered) writer_ = std::thread([this] { writer_loop(); });
}

Logger::~Logger() {
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    writer_.join();
  }
  write_pending();
}

void Logger::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    stop_cv_.wait_for(lock, kBufferInterval, [this] { return stop_; });
    lock.unlock();
    write_pending();
    lock.lock();
  }
}

void Logger::write_pending() const {
  std::lock_guard<std::mutex> write_lock(write_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.empty()) return;
    pending_.swap(spare_);  // spare_ is empty with its capacity kept
  }
  std::fwrite(spare_.data(), 1, spare_.size(), out_);
  std::fflush(out_);
  spare_.clear();
  // A burst of long lines leaves no large buffer behind (RSS returns after the burst).
  if (spare_.capacity() > kKeptBuffer) std::string().swap(spare_);
}

void Logger::flush() const { write_pending(); }

void Logger::emit(LogLevel level, const std::string& line) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ += line;
  }
  if (output_ == Output::kImmediate || level >= LogLevel::kWarn) write_pending();
}

void Logger::log_members(LogLevel level, std::string_view msg, std::string_view members) const {
  if (!enabled(level)) return;
  thread_local std::string line;
  line.clear();
  line += "{\"ts\":\"";
  append_timestamp(line);
  line += "\",\"level\":\"";
  line += level_name(level);
  line += "\",\"msg\":";
  append_json_string(line, msg, Json::error_handler_t::replace);
  if (!members.empty()) {
    line += ',';
    line += members;
  }
  line += "}\n";
  emit(level, line);
  if (line.capacity() > kKeptBuffer) std::string().swap(line);
}

void Logger::log(LogLevel level, std::string_view msg, const Json& fields) const {
  if (!enabled(level)) return;
  // {"ts":...,"level":...,"msg":...} then the fields in their order, as one object. The fields
  // are serialized as they are and spliced in; a field named ts, level or msg replaces the
  // header's value in place, as a merge would.
  // Invalid UTF-8 from a request (a name, a uid) is replaced, never a throw from a log line.
  if (!fields.is_object() || fields.empty()) return log_members(level, msg, {});
  if (!fields.contains("ts") && !fields.contains("level") && !fields.contains("msg")) {
    const std::string text = fields.dump(-1, ' ', false, Json::error_handler_t::replace);
    return log_members(level, msg, std::string_view(text).substr(1, text.size() - 2));
  }
  Json line = Json::object();
  std::string ts;
  append_timestamp(ts);
  line["ts"] = ts;
  line["level"] = level_name(level);
  line["msg"] = msg;
  for (auto it = fields.begin(); it != fields.end(); ++it) line[it.key()] = it.value();
  emit(level, line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace gpuadmit::webhook
