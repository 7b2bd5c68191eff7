#include "protocol/api/access_log.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "protocol/api/api_keys.h"
#include "protocol/json_out.h"

namespace oddsrelay::access_log {

namespace {

// 2026-11-25T19:40:00.123Z: sortable, and what log pipelines parse.
void write_time(json::Writer& w, int64_t wall_ms) {
  const std::time_t secs = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(wall_ms % 1000));
  w.Key("time");
  w.String(buf);
}

// What every line opens with: when, what, who.
void write_head(json::Writer& w, int64_t wall_ms, const char* type, std::string_view client, std::string_view key) {
  w.StartObject();
  write_time(w, wall_ms);
  w.Key("type");
  w.String(type);
  w.Key("client");
  json::str(w, client);
  w.Key("key");
  if (key.empty())
    w.Null();
  else
    json::str(w, key);
}

}  // namespace

std::string key_hint(std::string_view presented) {
  static const char* hex = "0123456789abcdef";
  const api::Digest d = api::sha256(presented);
  std::string out = "#";
  for (size_t i = 0; i < 4; ++i) {
    out += hex[d[i] >> 4];
    out += hex[d[i] & 15];
  }
  return out;
}

std::string format(const Request& r, int64_t wall_ms) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  write_head(w, wall_ms, "request", r.client, r.key);
  if (r.key_unknown) {
    w.Key("key_unknown");
    w.Bool(true);
  }
  w.Key("method");
  json::str(w, r.method);
  w.Key("path");
  json::str(w, r.path);
  w.Key("status");
  w.Int(r.status);
  w.Key("bytes");
  w.Uint64(r.bytes);
  w.Key("us");
  w.Uint64(r.micros);
  w.EndObject();
  return out;
}

std::string format(const Stream& s, int64_t wall_ms) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  write_head(w, wall_ms, s.open ? "stream_open" : "stream_close", s.client, s.key);
  w.Key("path");
  json::str(w, s.path);
  if (!s.open) {
    w.Key("close_code");
    w.Int(s.close_code);
    w.Key("reason");
    json::str(w, s.reason);
    w.Key("frames");
    w.Uint64(s.frames);
    w.Key("bytes");
    w.Uint64(s.bytes);
    w.Key("ms");
    w.Uint64(s.millis);
  }
  w.EndObject();
  return out;
}

bool Log::open(const std::string& path, std::string& err) {
  std::lock_guard<std::mutex> lock(mu_);
  path_ = path;
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "a");
  if (!f) {
    err = "cannot open access log " + path + ": " + std::strerror(errno);
    return false;
  }
  if (f_ && f_ != stdout) std::fclose(f_);
  f_ = f;
  on_.store(true, std::memory_order_relaxed);
  return true;
}

bool Log::reopen(std::string& err) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!f_ || path_ == "-") return true;  // standard output is not rotated
    path = path_;
  }
  return open(path, err);
}

void Log::write(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!f_) return;
  // One fwrite of the whole line, flushed: a reader (tail -f, a shipper)
  // sees whole lines, and a crash loses none that were answered.
  std::string buf;
  buf.reserve(line.size() + 1);
  buf += line;
  buf += '\n';
  std::fwrite(buf.data(), 1, buf.size(), f_);
  std::fflush(f_);
  lines_.fetch_add(1, std::memory_order_relaxed);
}

void Log::close() {
  std::lock_guard<std::mutex> lock(mu_);
  on_.store(false, std::memory_order_relaxed);
  if (f_ && f_ != stdout) std::fclose(f_);
  f_ = nullptr;
}

Log& log() {
  static Log the_log;
  return the_log;
}

}  // namespace oddsrelay::access_log
