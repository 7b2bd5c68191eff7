// One /pt-ws connection of the C++ client: a blocking TCP socket driven by
// poll(2) on the client's own thread, the WebSocket handshake (offering
// permessage-deflate with `compress`), and the server's frames turned into
// whole text messages. Framing and inflation are protocol/'s
// (ws::read_server_frame, ws::Inflater, as tools/oddsload uses them); this
// file adds only what a client needs beside them: connect with a
// deadline, answer pings, note when the last frame of any kind arrived.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "protocol/ws_deflate.h"

namespace oddsrelay::client {

using Clock = std::chrono::steady_clock;

// http://HOST:PORT (or ws://) split; false if it is neither.
bool split_url(std::string_view url, std::string& host, uint16_t& port);

class WsConnection {
 public:
  WsConnection();
  ~WsConnection();
  WsConnection(const WsConnection&) = delete;
  WsConnection& operator=(const WsConnection&) = delete;

  // Connects and upgrades `target` (path and query); false with `error`
  // set if it could not within `timeout`.
  bool open(const std::string& host, uint16_t port, const std::string& target, bool compress,
            std::chrono::milliseconds timeout, std::string& error);
  bool is_open() const { return fd_ >= 0; }
  bool compressed() const { return inflater_ != nullptr; }
  // Closes the socket at once: no close handshake with a peer that may be gone.
  void close();

  enum class Read { kOk, kTimeout, kClosed };
  // Waits up to `wait` for bytes and hands each whole message to
  // `on_message(text, payload)`, which returns false to stop reading
  // (the caller then closes). kClosed: the peer closed or the socket failed.
  Read read(std::chrono::milliseconds wait, const std::function<bool(bool, std::string_view)>& on_message);
  // When the last frame of any kind (a ping too) arrived, or the
  // connection opened.
  Clock::time_point last_frame() const { return last_frame_; }

 private:
  bool send_all(std::string_view bytes);
  // Consumes the frames at the front of in_; false to stop.
  bool drain(const std::function<bool(bool, std::string_view)>& on_message, bool& closed);

  static constexpr size_t kReadChunk = 256u << 10;
  int fd_ = -1;
  std::unique_ptr<char[]> rbuf_;  // one recv's bytes
  std::string in_;
  size_t in_pos_ = 0;
  std::string message_;  // a fragmented message in progress
  bool message_text_ = false, message_deflated_ = false, in_message_ = false;
  std::string inflated_;
  std::unique_ptr<ws::Inflater> inflater_;  // permessage-deflate negotiated
  Clock::time_point last_frame_{};
  std::mt19937 rng_;
};

}  // namespace oddsrelay::client
