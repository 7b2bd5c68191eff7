#include "protocol/bus_contract.h"

#include <rapidjson/document.h>
#include <xxhash.h>

#include <charconv>
#include <cstdio>

#include "protocol/json_in.h"
#include "protocol/json_out.h"

namespace oddsrelay::bus {

namespace {

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool stream_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

std::string BusUrl::server() const {
  std::string out;
  for (const BusServer& s : servers) {
    if (!out.empty()) out += ',';
    out += s.url();
  }
  return out;
}

std::vector<std::string> BusUrl::server_urls() const {
  std::vector<std::string> out;
  for (const BusServer& s : servers) out.push_back(s.url());
  return out;
}

std::string BusUrl::str() const {
  std::string out = "nats://";
  for (size_t i = 0; i < servers.size(); ++i) {
    if (i) out += ',';
    out += servers[i].host;
    out += ':';
    out += std::to_string(servers[i].port);
  }
  out += '/';
  return out + stream;
}

namespace {

bool host_char(char c) { return stream_char(c) || c == '.'; }

// HOST[:PORT], a host name or IPv4 address (IPv6 in brackets).
bool parse_server(std::string_view item, BusServer& out, std::string& err) {
  constexpr std::string_view kScheme = "nats://";
  if (item.substr(0, kScheme.size()) == kScheme) item.remove_prefix(kScheme.size());
  if (item.empty()) return err = "empty server in bus URL (a stray ','?)", false;
  std::string_view host = item, port;
  if (item.front() == '[') {
    const size_t close = item.find(']');
    if (close == std::string_view::npos) return err = "unclosed '[' in bus server '" + std::string(item) + "'", false;
    host = item.substr(0, close + 1);
    if (close + 1 < item.size()) {
      if (item[close + 1] != ':') return err = "bad bus server '" + std::string(item) + "'", false;
      port = item.substr(close + 2);
      if (port.empty()) return err = "empty port in bus server '" + std::string(item) + "'", false;
    }
  } else if (const size_t colon = item.find(':'); colon != std::string_view::npos) {
    host = item.substr(0, colon);
    port = item.substr(colon + 1);
    if (port.empty()) return err = "empty port in bus server '" + std::string(item) + "'", false;
  }
  if (host.empty()) return err = "bus server '" + std::string(item) + "' needs a host", false;
  if (host.front() != '[')
    for (char c : host)
      if (!host_char(c)) return err = "bad host in bus server '" + std::string(item) + "'", false;
  uint64_t p = 4222;
  if (!port.empty() && (!parse_u64(port, p) || p == 0 || p > 65535))
    return err = "bad port in bus server '" + std::string(item) + "' (1-65535)", false;
  out.host = std::string(host);
  out.port = static_cast<uint16_t>(p);
  return true;
}

}  // namespace

bool parse_bus_url(std::string_view url, BusUrl& out, std::string& err) {
  constexpr std::string_view kScheme = "nats://";
  if (url.substr(0, kScheme.size()) != kScheme) return err = "bus URL must start with nats://", false;
  url.remove_prefix(kScheme.size());
  // The stream follows the last '/': a list may repeat nats:// per server.
  const size_t slash = url.rfind('/');
  if (slash == std::string_view::npos || (slash > 0 && url[slash - 1] == '/'))
    return err = "bus URL needs a stream: nats://HOST:PORT[,HOST:PORT...]/STREAM", false;
  std::string_view list = url.substr(0, slash), stream = url.substr(slash + 1);
  if (stream.empty() || stream.size() > 64) return err = "bus URL needs a stream name (1-64 characters)", false;
  for (char c : stream)
    if (!stream_char(c)) return err = "stream name may hold only letters, digits, '-' and '_'", false;
  BusUrl u;
  u.stream = std::string(stream);
  for (;;) {
    const size_t comma = list.find(',');
    BusServer s;
    if (!parse_server(list.substr(0, comma), s, err)) return false;
    for (const BusServer& o : u.servers)
      if (o.host == s.host && o.port == s.port) return err = "bus server " + s.url() + " is listed twice", false;
    u.servers.push_back(std::move(s));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  out = std::move(u);
  return true;
}

std::string msg_id(std::string_view epoch, uint64_t seq) {
  std::string s(epoch);
  s += ':';
  s += std::to_string(seq);
  return s;
}

bool parse_msg_id(std::string_view id, std::string& epoch, uint64_t& seq) {
  const size_t colon = id.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  if (id.substr(0, colon).find(':') != std::string_view::npos) return false;
  if (!parse_u64(id.substr(colon + 1), seq) || seq == 0) return false;
  epoch = std::string(id.substr(0, colon));
  return true;
}

size_t count_lines(std::string_view payload) {
  size_t n = 0;
  for_each_line(payload, [&](std::string_view) { ++n; });
  return n;
}

std::string xxh_hex(std::string_view data) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(XXH3_64bits(data.data(), data.size())));
  return buf;
}

std::string encode_head(const SnapshotHead& h) {
  std::string out;
  json::StringSink sink(out);
  json::Writer w(sink);
  w.StartObject();
  w.Key("epoch");
  json::str(w, h.epoch);
  w.Key("seq");
  w.Uint64(h.seq);
  w.Key("stream_seq");
  w.Uint64(h.stream_seq);
  w.Key("first");
  w.Uint64(h.first);
  w.Key("chunks");
  w.Uint(h.chunks);
  w.Key("bytes");
  w.Uint64(h.bytes);
  w.Key("events");
  w.Uint64(h.events);
  w.Key("xxh");
  json::str(w, h.xxh);
  w.EndObject();
  return out;
}

bool parse_head(std::string_view json, SnapshotHead& out, std::string& err) {
  rapidjson::Document d;
  const json::InResult parsed = json::parse(json, d, json::kFeedLimits);
  if (!parsed) return err = "snapshot head refused: " + parsed.message(json::kFeedLimits), false;
  if (!d.IsObject()) return err = "snapshot head is not a JSON object", false;
  auto u64 = [&](const char* k, uint64_t& v) {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsUint64()) return false;
    v = it->value.GetUint64();
    return true;
  };
  auto str = [&](const char* k, std::string& v) {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsString()) return false;
    v = it->value.GetString();
    return true;
  };
  uint64_t chunks = 0;
  if (!str("epoch", out.epoch) || out.epoch.empty() || !u64("seq", out.seq) || !u64("stream_seq", out.stream_seq) ||
      !u64("first", out.first) || !u64("chunks", chunks) || chunks == 0 || chunks > UINT32_MAX ||
      !u64("bytes", out.bytes) || !u64("events", out.events) || !str("xxh", out.xxh) || out.xxh.size() != 16)
    return err = "snapshot head lacks a field", false;
  out.chunks = static_cast<uint32_t>(chunks);
  return true;
}

}  // namespace oddsrelay::bus
