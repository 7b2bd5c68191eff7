#include "tools/oddsload/load_client.h"

#include <time.h>
#include <uv.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "protocol/ws_deflate.h"
#include "tools/oddsload/channel_order.h"
#include "tools/oddsload/frame_fields.h"

namespace oddsrelay::load {

namespace {

int64_t wall_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

// The number after "<key>": anywhere in a /ws message; false if absent.
bool json_number(std::string_view body, std::string_view key, double& out) {
  std::string pat = "\"";
  pat.append(key).append("\":");
  size_t p = body.find(pat);
  if (p == std::string_view::npos) return false;
  const char* s = body.data() + p + pat.size();
  char* end = nullptr;
  out = std::strtod(s, &end);
  return end != s;
}

struct Loader;

struct Client {
  uv_tcp_t tcp;
  uv_connect_t creq;
  Loader* L = nullptr;
  std::string in;
  bool upgraded = false, forwarder = false, ready = false, done = false;
  bool deflate = false;  // permessage-deflate negotiated
  uint32_t index = 0;    // among the subscribers (not the forwarder), in start order
  int64_t last_seq = -1;
  uint32_t frames_in_group = 0;  // evt:/odds: frames since the last INFO
  ChannelOrder order;            // its odds channels' newest "ls", by Loader::channels
};

struct WriteReq {
  uv_write_t req;
  std::string data;
};

struct Loader {
  LoadOptions o;
  LoadResult r;
  uv_loop_t loop;
  uv_timer_t tick;
  std::vector<Client*> clients;
  uint32_t started = 0;
  int64_t t0 = 0, measure_from = 0, last_progress = 0;
  uint64_t progress_frames = 0;
  uint32_t subscribers = 0;
  std::unordered_map<std::string, uint64_t> first_channels;  // subscriber 0's P frames per channel, measured
  ChannelIndex channels;                                     // shared by every subscriber's ChannelOrder
  bool stopping = false;
  char buf[256 * 1024];
  ws::Inflater inflater;  // compressed messages, one at a time
  // Compressed message -> its text (inflate_shared); bounded.
  std::unordered_map<std::string, std::string> inflated;
  // The forwarder's publisher connection (pipelined HTTP POSTs).
  uv_tcp_t pub;
  uv_connect_t pub_creq;
  bool pub_up = false;
  std::string pub_backlog;  // posts made before the connection was up
};

void send_bytes(uv_stream_t* s, std::string data) {
  auto* w = new WriteReq;
  w->data = std::move(data);
  w->req.data = w;
  uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  if (uv_write(&w->req, s, &b, 1, [](uv_write_t* req, int) { delete static_cast<WriteReq*>(req->data); }) != 0)
    delete w;
}

// A masked client frame (mask 0: the bytes stay readable, which is legal).
void send_frame(Client* c, ws::Opcode op, std::string_view payload) {
  std::string f;
  ws::append_client_frame(f, op, payload, 0);
  send_bytes(reinterpret_cast<uv_stream_t*>(&c->tcp), std::move(f));
}

void close_client(Client* c) {
  if (c->done) return;
  c->done = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), nullptr);
}

void forward(Loader* L, std::string_view frame) {
  std::string post =
      "POST " + L->o.forward_path +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(frame.size()) +
      "\r\n\r\n";
  post.append(frame);
  ++L->r.forwarded;
  if (L->pub_up)
    send_bytes(reinterpret_cast<uv_stream_t*>(&L->pub), std::move(post));
  else
    L->pub_backlog += post;
}

// The latency of the group an INFO closes, whole and by stage.
void count_latency(Loader* L, const InfoFields& f, int64_t now) {
  if (!f.has_at) return;
  // From the group's arrival at the server (arrived_us), else the feed's `at`.
  const int64_t at_us = f.has_arrived ? static_cast<int64_t>(f.arrived_us) : static_cast<int64_t>(f.at * 1000.0);
  L->r.latency.add(now - at_us);
  if (f.has_applied && f.has_encoded) {
    L->r.record_engine.add(static_cast<int64_t>(f.applied_us) - at_us);
    L->r.engine_relay.add(static_cast<int64_t>(f.encoded_us) - static_cast<int64_t>(f.applied_us));
    L->r.relay_subscriber.add(now - static_cast<int64_t>(f.encoded_us));
  }
}

