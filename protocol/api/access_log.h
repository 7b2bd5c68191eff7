// The access log (--access-log FILE|-): one JSON line per REST request and
// per stream open and close, for operators and their log pipelines. Lines
// come from every REST and relay loop thread: each is formatted by its own
// thread and appended under one mutex in a single write, so lines never
// interleave. reopen() (on SIGHUP) starts a new file where logrotate moved
// the old one. A line never holds a presented key: it names the key's
// configured name, or for a key that matched nothing a short hash of it.
// Off unless opened; then a caller's cost is one relaxed load.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace oddsrelay::access_log {

// One answered REST request (or a request refused before routing).
struct Request {
  std::string_view client;   // the client's address, as --trust-proxy decides it
  std::string_view key;      // the key's name; empty: no key presented
  bool key_unknown = false;  // `key` is then key_hint() of what was presented
  std::string_view method, path;
  int status = 0;
  uint64_t bytes = 0;   // the whole answer, head and body
  uint64_t micros = 0;  // from the request's last byte to the answer written into the buffer
};

// A /ws or /pt-ws (or SSE) stream: one line when it opens, one when it closes.
struct Stream {
  std::string_view client, key, path;
  bool open = true;                            // false: the close line
  int close_code = 0;                          // close: the WebSocket close code (1000, 1008, ...)
  std::string_view reason;                     // close: why
  uint64_t frames = 0, bytes = 0, millis = 0;  // close: what was sent, how long it lived
};

// "#" and the first 8 hex digits of the SHA-256 of a presented key that
// matched none: enough to tell repeated attempts apart, useless to log in.
std::string key_hint(std::string_view presented);

std::string format(const Request& r, int64_t wall_ms);
std::string format(const Stream& s, int64_t wall_ms);

class Log {
 public:
  // FILE, or "-" for standard output. False (with `err`) when it cannot be opened.
  bool open(const std::string& path, std::string& err);
  // SIGHUP: the same path again (a file logrotate renamed is closed). False when it fails (the old file stays).
  bool reopen(std::string& err);
  bool on() const { return on_.load(std::memory_order_relaxed); }
  void write(const std::string& line);  // one line, '\n' added
  void close();
  uint64_t lines() const { return lines_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::FILE* f_ = nullptr;
  std::string path_;
  std::atomic<bool> on_{false};
  std::atomic<uint64_t> lines_{0};
};

// The node's one access log (like the process's stderr, there is one).
Log& log();

inline void request(const Request& r, int64_t wall_ms) {
  if (log().on()) log().write(format(r, wall_ms));
}
inline void stream(const Stream& s, int64_t wall_ms) {
  if (log().on()) log().write(format(s, wall_ms));
}

}  // namespace oddsrelay::access_log
