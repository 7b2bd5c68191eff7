#include "protocol/api/api_keys.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "protocol/json_in.h"

namespace oddsrelay::api {

const char* permission_name(Permission p) {
  switch (p) {
    case kPermLive:
      return "live";
    case kPermPrematch:
      return "prematch";
    case kPermOdds:
      return "odds";
    case kPermScores:
      return "scores";
    case kPermWidget:
      return "widget";
    case kPermStream:
      return "stream";
  }
  return "?";
}

Digest sha256(std::string_view data) {
  Digest d{};
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d.data(), &n, EVP_sha256(), nullptr);
  return d;
}

std::optional<std::array<uint8_t, 16>> parse_ip(std::string_view s) {
  std::string str(s);
  std::array<uint8_t, 16> out{};
  in_addr v4{};
  if (inet_pton(AF_INET, str.c_str(), &v4) == 1) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return out;
  }
  if (inet_pton(AF_INET6, str.c_str(), out.data()) == 1) return out;
  return std::nullopt;
}

std::optional<Cidr> parse_cidr(std::string_view s) {
  size_t slash = s.find('/');
  auto ip = parse_ip(s.substr(0, slash));
  if (!ip) return std::nullopt;
  bool v4 = s.substr(0, slash).find(':') == std::string_view::npos;
  Cidr c;
  c.addr = *ip;
  c.prefix = 128;
  if (slash != std::string_view::npos) {
    std::string_view p = s.substr(slash + 1);
    if (p.empty() || p.size() > 3) return std::nullopt;
    int n = 0;
    for (char ch : p) {
      if (ch < '0' || ch > '9') return std::nullopt;
      n = n * 10 + (ch - '0');
    }
    if (n > (v4 ? 32 : 128)) return std::nullopt;
    c.prefix = v4 ? 96 + n : n;
  }
  return c;
}

bool Cidr::contains(const std::array<uint8_t, 16>& ip) const {
  int bits = prefix;
  for (size_t i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((ip[i] & mask) != (addr[i] & mask)) return false;
  }
  return true;
}

bool ApiKey::allows_ip(const std::array<uint8_t, 16>& ip) const {
  if (allow_ips.empty()) return true;
  for (const auto& c : allow_ips)
    if (c.contains(ip)) return true;
  return false;
}

bool ApiKey::allows_origin(const WebOrigin& o) const {
  if (allow_origins.empty()) return true;
  for (const auto& p : allow_origins)
    if (p.matches(o)) return true;
  return false;
}

