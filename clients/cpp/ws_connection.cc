// The client's WebSocket connection (ws_connection.h).
#include "clients/cpp/ws_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "protocol/ws_frame.h"

namespace oddsrelay::client {

namespace {

// A compressed message may inflate to at most this much.
constexpr size_t kMaxMessage = 256u << 20;

int ms_left(Clock::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return d < 0 ? 0 : static_cast<int>(d);
}

bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, ms_left(deadline));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

// A header's value in a response head (names compared without case), or
// empty.
std::string_view header_value(std::string_view head, std::string_view lower_name) {
  for (size_t at = head.find("\r\n"); at != std::string_view::npos;) {
    const size_t start = at + 2, end = std::min(head.find("\r\n", start), head.size());
    const std::string_view line = head.substr(start, end - start);
    const size_t colon = line.find(':');
    if (colon == lower_name.size() && std::equal(lower_name.begin(), lower_name.end(), line.begin(),
                                                 [](char a, char b) { return a == (b | 0x20); })) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      return v;
    }
    at = end < head.size() ? end : std::string_view::npos;
  }
  return {};
}

}  // namespace

bool split_url(std::string_view url, std::string& host, uint16_t& port) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view s = url.substr(0, scheme), rest = url.substr(scheme + 3);
  if (s != "http" && s != "ws") return false;
  rest = rest.substr(0, rest.find('/'));
  port = 80;
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view p = rest.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || end != p.data() + p.size()) return false;
    rest = rest.substr(0, colon);
  }
  host.assign(rest);
  return !host.empty();
}

WsConnection::WsConnection() : rbuf_(new char[kReadChunk]), rng_(std::random_device{}()) {}
WsConnection::~WsConnection() { close(); }

void WsConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
  in_pos_ = 0;
  in_message_ = false;
  message_.clear();
  inflater_.reset();
}

bool WsConnection::send_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_fd(fd_, POLLOUT, Clock::now() + std::chrono::seconds(5))) return false;
      continue;
    }
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool WsConnection::open(const std::string& host, uint16_t port, const std::string& target, bool compress,
                        std::chrono::milliseconds timeout, std::string& error) {
  close();
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    error = std::string("resolve: ") + gai_strerror(rc);
    return false;
  }
  for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd_ < 0) continue;
    int rc = ::connect(fd_, a->ai_addr, a->ai_addrlen);
    int err = 0;
    socklen_t len = sizeof err;
    if (rc != 0 && (errno != EINPROGRESS || !wait_fd(fd_, POLLOUT, deadline) ||
                    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)) {
      error = std::string("connect: ") + std::strerror(err ? err : errno ? errno : ETIMEDOUT);
      ::close(fd_);
      fd_ = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd_ < 0) return false;
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A fresh key per connection, and its answer checked below: a 101 from
  // something that is not a WebSocket server (a proxy's cached page, a
  // misrouted port) is refused rather than read as frames.
  auto word = [this] { return uint64_t{rng_()} << 32 | rng_(); };
  const std::string key = ws::client_key(word(), word());
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: " +
                    key + "\r\nSec-WebSocket-Version: 13\r\n";
  if (compress) req += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
  req += "\r\n";
  if (!send_all(req)) {
    error = "handshake: send failed";
    close();
    return false;
  }
  // The answer's head; what follows it is the first frames.
  size_t end = std::string::npos;
  char buf[4096];
  while ((end = in_.find("\r\n\r\n")) == std::string::npos) {
    if (!wait_fd(fd_, POLLIN, deadline)) {
      error = "handshake: timed out";
      close();
      return false;
    }
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0 || in_.size() > 65536) {
      error = "handshake: connection closed";
      close();
      return false;
    }
    in_.append(buf, static_cast<size_t>(n));
  }
  std::string head = in_.substr(0, end);
  if (!head.starts_with("HTTP/1.1 101")) {
    error = "handshake refused: " + head.substr(0, head.find("\r\n"));
    close();
    return false;
  }
  if (header_value(head, "sec-websocket-accept") != ws::accept_key(key)) {
    error = "handshake: Sec-WebSocket-Accept does not answer the key";
    close();
    return false;
  }
  if (compress && head.find("permessage-deflate") != std::string::npos) inflater_ = std::make_unique<ws::Inflater>();
  in_.erase(0, end + 4);
  in_pos_ = 0;
  last_frame_ = Clock::now();
  return true;
}

bool WsConnection::drain(const std::function<bool(bool, std::string_view)>& on_message, bool& closed) {
  while (auto f = ws::read_server_frame(std::string_view(in_).substr(in_pos_))) {
    in_pos_ += f->size;
    last_frame_ = Clock::now();
    switch (f->op) {
      case ws::kPing: {
        std::string pong;
        ws::append_client_frame(pong, ws::kPong, f->payload, static_cast<uint32_t>(rng_()));
        if (!send_all(pong)) return closed = true, false;
        continue;
      }
      case ws::kPong:
        continue;
      case ws::kClose:
        closed = true;
        return false;
      case ws::kText:
      case ws::kBinary:
        if (in_message_) return closed = true, false;  // a new message inside a fragmented one
        message_text_ = f->op == ws::kText;
        message_deflated_ = f->rsv1 && inflater_;
        if (f->rsv1 && !inflater_) return closed = true, false;
        break;
      case ws::kContinuation:
        if (!in_message_) return closed = true, false;
        break;
      default:
        return closed = true, false;
    }
    std::string_view whole = f->payload;  // the common case: one whole frame, no copy
    if (!f->fin || in_message_) {
      message_.append(f->payload);
      in_message_ = !f->fin;
      if (!f->fin) continue;
      whole = message_;
    }
    if (message_deflated_) {
      // Inflation failures are the connection's, not the replica's: a cut.
      if (inflater_->inflate(whole, kMaxMessage, inflated_) != ws::Inflater::Result::Ok) return closed = true, false;
      whole = inflated_;
    }
    const bool keep_going = on_message(message_text_, whole);
    message_.clear();
    if (!keep_going) return false;
  }
  return true;
}

WsConnection::Read WsConnection::read(std::chrono::milliseconds wait,
                                      const std::function<bool(bool, std::string_view)>& on_message) {
  if (fd_ < 0) return Read::kClosed;
  bool closed = false;
  // Frames that came with the handshake's answer or a previous read.
  if (!drain(on_message, closed)) return closed ? Read::kClosed : Read::kOk;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(wait.count()));
  if (r == 0 || (r < 0 && errno == EINTR)) return Read::kTimeout;
  if (r < 0) return Read::kClosed;
  if (in_pos_ > 0) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
  ssize_t n = ::recv(fd_, rbuf_.get(), kReadChunk, 0);
  if (n > 0) in_.append(rbuf_.get(), static_cast<size_t>(n));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return Read::kOk;
  if (n <= 0) return Read::kClosed;
  if (!drain(on_message, closed)) return closed ? Read::kClosed : Read::kOk;
  return Read::kOk;
}

}  // namespace oddsrelay::client