// `now`: when the read that brought the frame returned (one clock read a
// read, not a frame: the frames of one read arrived together).
void on_text(Client* c, std::string_view p, int64_t now) {
  Loader* L = c->L;
  const bool measuring = L->measure_from && now >= L->measure_from;
  ++L->r.frames;
  L->r.bytes += p.size();
  if (measuring) {
    ++L->r.frames_measured;
    L->r.bytes_measured += p.size();
    if (c->index == 0 && !c->forwarder) {
      if (p.starts_with("INFO\x1F"))
        ++L->r.first_infos;
      else if (p.starts_with("P\x1F"))
        ++L->first_channels[std::string(p.substr(2, p.find('\x1F', 2) - 2))];
    }
  }
  if (p.starts_with("INFO\x1FPUB\x1F")) {
    InfoFields f;
    read_info(p.substr(9), f);
    if (!f.has_seq) return;
    const double seq = f.seq;
    if (f.ready) {
      c->ready = true;
      c->last_seq = static_cast<int64_t>(seq);
      return;
    }
    ++L->r.infos;
    // An INFO closing a group that brought this subscriber no frame (a
    // filter's quiet group: its INFO may wait up to 100 ms, docs/api.md)
    // delivered no change: it has no latency to count.
    const bool carried = std::exchange(c->frames_in_group, 0) != 0;
    const double from = f.from;
    if (f.has_conflated)
      L->r.conflated += static_cast<uint64_t>(f.conflated);
    else if (c->last_seq >= 0 && static_cast<int64_t>(from) != c->last_seq + 1)
      ++L->r.gaps;
    c->last_seq = static_cast<int64_t>(seq);
    if (c->forwarder) {
      if (now < L->measure_from - 300'000) return;  // let every baseline subscriber connect first
      // The baseline's clock starts when the frame is published to it.
      char stamped[160];
      int n = std::snprintf(stamped, sizeof stamped, "INFO\x1FPUB\x1F{\"seq\":%.0f,\"from\":%.0f,\"at\":%.3f}", seq,
                            from, static_cast<double>(wall_us()) / 1000.0);
      forward(L, std::string_view(stamped, static_cast<size_t>(n)));
      return;
    }
    if (carried && measuring) count_latency(L, f, now);
    return;
  }
  if (c->forwarder) {
    if (c->ready && now >= L->measure_from - 300'000) forward(L, p);
    return;
  }
  if (p.starts_with("P\x1F")) ++c->frames_in_group;
  // Per-channel order: an odds frame carries each changed market whole, so
  // its newest line time ("ls") never goes back on the same channel.
  if (p.starts_with("P\x1Fodds:")) {
    size_t colon = p.find(':', 7), sep = p.find('\x1F', 2);
    if (colon == std::string_view::npos || sep == std::string_view::npos || colon > sep) return;
    uint64_t number = std::strtoull(p.data() + colon + 1, nullptr, 10);
    const int64_t newest = newest_ls(p.substr(sep));
    if (c->order.went_back(L->channels.of(number), newest)) ++L->r.out_of_order;
    return;
  }
  // /ws messages: live_update and market carry a ts.
  double at = 0;
  if (p.starts_with("{\"type\":\"live_update\"") || p.starts_with("{\"type\":\"market\"")) {
    if (json_number(p, "ts", at) && measuring) L->r.latency.add(now - static_cast<int64_t>(at * 1000.0));
  }
}

// The text of a compressed message; null (and the run's error) if it does
// not inflate. The server compresses a frame once for every subscriber
// (no context takeover), so the subscribers get the same compressed bytes
// and this client inflates each distinct message once: inflating per
// subscriber, hundreds on one core, would measure the client.
const std::string* inflate_shared(Loader* L, std::string_view payload) {
  if (L->inflated.size() > 8192) L->inflated.clear();
  auto [it, fresh] = L->inflated.try_emplace(std::string(payload));
  if (fresh && L->inflater.inflate(payload, 64 << 20, it->second) != ws::Inflater::Result::Ok) {
    L->inflated.erase(it);
    if (L->r.error.empty()) L->r.error = "a compressed frame does not inflate";
    return nullptr;
  }
  return &it->second;
}

// Parses the server frames at the front of `d`; returns bytes used.
size_t parse_frames(Client* c, const char* d, size_t n, int64_t now) {
  size_t pos = 0;
  while (auto f = ws::read_server_frame(std::string_view(d + pos, n - pos))) {
    const uint8_t op = f->op;
    std::string_view payload = f->payload;
    pos += f->size;
    if ((op == 1 || op == 0) && f->rsv1 && c->deflate) {
      const std::string* text = inflate_shared(c->L, payload);
      if (!text) {
        close_client(c);
        return pos;
      }
      on_text(c, *text, now);
    } else if (op == 1 || op == 0)
      on_text(c, payload, now);
    else if (op == 9) {
      ++c->L->r.pings;
      send_frame(c, ws::kPong, payload);
    } else if (op == 8) {
      if (!c->L->stopping) ++c->L->r.closed_early;
      close_client(c);
      return pos;
    }
  }
  return pos;
}

// /pt-sse: the events at the front of `d` (each ends with a blank line);
// `data:` is the /pt-ws frame text. Returns bytes used.
size_t parse_events(Client* c, const char* d, size_t n, int64_t now) {
  const std::string_view all(d, n);
  size_t pos = 0;
  for (size_t end; (end = all.find("\n\n", pos)) != std::string_view::npos; pos = end + 2) {
    std::string_view event = all.substr(pos, end - pos);
    if (event == ": ping") ++c->L->r.pings;
    for (size_t line = 0; line < event.size();) {
      const size_t eol = std::min(event.find('\n', line), event.size());
      if (event.substr(line).starts_with("data: ")) on_text(c, event.substr(line + 6, eol - line - 6), now);
      line = eol + 1;
    }
  }
  return pos;
}

size_t parse(Client* c, const char* d, size_t n, int64_t now) {
  return c->L->o.sse && !c->forwarder ? parse_events(c, d, n, now) : parse_frames(c, d, n, now);
}

// The server's answer to the handshake (101, or /pt-sse's 200) and what
// came after it.
void on_handshake(Client* c, const char* d, size_t n, int64_t now) {
  Loader* L = c->L;
  c->in.append(d, n);
  size_t end = c->in.find("\r\n\r\n");
  if (end == std::string::npos) return;
  const bool sse = L->o.sse && !c->forwarder;
  if (c->in.compare(0, 12, sse ? "HTTP/1.1 200" : "HTTP/1.1 101") != 0) {
    ++L->r.failed;
    if (L->r.error.empty()) L->r.error = "handshake refused: " + c->in.substr(0, c->in.find("\r\n"));
    close_client(c);
    return;
  }
  c->upgraded = true;
  c->deflate = L->o.compress && c->in.substr(0, end).find("permessage-deflate") != std::string::npos;
  if (!c->forwarder) {
    ++L->r.connected;
    if (c->deflate) ++L->r.compressed;
  }
  std::string rest = c->in.substr(end + 4);
  c->in.clear();
  size_t used = parse(c, rest.data(), rest.size(), now);
  c->in.assign(rest, used);
}

void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  auto* c = static_cast<Client*>(s->data);
  if (c->done) return;
  if (nread < 0) {
    if (!c->L->stopping) ++c->L->r.closed_early;
    close_client(c);
    return;
  }
  const int64_t now = wall_us();
  const char* d = buf->base;
  size_t n = static_cast<size_t>(nread);
  Loader* L = c->L;
  if (!c->forwarder) {
    L->r.wire_bytes += n;
    if (L->measure_from && now >= L->measure_from) L->r.wire_bytes_measured += n;
  }
  if (!c->upgraded) return on_handshake(c, d, n, now);
  if (c->in.empty()) {
    size_t used = parse(c, d, n, now);
    if (!c->done && used < n) c->in.assign(d + used, n - used);
  } else {
    c->in.append(d, n);
    size_t used = parse(c, c->in.data(), c->in.size(), now);
    if (!c->done) c->in.erase(0, used);
  }
}

// The request that opens a stream: a WebSocket handshake (offering
// permessage-deflate with --compress), or a plain GET for /pt-sse.
std::string open_request(const Loader* L, const std::string& path, bool sse) {
  std::string r = "GET " + path + " HTTP/1.1\r\nHost: " + L->o.host + "\r\n";
  if (sse) return r + "Accept: text/event-stream\r\n\r\n";
  r += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
       "Sec-WebSocket-Version: 13\r\n";
  if (L->o.compress) r += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
  return r + "\r\n";
}

void start_client(Loader* L, bool forwarder) {
  auto* c = new Client;
  c->L = L;
  c->forwarder = forwarder;
  if (!forwarder) c->index = L->subscribers++;
  L->clients.push_back(c);
  uv_tcp_init(&L->loop, &c->tcp);
  c->tcp.data = c;
  c->creq.data = c;
  const bool to_baseline = !forwarder && L->o.subscribe_port;
  sockaddr_in addr;
  uv_ip4_addr(L->o.host.c_str(), to_baseline ? L->o.subscribe_port : L->o.port, &addr);
  uv_tcp_connect(&c->creq, &c->tcp, reinterpret_cast<sockaddr*>(&addr), [](uv_connect_t* req, int status) {
    auto* c = static_cast<Client*>(req->data);
    Loader* L = c->L;
    if (status < 0) {
      ++L->r.failed;
      if (L->r.error.empty()) L->r.error = std::string("connect: ") + uv_strerror(status);
      close_client(c);
      return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    const bool baseline = !c->forwarder && L->o.subscribe_port;
    std::string path = baseline ? L->o.subscribe_path : L->o.path;
    if (!baseline && !L->o.api_key.empty()) {
      path += path.find('?') == std::string::npos ? '?' : '&';
      path += "api_key=";
      path += L->o.api_key;
    }
    if (!baseline && !c->forwarder && !L->o.queries.empty()) {
      path += path.find('?') == std::string::npos ? '?' : '&';
      path += L->o.queries[c->index % L->o.queries.size()];
    }
    send_bytes(reinterpret_cast<uv_stream_t*>(&c->tcp), open_request(L, path, L->o.sse && !c->forwarder));
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t* h, size_t, uv_buf_t* b) {
          auto* c = static_cast<Client*>(h->data);
          *b = uv_buf_init(c->L->buf, sizeof c->L->buf);
        },
        on_read);
  });
}

