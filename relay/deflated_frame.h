// The permessage-deflate copy of a frame the relay sends (RFC 7692;
// protocol/ws_deflate.h): a loop compresses a data frame once, the first
// time a stream that negotiated the extension is sent it (Outbox::framed),
// and caches the copy on the loop-local frame (FrameRef::other), so every
// stream of the loop that negotiated it, in any filter bucket, is sent the
// same compressed bytes. No context is kept between messages, which is
// what makes the copy the same for every stream.
#pragma once

#include <string_view>

#include "protocol/ws_deflate.h"
#include "relay/shared_frame.h"

namespace oddsrelay::relay {

// A whole text or binary frame whose payload is at least
// ws::kDeflateMinPayload bytes; control frames and raw bytes (the 101)
// never are.
bool deflatable(std::string_view frame);
// The frame `f` (deflatable) with its payload compressed alone and RSV1 set.
FrameRef deflated_frame(ws::Deflater& d, const FrameRef& f);

}  // namespace oddsrelay::relay
