#include "engine/bus/snapshot_transfer.h"

#include "engine/storage/snapshot_file.h"

namespace oddsrelay::bus {

namespace {

// Publishes one message and waits for its ack; `expect_last` 0 = no check.
bool publish_sync(NatsLink& link, const std::string& subject, std::string_view data, const char* chunk,
                  uint64_t expect_last, uint64_t& seq, std::string& err) {
  natsMsg* m = nullptr;
  natsStatus s = natsMsg_Create(&m, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && chunk) s = natsMsgHeader_Set(m, kChunkHeader, chunk);
  if (s == NATS_OK && expect_last)
    s = natsMsgHeader_Set(m, kExpectedLastSeqHeader, std::to_string(expect_last).c_str());
  if (s != NATS_OK) {
    natsMsg_Destroy(m);
    return err = nats_error("snapshot message", s), false;
  }
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 10'000;
  s = js_PublishMsg(&ack, link.js(), m, &po, &jerr);
  natsMsg_Destroy(m);
  if (s != NATS_OK) return err = nats_error(("publish " + subject).c_str(), s, jerr), false;
  seq = ack->Sequence;
  jsPubAck_Destroy(ack);
  return true;
}

}  // namespace

Got read_head(NatsLink& link, SnapshotHead& out, std::string& err) {
  StoredMsg m;
  Got g = link.get_last(snapshot_stream(link.url().stream), head_subject(link.url().stream), m, err);
  if (g != Got::Ok) return g;
  if (!parse_head(m.data, out, err)) return Got::Failed;
  return Got::Ok;
}

bool put_snapshot(NatsLink& link, const Snapshot& s, uint64_t stream_seq, SnapshotHead& out, std::string& err) {
  const std::string& stream = link.url().stream;
  SnapshotHead prev;
  std::string ignored;
  const bool had_prev = read_head(link, prev, ignored) == Got::Ok;

  std::string data;
  const uint64_t events = encode_snapshot(s, [&](std::string& piece) {
    data += piece;
    piece.clear();
  });
  const std::string subject = snapshot_subject(stream, s.seq);
  const uint32_t chunks = static_cast<uint32_t>((data.size() + kChunkBytes - 1) / kChunkBytes);
  uint64_t first = 0, last = 0;
  for (uint32_t i = 0; i < chunks; ++i) {
    const std::string tag = std::to_string(i) + "/" + std::to_string(chunks);
    uint64_t seq = 0;
    // Chunks after the first must follow it directly: the edge reads them
    // by sequence.
    if (!publish_sync(link, subject, std::string_view(data).substr(size_t{i} * kChunkBytes, kChunkBytes), tag.c_str(),
                      i ? last : 0, seq, err))
      return false;
    if (i == 0) first = seq;
    last = seq;
  }
  out.epoch = s.epoch;
  out.seq = s.seq;
  out.stream_seq = stream_seq;
  out.first = first;
  out.chunks = chunks;
  out.bytes = data.size();
  out.events = events;
  out.xxh = xxh_hex(data);
  uint64_t head_seq = 0;
  if (!publish_sync(link, head_subject(stream), encode_head(out), nullptr, 0, head_seq, err)) return false;
  // Below 1 there is nothing to purge (and nats-server 2.9 reads a purge
  // up to sequence 1 as "purge everything").
  if (had_prev && prev.first > 1 && prev.first < first && !link.purge_below(snapshot_stream(stream), prev.first, err))
    return false;
  return true;
}

Got fetch_snapshot(NatsLink& link, const SnapshotHead& head, std::string& data, std::string& err) {
  const std::string snap = snapshot_stream(link.url().stream);
  const std::string subject = snapshot_subject(link.url().stream, head.seq);
  data.clear();
  data.reserve(head.bytes);
  for (uint32_t i = 0; i < head.chunks; ++i) {
    StoredMsg m;
    Got g = link.get_msg(snap, head.first + i, m, err);
    if (g != Got::Ok) return g;
    const std::string tag = std::to_string(i) + "/" + std::to_string(head.chunks);
    if (m.subject != subject || m.chunk != tag)
      return err = "snapshot chunk " + tag + " of seq " + std::to_string(head.seq) + " is not where its head says",
             Got::Failed;
    data += m.data;
  }
  if (data.size() != head.bytes || xxh_hex(data) != head.xxh)
    return err = "snapshot at seq " + std::to_string(head.seq) + " fails its size or checksum", Got::Failed;
  return Got::Ok;
}

}  // namespace oddsrelay::bus
