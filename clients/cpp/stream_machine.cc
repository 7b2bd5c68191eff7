// The client's state machine (stream_machine.h).
#include "clients/cpp/stream_machine.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>

#include "clients/cpp/json_text.h"
#include "protocol/digest_terms.h"
#include "protocol/relay_frame.h"

namespace oddsrelay::client {

const char* state_name(State s) {
  switch (s) {
    case State::kConnecting:
      return "connecting";
    case State::kSyncing:
      return "syncing";
    case State::kLive:
      return "live";
    case State::kStale:
      return "stale";
    case State::kResyncing:
      return "resyncing";
  }
  return "?";
}

std::string event_json(const Event& e) {
  std::string out = "{";
  if (e.resync) {
    out += "\"resync\":";
    append_json_string(out, e.reason);
  } else {
    out += "\"state\":";
    append_json_string(out, state_name(e.state));
    out += ",\"epoch\":";
    append_json_or_null(out, e.epoch);
  }
  out += ",\"seq\":";
  out += e.seq ? std::to_string(*e.seq) : "null";
  if (!e.resync) out += e.verified ? ",\"verified\":true" : ",\"verified\":false";
  out += '}';
  return out;
}

namespace {

// The fields of an INFO body the client reads (docs/api.md "/pt-ws"); one
// flat SAX pass, nothing allocated once the strings have their capacity.
struct InfoFields : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, InfoFields> {
  bool has_seq = false, has_from = false, has_digest = false, has_error = false, ready = false;
  std::optional<bool> resumed;
  std::optional<uint64_t> frames;  // the ready INFO's count of the snapshot's frames
  uint64_t seq = 0, from = 0;
  std::string digest, epoch, reason;
  int depth = 0;
  std::string_view key;
  char key_buf[32];