namespace {

std::string raw_json(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return sb.GetString();
}

bool hex_digest(std::string_view hex, Digest& out) {
  if (hex.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    auto nib = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
      return -1;
    };
    int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

WebhookConfig parse_webhook(const rapidjson::Value& v, const std::string& where) {
  if (!v.IsObject() || !v.HasMember("url") || !v["url"].IsString())
    throw std::runtime_error(where + " needs {\"url\": \"http[s]://host[:port]/path\"}");
  WebhookConfig w;
  w.url = v["url"].GetString();
  std::string_view u = w.url;
  if (u.starts_with("https://")) {
    w.tls = true;
    w.port = 443;
    u.remove_prefix(8);
  } else if (u.starts_with("http://")) {
    u.remove_prefix(7);
  } else {
    throw std::runtime_error(where + ".url must start with http:// or https://");
  }
  size_t slash = u.find('/');
  std::string_view hostport = u.substr(0, slash);
  w.path = slash == std::string_view::npos ? "/" : std::string(u.substr(slash));
  size_t colon = hostport.rfind(':');
  w.host = std::string(hostport.substr(0, colon));
  if (colon != std::string_view::npos) {
    int port = 0;
    for (char ch : hostport.substr(colon + 1)) {
      if (ch < '0' || ch > '9' || port > 65535) throw std::runtime_error(where + ".url has a bad port");
      port = port * 10 + (ch - '0');
    }
    if (port <= 0 || port > 65535) throw std::runtime_error(where + ".url has a bad port");
    w.port = static_cast<uint16_t>(port);
  }
  if (w.host.empty()) throw std::runtime_error(where + ".url has no host");
  if (v.HasMember("secret")) {
    if (!v["secret"].IsString()) throw std::runtime_error(where + ".secret is not a string");
    w.secret = v["secret"].GetString();
  }
  if (v.HasMember("events")) {
    if (!v["events"].IsArray()) throw std::runtime_error(where + ".events is not an array");
    w.events = 0;
    for (const auto& e : v["events"].GetArray()) {
      std::string_view n = e.IsString() ? e.GetString() : "";
      if (n == "odds_update")
        w.events |= kHookOdds;
      else if (n == "score_update")
        w.events |= kHookScore;
      else if (n == "event_ended")
        w.events |= kHookEnded;
      else if (n == "settlement_changed")
        w.events |= kHookSettlement;
      else
        throw std::runtime_error(where + ".events has an unknown event");
    }
  }
  return w;
}

}  // namespace

std::shared_ptr<const KeyStore> KeyStore::parse(std::string_view json) {
  rapidjson::Document doc;
  if (const json::InResult parsed = json::parse(json, doc, json::kFileLimits); !parsed)
    throw std::runtime_error(parsed.over_limit() ? "keys file refused: " + parsed.message(json::kFileLimits)
                                                 : "keys file is not valid JSON: " + parsed.detail + " at offset " +
                                                       std::to_string(parsed.offset));
  if (!doc.IsObject() || !doc.HasMember("keys") || !doc["keys"].IsArray())
    throw std::runtime_error("keys file needs {\"keys\":[...]}");
  auto store = std::make_shared<KeyStore>();
  int i = 0;
  for (const auto& k : doc["keys"].GetArray()) {
    std::string where = "keys[" + std::to_string(i++) + "]";
    if (!k.IsObject()) throw std::runtime_error(where + " is not an object");
    ApiKey key;
    if (k.HasMember("key") && k["key"].IsString() && k["key"].GetStringLength() > 0) {
      key.digest = sha256(std::string_view(k["key"].GetString(), k["key"].GetStringLength()));
    } else if (k.HasMember("key_sha256") && k["key_sha256"].IsString()) {
      if (!hex_digest(k["key_sha256"].GetString(), key.digest))
        throw std::runtime_error(where + ".key_sha256 is not 64 hex digits");
    } else {
      throw std::runtime_error(where + " needs \"key\" or \"key_sha256\"");
    }
    key.name = k.HasMember("name") && k["name"].IsString() ? k["name"].GetString() : where;
    if (k.HasMember("enabled")) {
      if (!k["enabled"].IsBool()) throw std::runtime_error(where + ".enabled is not a boolean");
      key.enabled = k["enabled"].GetBool();
    }
    if (k.HasMember("sandbox")) {
      if (!k["sandbox"].IsBool()) throw std::runtime_error(where + ".sandbox is not a boolean");
      key.sandbox = k["sandbox"].GetBool();
    }
    if (k.HasMember("rate_limit") && !k["rate_limit"].IsNull()) {
      if (!k["rate_limit"].IsUint() || k["rate_limit"].GetUint() == 0)
        throw std::runtime_error(where + ".rate_limit is not a positive integer");
      key.rate_limit = k["rate_limit"].GetUint();
    }
    if (k.HasMember("permissions")) {
      if (!k["permissions"].IsArray()) throw std::runtime_error(where + ".permissions is not an array");
      for (const auto& p : k["permissions"].GetArray()) {
        bool known = false;
        for (Permission perm : {kPermLive, kPermPrematch, kPermOdds, kPermScores, kPermWidget, kPermStream})
          if (p.IsString() && std::strcmp(p.GetString(), permission_name(perm)) == 0) {
            key.permissions |= perm;
            known = true;
          }
        if (!known) throw std::runtime_error(where + ".permissions has an unknown permission");
      }
    }
    if (k.HasMember("allow_ips")) {
      if (!k["allow_ips"].IsArray()) throw std::runtime_error(where + ".allow_ips is not an array");
      for (const auto& a : k["allow_ips"].GetArray()) {
        auto c = a.IsString() ? parse_cidr(a.GetString()) : std::nullopt;
        if (!c) throw std::runtime_error(where + ".allow_ips has an entry that is not an address or CIDR");
        key.allow_ips.push_back(*c);
      }
    }
    if (k.HasMember("allow_origins")) {
      if (!k["allow_origins"].IsArray()) throw std::runtime_error(where + ".allow_origins is not an array");
      for (const auto& a : k["allow_origins"].GetArray()) {
        auto p = a.IsString() ? parse_origin_pattern(a.GetString()) : std::nullopt;
        if (!p)
          throw std::runtime_error(where +
                                   ".allow_origins has an entry that is not an origin "
                                   "(https://host[:port] or https://*.domain)");
        key.allow_origins.push_back(std::move(*p));
      }
    }
    if (k.HasMember("http_connections")) {
      if (!k["http_connections"].IsUint() || k["http_connections"].GetUint() == 0)
        throw std::runtime_error(where + ".http_connections is not a positive integer");
      key.http_connections = k["http_connections"].GetUint();
    }
    if (k.HasMember("ws_connections")) {
      if (!k["ws_connections"].IsUint() || k["ws_connections"].GetUint() == 0)
        throw std::runtime_error(where + ".ws_connections is not a positive integer");
      key.ws_connections = k["ws_connections"].GetUint();
    }
    if (k.HasMember("widget") && k["widget"].IsObject()) key.widget_json = raw_json(k["widget"]);
    if (k.HasMember("webhook") && !k["webhook"].IsNull()) key.webhook = parse_webhook(k["webhook"], where + ".webhook");
    store->keys_.push_back(std::move(key));
  }
  return store;
}

std::shared_ptr<const KeyStore> KeyStore::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read keys file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str());
}

std::shared_ptr<const KeyStore> KeyStore::demo(std::string& key_out) {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("no randomness for the demo key");
  static const char* hex = "0123456789abcdef";
  key_out = "demo-";
  for (unsigned char b : raw) {
    key_out += hex[b >> 4];
    key_out += hex[b & 15];
  }
  auto store = std::make_shared<KeyStore>();
  ApiKey k;
  k.name = "demo";
  k.digest = sha256(key_out);
  k.sandbox = true;
  k.permissions = kPermLive | kPermPrematch | kPermOdds | kPermScores | kPermWidget | kPermStream;
  store->keys_.push_back(std::move(k));
  return store;
}

const ApiKey* KeyStore::find(std::string_view presented) const {
  if (presented.empty()) return nullptr;
  Digest d = sha256(presented);
  const ApiKey* found = nullptr;
  for (const auto& k : keys_)  // no early exit: the time does not depend on which key matched
    if (CRYPTO_memcmp(k.digest.data(), d.data(), d.size()) == 0) found = &k;
  return found;
}

}  // namespace oddsrelay::api
