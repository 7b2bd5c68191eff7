// The bytes both streams send, each encoded once into a shared frame
// (relay/shared_frame.h) and fanned out unchanged. Shapes are those of
// docs/api.md "Streams":
//
//   /pt-ws  P    evt:<sport>           {<event id>: <event object> | null}
//           P    odds:<sport>:<number> {<market id>: <market object> | null}
//           INFO PUB                   {"ready":true,"epoch":E,"seq":N,...} on
//                                      connect, then {"seq":N,"from":M,"at":T}
//                                      closing the frames of records M..N
//   /ws     {"type":"snapshot"|"resumed"|"live_update"|"market"|"subscribed",
//            "seq":N, ...}
//
// null marks a removed event or market. A market object is the /v1/odds
// line map of that market.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/snapshot.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// An event for an event map: its id and its entry, null once removed.
struct EventItem {
  std::string_view key;
  const EventEntry* entry;
  uint64_t number = 0;  // when entry is null: the event's number (0: read from key)
};

// What a handshake's resume= came to, for the first message: not asked
// (no fields), resumed, or refused with a reason.
struct ResumeNote {
  bool asked = false;
  bool resumed = false;
  std::string_view reason;
};

// What the ready INFO says of the connect snapshot that follows it, so a
// client can close the snapshot as its last frame arrives rather than at
// the next group's INFO (on a feed standing still, there is none): how
// many P frames it has and, with verify=1, the view's digest once they are
// applied. Absent on a resumed stream's ready INFO (no snapshot follows).
struct SnapshotNote {
  std::optional<size_t> frames;
  std::optional<uint64_t> digest;
};

// The server's own clocks on a batch, in microseconds since the Unix epoch
// (docs/api.md, "Latency stamps"); 0 = not stamped.
struct Stamps {
  int64_t arrived_us = 0;  // the batch's first record reached the node (0: not stamped)
  int64_t applied_us = 0;  // the engine had applied the batch's records
  int64_t encoded_us = 0;  // the relay's hub had encoded its frames
};

// /pt-ws
FrameRef pt_ready(const Snapshot& s, std::span<const int32_t> sports, uint32_t permissions_mask, ResumeNote note = {},
                  SnapshotNote snapshot = {});
// `digest`: a verify=1 stream's view digest at `seq` (relay/view_digest.h).
FrameRef pt_marker(uint64_t seq, uint64_t from, int64_t at, uint64_t conflated = 0, Stamps stamps = {},
                   std::optional<uint64_t> digest = std::nullopt);
// `parts`, when given, receives each entry's place (the event numbers are
// the entries' own).
FrameRef pt_events(int32_t sport, std::span<const EventItem> events, std::vector<Part>* parts = nullptr);
// Every market of the event (`markets` empty) or just those ids (a missing
// one as null).
FrameRef pt_odds(const EventEntry& e, int32_t sport, std::span<const uint32_t> markets,
                 std::vector<Part>* parts = nullptr);
// The frame `from` (a P frame) with only its entries `keep` (a subset of
// its parts, in order), encoded anew; its parts, if asked, go to `parts`.
FrameRef pt_cut(const FrameRef& from, std::span<const Part> keep, std::vector<Part>* parts = nullptr);

// /ws
// `prematch` false: the pre-match map is empty (the key lacks the permission).
FrameRef ws_snapshot(const Snapshot& s, bool prematch = true, ResumeNote note = {});
// Instead of the snapshot when a resume succeeded; `changed` live events
// follow in one live_update (none when 0).
FrameRef ws_resumed(const Snapshot& s, size_t changed);
FrameRef ws_live_update(int64_t ts, uint64_t seq, std::span<const EventItem> events);
FrameRef ws_market(const EventEntry& e, uint32_t market, int64_t ts, uint64_t seq);
// The same with null outcomes, for an event gone from the state (its
// markets went with it), named by the key it had.
FrameRef ws_market_removed(std::string_view event_key, uint32_t market, int64_t ts, uint64_t seq);
FrameRef ws_subscribed(std::string_view event_key, std::span<const uint32_t> markets, uint64_t seq);
// {"error":"<msg>","seq":N}; msg is one of our constants, JSON-safe as is.
FrameRef ws_error(std::string_view msg, uint64_t seq);

// Any text message, e.g. {"error":"..."}.
FrameRef text_frame(std::string_view payload);
FrameRef control_frame(ws::Opcode op, std::string_view payload);
FrameRef close_frame(uint16_t code, std::string_view reason);
// Raw bytes that are not a WebSocket frame (the 101 response).
FrameRef raw_bytes(std::string_view bytes);
// The 101 answering a handshake; `deflate`: permessage-deflate accepted
// (Sec-WebSocket-Extensions: ws::kDeflateResponse).
FrameRef upgrade_response(std::string_view accept, bool deflate);

}  // namespace oddsrelay::relay
