#include "protocol/bus_contract.h"

#include <rapidjson/document.h>
#include <xxhash.h>

#include <charconv>
#include <cstdio>

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

bool parse_bus_url(std::string_view url, BusUrl& out, std::string& err) {
  constexpr std::string_view kScheme = "nats://";
  if (url.substr(0, kScheme.size()) != kScheme) return err = "bus URL must start with nats://", false;
  url.remove_prefix(kScheme.size());
  const size_t slash = url.find('/');
  if (slash == std::string_view::npos) return err = "bus URL needs a stream: nats://HOST:PORT/STREAM", false;
  std::string_view hostport = url.substr(0, slash), stream = url.substr(slash + 1);
  if (stream.empty() || stream.size() > 64) return err = "bus URL needs a stream name (1-64 characters)", false;
  for (char c : stream)
    if (!stream_char(c)) return err = "stream name may hold only letters, digits, '-' and '_'", false;
  const size_t colon = hostport.rfind(':');
  uint64_t port = 4222;
  if (colon != std::string_view::npos) {
    if (!parse_u64(hostport.substr(colon + 1), port) || port == 0 || port > 65535)
      return err = "bad port in bus URL", false;
    hostport = hostport.substr(0, colon);
  }
  if (hostport.empty()) return err = "bus URL needs a host", false;
  out.host = std::string(hostport);
  out.port = static_cast<uint16_t>(port);
  out.stream = std::string(stream);
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
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) return err = "snapshot head is not a JSON object", false;
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
