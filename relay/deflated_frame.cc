// The compressed copy of a frame (deflated_frame.h).
#include "relay/deflated_frame.h"

namespace oddsrelay::relay {

bool deflatable(std::string_view frame) {
  if (frame.size() < 2) return false;
  const auto b0 = static_cast<unsigned char>(frame[0]);
  if (b0 != (0x80 | ws::kText) && b0 != (0x80 | ws::kBinary)) return false;  // FIN, no RSV, data
  return ws::frame_payload(frame).size() >= ws::kDeflateMinPayload;
}

FrameRef deflated_frame(ws::Deflater& d, const FrameRef& f) {
  const std::string_view bytes = f->bytes();
  const auto op = static_cast<ws::Opcode>(static_cast<unsigned char>(bytes[0]) & 0x0f);
  FrameBuilder b;
  d.compress(ws::frame_payload(bytes), b.payload());
  return b.finish(op, ws::kRsv1);
}

}  // namespace oddsrelay::relay