void start_publisher(Loader* L) {
  uv_tcp_init(&L->loop, &L->pub);
  L->pub.data = L;
  L->pub_creq.data = L;
  sockaddr_in addr;
  uv_ip4_addr(L->o.forward_host.c_str(), L->o.forward_port, &addr);
  uv_tcp_connect(&L->pub_creq, &L->pub, reinterpret_cast<sockaddr*>(&addr), [](uv_connect_t* req, int status) {
    auto* L = static_cast<Loader*>(req->data);
    if (status < 0) {
      L->r.error = std::string("publisher connect: ") + uv_strerror(status);
      return;
    }
    uv_tcp_nodelay(&L->pub, 1);
    L->pub_up = true;
    if (!L->pub_backlog.empty()) send_bytes(reinterpret_cast<uv_stream_t*>(&L->pub), std::move(L->pub_backlog));
    L->pub_backlog.clear();
    // Responses are read and dropped.
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&L->pub),
        [](uv_handle_t* h, size_t, uv_buf_t* b) {
          auto* L = static_cast<Loader*>(h->data);
          *b = uv_buf_init(L->buf, sizeof L->buf);
        },
        [](uv_stream_t*, ssize_t, const uv_buf_t*) {});
  });
}

void on_tick(uv_timer_t* t) {
  auto* L = static_cast<Loader*>(t->data);
  const int64_t now = wall_us();
  // Open connections at the configured rate.
  const double elapsed = static_cast<double>(now - L->t0) / 1e6;
  const auto due = static_cast<uint32_t>(std::min<double>(L->o.connections, elapsed * L->o.connect_rate + 1));
  while (L->started < due) {
    start_client(L, false);
    ++L->started;
  }
  if (L->o.progress_s > 0 && now - L->last_progress >= static_cast<int64_t>(L->o.progress_s * 1e6)) {
    const double dt = static_cast<double>(now - L->last_progress) / 1e6;
    std::fprintf(stderr, "oddsload: t=%.0fs connected=%u frames/s=%.0f p50=%.2fms p99=%.2fms gaps=%llu\n", elapsed,
                 L->r.connected, static_cast<double>(L->r.frames - L->progress_frames) / dt,
                 static_cast<double>(L->r.latency.quantile(0.5)) / 1000.0,
                 static_cast<double>(L->r.latency.quantile(0.99)) / 1000.0, static_cast<unsigned long long>(L->r.gaps));
    L->progress_frames = L->r.frames;
    L->last_progress = now;
  }
  if (elapsed >= L->o.duration_s) {
    L->stopping = true;
    L->r.seconds = static_cast<double>(now - L->measure_from) / 1e6;
    uv_timer_stop(t);
    uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
    for (Client* c : L->clients) close_client(c);
    if (L->o.forward) uv_close(reinterpret_cast<uv_handle_t*>(&L->pub), nullptr);
  }
}

}  // namespace

LoadResult run_load(const LoadOptions& o) {
  auto* L = new Loader;
  L->o = o;
  uv_loop_init(&L->loop);
  L->t0 = L->last_progress = wall_us();
  // Latency counts from warm-up on, and not before every connection could be open.
  const double ramp = static_cast<double>(o.connections) / std::max<uint32_t>(o.connect_rate, 1);
  L->measure_from = L->t0 + static_cast<int64_t>((std::max(o.warmup_s, ramp + 0.5)) * 1e6);
  if (o.forward) {
    start_publisher(L);
    start_client(L, true);
  }
  uv_timer_init(&L->loop, &L->tick);
  L->tick.data = L;
  uv_timer_start(&L->tick, on_tick, 0, 10);
  uv_run(&L->loop, UV_RUN_DEFAULT);
  uv_loop_close(&L->loop);
  LoadResult r = std::move(L->r);
  for (const auto& [channel, n] : L->first_channels) r.busiest_channel_frames = std::max(r.busiest_channel_frames, n);
  if (r.seconds < 0) r.seconds = 0;
  for (Client* c : L->clients) delete c;
  delete L;
  return r;
}

}  // namespace oddsrelay::load
