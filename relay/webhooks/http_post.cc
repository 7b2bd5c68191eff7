#include "relay/webhooks/http_post.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "relay/webhooks/tls_client.h"

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

// One connection, plain or TLS, on a non-blocking socket: every call waits
// at most until the exchange's deadline.
class Conn {
 public:
  Conn(int fd, Clock::time_point deadline) : fd_(fd), deadline_(deadline) {}
  ~Conn() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
  }

  bool start_tls(SSL_CTX* ctx, const std::string& host, std::string& error) {
    ssl_ = SSL_new(ctx);
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return fail(error, "TLS: " + tls_error_text());
    // The name the certificate must carry: an IP literal is checked as an
    // address, anything else as a DNS name (and sent as SNI).
    in6_addr a6;
    in_addr a4;
    const bool is_ip = inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1 : SSL_set1_host(ssl_, host.c_str()) != 1)
      return fail(error, "TLS: cannot check host " + host);
    if (!is_ip) SSL_set_tlsext_host_name(ssl_, host.c_str());
    for (;;) {
      int rc = SSL_connect(ssl_);
      if (rc == 1) return true;
      if (!wait_ssl(rc)) {
        long v = SSL_get_verify_result(ssl_);
        if (v != X509_V_OK)
          return fail(error, std::string("TLS: certificate not trusted: ") + X509_verify_cert_error_string(v));
        return fail(error,
                    remaining_ms(deadline_) == 0 ? "TLS handshake timed out" : "TLS handshake: " + tls_error_text());
      }
    }
  }

  bool send_all(std::string_view data, std::string& error) {
    size_t sent = 0;
    while (sent < data.size()) {
      if (ssl_) {
        int n = SSL_write(ssl_, data.data() + sent, static_cast<int>(data.size() - sent));
        if (n > 0)
          sent += static_cast<size_t>(n);
        else if (!wait_ssl(n))
          return fail(error, "send: " + tls_error_text());
        continue;
      }
      ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n > 0)
        sent += static_cast<size_t>(n);
      else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd_, POLLOUT, deadline_))
        continue;
      else
        return fail(error, n < 0 ? std::string("send: ") + std::strerror(errno) : "send timed out");
    }
    return true;
  }

  // Bytes read (> 0), or 0 with `error` set.
  size_t recv_some(char* buf, size_t cap, std::string& error) {
    for (;;) {
      if (ssl_) {
        int n = SSL_read(ssl_, buf, static_cast<int>(cap));
        if (n > 0) return static_cast<size_t>(n);
        int e = SSL_get_error(ssl_, n);
        if (e == SSL_ERROR_ZERO_RETURN) return fail(error, "connection closed without an answer"), 0;
        if (!wait_ssl(n))
          return fail(error,
                      remaining_ms(deadline_) == 0 ? "no answer in time" : "connection closed without an answer"),
                 0;
        continue;
      }
      if (!wait_for(fd_, POLLIN, deadline_)) return fail(error, "no answer in time"), 0;
      ssize_t n = recv(fd_, buf, cap, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      return fail(error, "connection closed without an answer"), 0;
    }
  }

 private:
  static bool fail(std::string& error, std::string why) {
    error = std::move(why);
    return false;
  }
  // After an SSL call returned rc <= 0: wait for what it asked for.
  bool wait_ssl(int rc) {
    switch (SSL_get_error(ssl_, rc)) {
      case SSL_ERROR_WANT_READ:
        return wait_for(fd_, POLLIN, deadline_);
      case SSL_ERROR_WANT_WRITE:
        return wait_for(fd_, POLLOUT, deadline_);
      default:
        return false;
    }
  }

  int fd_;
  SSL* ssl_ = nullptr;
  Clock::time_point deadline_;
};

}  // namespace

PostResult http_post(const std::string& host, uint16_t port, const std::string& path, std::string_view body,
                     std::string_view extra_headers, int timeout_ms, SSL_CTX* tls) {
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
  Conn conn(fd, deadline);
  int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS) {
    r.error = std::string("connect: ") + std::strerror(errno);
    return r;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (!wait_for(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    r.error = std::string("connect: ") + (err ? std::strerror(err) : "timed out");
    return r;
  }
  if (tls && !conn.start_tls(tls, host, r.error)) return r;
  std::string req =
      "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + service +
      "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n";
  req += extra_headers;
  req += "\r\n";
  req += body;
  if (!conn.send_all(req, r.error)) return r;
  // The status line is all we need.
  std::string in;
  char buf[1024];
  while (in.find("\r\n") == std::string::npos && in.size() < 4096) {
    size_t n = conn.recv_some(buf, sizeof buf, r.error);
    if (n == 0) break;
    in.append(buf, n);
  }
  if (in.starts_with("HTTP/1.") && in.size() >= 12) r.status = std::atoi(in.c_str() + 9);
  if (r.status != 0) r.error.clear();
  if (r.status == 0 && r.error.empty()) r.error = "not an HTTP answer";
  return r;
}

}  // namespace oddsrelay::relay
