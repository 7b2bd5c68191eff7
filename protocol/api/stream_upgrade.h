// The WebSocket handshake of /ws and /pt-ws as the REST side sees it: the
// request has passed the same route, key, address, permission and rate
// checks as any REST call; this validates the upgrade itself (RFC 6455
// 4.2.1) and describes the stream in a ticket that travels with the socket
// to the relay loop, which owns the connection from then on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/http_request.h"

namespace oddsrelay::api {

struct StreamTicket {
  enum class Kind : uint8_t { Ws, PtWs, Sse };  // Sse: /pt-sse, the /pt-ws frames as Server-Sent Events
  Kind kind = Kind::PtWs;
  std::string accept;   // Sec-WebSocket-Accept for the 101 response
  uint64_t key_id = 0;  // identifies the key for the per-key connection limit
  std::string key_name;
  std::string client;  // the client's address as --trust-proxy decides it (the access log)
  uint32_t permissions = 0;
  uint32_t max_connections = 5;  // concurrent streams of this key
  std::vector<int32_t> sports;   // /pt-ws sports filter; empty = every sport
  // /pt-ws events= and markets= filters (docs/api.md): event numbers (any
  // id form resolves to one; unknown ones are kept) and market ids, sorted,
  // unique; empty = every one.
  std::vector<uint64_t> events;
  std::vector<uint32_t> markets;
  // /pt-ws conflate_ms=: the latest state at most every this many ms (0:
  // every change).
  uint32_t conflate_ms = 0;
  // /pt-ws verify=1: every INFO that closes a group carries the digest of
  // the stream's view (docs/api.md "State digest").
  bool verify = false;
  // /ws and /pt-ws: the client offered permessage-deflate in a form the
  // server can accept (protocol/ws_deflate.h); the relay answers it unless
  // --ws-compression off.
  bool deflate_offered = false;
  // resume=<epoch>:<seq> (both streams): where the client's state stands.
  // A malformed value is not refused: such a stream starts with a snapshot
  // and is told why.
  enum class Resume : uint8_t { None, Asked, Malformed };
  Resume resume = Resume::None;
  std::string resume_epoch;
  uint64_t resume_seq = 0;
};

// Receives an upgraded connection: the socket (owned by the callee) and
// the bytes the client sent after its handshake.
using StreamOpener = std::function<void(StreamTicket ticket, int fd, std::string pending)>;

struct HandshakeError {
  int status = 0;  // 0: the handshake is valid
  const char* error = "";
  const char* extra_headers = "";
};

// At most this many ids in a /pt-ws events= or markets= list.
inline constexpr size_t kMaxFilterEvents = 100, kMaxFilterMarkets = 64;
inline constexpr uint32_t kMaxConflateMs = 60'000;

// Validates the upgrade headers and the stream's query parameters; fills
// kind, accept, the filters and resume. /pt-sse is no upgrade: only its
// parameters are checked, and its resume may come as Last-Event-ID.
HandshakeError check_stream_handshake(const http::Request& req, StreamTicket& t);

// Parses a resume value "<epoch>:<seq>" (the epoch is everything before the
// last ':', 1 to 64 characters; seq is decimal). False if malformed.
bool parse_resume(std::string_view v, std::string& epoch, uint64_t& seq);

}  // namespace oddsrelay::api