  void clear() {
    has_seq = has_from = has_digest = has_error = ready = false;
    resumed.reset();
    frames.reset();
    seq = from = 0;
    digest.clear();
    epoch.clear();
    reason.clear();
    depth = 0;
  }
  bool scalar() {
    if (depth == 0) return false;
    if (depth == 1 && key == "error") has_error = true;
    return true;
  }
  bool Null() { return scalar(); }
  bool Bool(bool b) {
    if (depth == 1 && key == "ready") ready = b;
    if (depth == 1 && key == "resumed") resumed = b;
    return scalar();
  }
  bool Int(int v) { return v >= 0 ? Uint64(static_cast<uint64_t>(v)) : scalar(); }
  bool Int64(int64_t v) { return v >= 0 ? Uint64(static_cast<uint64_t>(v)) : scalar(); }
  bool Uint(unsigned v) { return Uint64(v); }
  bool Uint64(uint64_t v) {
    if (depth == 1 && key == "seq") has_seq = true, seq = v;
    if (depth == 1 && key == "from") has_from = true, from = v;
    if (depth == 1 && key == "frames") frames = v;
    return scalar();
  }
  bool Double(double) { return scalar(); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (depth == 1) {
      if (key == "digest") has_digest = true, digest.assign(s, n);
      if (key == "epoch") epoch.assign(s, n);
      if (key == "reason") reason.assign(s, n);
    }
    return scalar();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (depth == 1) {
      const size_t m = std::min<size_t>(n, sizeof key_buf);
      std::copy(s, s + m, key_buf);
      key = std::string_view(key_buf, m);
    }
    return true;
  }
  bool StartObject() {
    if (depth == 1 && key == "error") has_error = true;
    ++depth;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth;
    return true;
  }
  bool StartArray() {
    if (depth == 0) return false;
    ++depth;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth;
    return true;
  }
};

bool parse_info(std::string_view body, InfoFields& f) {
  f.clear();
  rapidjson::MemoryStream ms(body.data(), body.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(ms);
  thread_local rapidjson::Reader reader;  // its parse stack kept: no allocation per INFO
  return !reader.Parse(in, f).IsError();
}

thread_local InfoFields t_info;

}  // namespace

std::optional<unsigned> StreamMachine::begin_connect() {
  if (state_ != State::kResyncing && state_ != State::kStale) set_state(State::kConnecting);
  std::optional<unsigned> wait;
  if (attempt_) wait = attempt_ - 1;
  ++attempt_;
  return wait;
}

std::string StreamMachine::resume_query() const {
  if (!resume_ || !seq_) return {};
  return "&resume=" + epoch_.value_or("") + ":" + std::to_string(*seq_);
}

void StreamMachine::connected() {
  need_ready_ = true;
  n_pending_ = 0;
}

void StreamMachine::on_cut(bool stopping) {
  if (!stopping && state_ != State::kStale && state_ != State::kResyncing) set_state(State::kConnecting);
}

void StreamMachine::on_stale() { set_state(State::kStale); }

State StreamMachine::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::optional<uint64_t> StreamMachine::seq() const {
  std::lock_guard lock(mu_);
  return seq_;
}

View StreamMachine::view() const {
  std::lock_guard lock(mu_);
  View v;
  v.state = state_;
  v.epoch = epoch_;
  v.seq = seq_;
  v.verified = verified_;
  v.digest = replica_.digest();
  v.odds_digest = replica_.odds_digest();
  v.data = replica_.data();
  return v;
}

void StreamMachine::set_state(State s) {
  if (s == state_) return;
  {
    std::lock_guard lock(mu_);
    state_ = s;
  }
  if (cb_.on_event) cb_.on_event(Event{false, s, {}, conn_epoch_ ? conn_epoch_ : epoch_, seq_, verified_});
}

void StreamMachine::resync(std::string reason) {
  ++resyncs_;
  pending_resync_ = reason;
  if (cb_.on_event) cb_.on_event(Event{true, state_, std::move(reason), {}, seq_, false});
  resume_ = false;
  verified_ = false;
  set_state(State::kResyncing);
}

StreamMachine::Next StreamMachine::fail(const char* reason) {
  resync(reason);
  return Next::kDrop;
}

StreamMachine::Next StreamMachine::on_binary() { return fail("bad_frame"); }

StreamMachine::Next StreamMachine::on_message(std::string_view frame) {
  auto f = relay::parse_relay_frame(frame);
  if (!f) return fail("bad_frame");
  if (need_ready_) {
    if (f->type != "INFO") return fail("bad_frame");
    return on_ready(f->body);
  }
  if (f->type == "INFO") return on_info(f->body);
  // Held until the INFO closes the group; the strings keep their capacity.
  if (n_pending_ == pending_.size()) pending_.emplace_back();
  pending_[n_pending_++].assign(frame);
  if (snapshot_ && snapshot_frames_ && n_pending_ == *snapshot_frames_) return close_snapshot();
  return Next::kContinue;
}

// The ready INFO counted the snapshot's frames and they are all here: it is
// applied now, at the ready INFO's seq, rather than with the next group (on
// a feed standing still there may be none for a long time).
StreamMachine::Next StreamMachine::close_snapshot() {
  snapshot_frames_.reset();
  return apply_group(chain_, snapshot_digest_);
}

StreamMachine::Next StreamMachine::on_ready(std::string_view body) {
  InfoFields& r = t_info;
  if (!parse_info(body, r)) return fail("bad_frame");
  if (r.has_error) {  // over the key's stream limit: a cut, retried with backoff
    on_cut(false);
    return Next::kDrop;
  }
  if (!r.ready || !r.has_seq) return fail("bad_frame");
  need_ready_ = false;
  attempt_ = 0;
  resume_ = true;
  if (r.resumed == false && seq_ && state_ != State::kResyncing) resync("resume_refused:" + r.reason);
  if (r.resumed == true && seq_) {
    snapshot_ = false;
    chain_ = *seq_;
    conn_epoch_ = epoch_;
    set_state(State::kLive);
  } else {
    snapshot_ = true;
    chain_ = r.seq;
    conn_epoch_ = r.epoch;
    snapshot_frames_ = r.frames;  // an older server does not count: its next INFO closes the snapshot
    snapshot_digest_.reset();
    if (r.has_digest) snapshot_digest_ = r.digest;
    set_state(State::kSyncing);
    if (snapshot_frames_ == 0u) return close_snapshot();
  }
  return Next::kContinue;
}

StreamMachine::Next StreamMachine::on_info(std::string_view body) {
  InfoFields& info = t_info;
  if (!parse_info(body, info) || !info.has_seq || !info.has_from) return fail("bad_frame");
  if (info.from != chain_ + 1) return fail("gap");
  snapshot_frames_.reset();  // an INFO before the count was reached: it closes the snapshot as it always did
  std::optional<std::string> digest;
  if (info.has_digest) digest = info.digest;
  return apply_group(info.seq, digest);
}

// The held frames, applied as one group at `seq` (a snapshot replaces the
// replica whole), then checked against the server's digest when it sent one.
StreamMachine::Next StreamMachine::apply_group(uint64_t seq, const std::optional<std::string>& digest) {
  ops_.clear();
  for (size_t i = 0; i < n_pending_; ++i) {
    auto f = relay::parse_relay_frame(pending_[i]);
    if (!parser_.parse(f->channel, f->body, ops_)) return fail("bad_frame");
  }
  n_pending_ = 0;
  if (snapshot_) {
    // A snapshot replaces the replica whole, at its INFO.
    scratch_.clear();
    for (const FrameOp& op : ops_) scratch_.apply(op);
    std::lock_guard lock(mu_);
    std::swap(replica_, scratch_);
    seq_ = seq;
    epoch_ = conn_epoch_;
  } else {
    std::lock_guard lock(mu_);
    for (const FrameOp& op : ops_) replica_.apply(op);
    seq_ = seq;
    epoch_ = conn_epoch_;
  }
  chain_ = seq;
  snapshot_ = false;
  bool verified = false;
  if (digest) {
    if (*digest != digest_hex(replica_.digest())) return fail("digest_mismatch");
    verified = true;
  }
  verified_ = verified;
  ++groups_;
  set_state(State::kLive);
  std::string resync = std::move(pending_resync_);
  pending_resync_.clear();
  if (!cb_.on_group) return Next::kContinue;
  Group g;
  g.seq = seq;
  g.epoch = epoch_.value_or("");
  g.verified = verified;
  g.resync = std::move(resync);
  for (const FrameOp& op : ops_) {
    if (op.kind == FrameOp::kEvent) g.events.emplace_back(op.key);
    if (op.kind == FrameOp::kMarket) g.markets.emplace_back(op.number, op.key);
  }
  std::sort(g.events.begin(), g.events.end());
  g.events.erase(std::unique(g.events.begin(), g.events.end()), g.events.end());
  std::sort(g.markets.begin(), g.markets.end());
  g.markets.erase(std::unique(g.markets.begin(), g.markets.end()), g.markets.end());
  cb_.on_group(g);
  return Next::kContinue;
}

}  // namespace oddsrelay::client
