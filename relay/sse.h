// /pt-sse: the /pt-ws push relay as Server-Sent Events (docs/api.md), for
// clients without a WebSocket library (curl -N, a browser's EventSource,
// any proxy). Every stream rule is /pt-ws's: the same buckets, frames,
// send queue and slow-consumer rules; only the framing differs. Each
// frame a loop sends is turned into its SSE form once per loop, on the
// loop-local frame (FrameRef::other), and shared by every SSE stream of
// that loop: one event per /pt-ws frame, `data:` the frame's payload byte
// for byte, an INFO with `id: <epoch>:<seq>` (what EventSource sends back
// as Last-Event-ID), the heartbeat ping as a `: ping` comment.
#pragma once

#include <string_view>

#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// The response head and the stream's first line (`retry: 1000`).
FrameRef sse_head();
// The SSE form of a WebSocket frame `ws`; empty for frames SSE has no use
// for (a pong, a close: the socket is closed instead).
FrameRef sse_event(const FrameRef& ws, std::string_view epoch);

}  // namespace oddsrelay::relay
