#include "relay/http_post.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace oddsrelay::relay {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(ms);
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, remaining_ms(deadline)) == 1;
}

}  // namespace

PostResult http_post(const std::string& host, uint16_t port, const std::string& path, std::string_view body,
                     std::string_view extra_headers, int timeout_ms) {
  PostResult r;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    r.error = std::string("cannot resolve ") + host + ": " + gai_strerror(rc);
    return r;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    r.error = std::strerror(errno);
    return r;
  }
  int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS) {
    r.error = std::string("connect: ") + std::strerror(errno);
    close(fd);
    return r;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (!wait_for(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    r.error = std::string("connect: ") + (err ? std::strerror(err) : "timed out");
    close(fd);
    return r;
  }
  std::string req = "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + service +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n";
  req += extra_headers;
  req += "\r\n";
  req += body;
  size_t sent = 0;
  while (sent < req.size()) {
    ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, POLLOUT, deadline)) {
      continue;
    } else {
      r.error = n < 0 ? std::string("send: ") + std::strerror(errno) : "send timed out";
      close(fd);
      return r;
    }
  }
  // The status line is all we need.
  std::string in;
  char buf[1024];
  while (in.find("\r\n") == std::string::npos && in.size() < 4096) {
    if (!wait_for(fd, POLLIN, deadline)) {
      r.error = "no answer in time";
      break;
    }
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      r.error = "connection closed without an answer";
      break;
    }
    in.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (in.starts_with("HTTP/1.") && in.size() >= 12) r.status = std::atoi(in.c_str() + 9);
  if (r.status == 0 && r.error.empty()) r.error = "not an HTTP answer";
  return r;
}

}  // namespace oddsrelay::relay
