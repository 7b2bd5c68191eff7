// The C++ client's state machine (docs/clients.md "States"), without
// sockets: the connection loop (client.cc) tells it when a connection
// opens, each text message, a cut and silence; it keeps the replica and
// says what happened through its callbacks. The unit tests drive it with
// scripted frames. Same semantics as the Python client (stream.py):
//
//   connecting -> syncing -> live -> stale -> resyncing
//
// A group's frames are held until the INFO that closes it and applied
// together (a snapshot into a fresh replica swapped in whole, as soon as
// the ready INFO's count of its frames has arrived), so view()
// is always a state the server had at one seq. A gap, a refused resume, a
// frame that does not parse or apply and a digest mismatch throw the
// replica away: the next connection asks for a snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clients/cpp/frame_ops.h"
#include "clients/cpp/replica.h"

namespace oddsrelay::client {

enum class State { kConnecting, kSyncing, kLive, kStale, kResyncing };
const char* state_name(State s);

// A state change ({"state","epoch","seq","verified"}) or a resync
// ({"resync","seq"}), the CLI's stdout lines.
struct Event {
  bool resync = false;
  State state = State::kConnecting;
  std::string reason;  // resync: gap, resume_refused:<why>, bad_frame, digest_mismatch
  std::optional<std::string> epoch;
  std::optional<uint64_t> seq;
  bool verified = false;
};
// The line the CLI prints for an event (the Python CLI's, byte for byte).
std::string event_json(const Event& e);

// One INFO group, applied.
struct Group {
  uint64_t seq = 0;
  std::string epoch;
  std::vector<std::string> events;                        // event ids changed, sorted
  std::vector<std::pair<uint64_t, std::string>> markets;  // (event number, market id) changed, sorted
  bool verified = false;                                  // its digest was checked
  std::string resync;                                     // the reason, on the first group after a resync
};

// The replica at the last INFO applied.
struct View {
  State state = State::kConnecting;
  std::optional<std::string> epoch;
  std::optional<uint64_t> seq;
  bool verified = false;
  uint64_t digest = 0;       // with the e| terms: what a verify=1 INFO carries
  uint64_t odds_digest = 0;  // the REST formula over `data`
  OddsData data;
};

class StreamMachine {
 public:
  struct Callbacks {
    std::function<void(const Event&)> on_event;
    std::function<void(const Group&)> on_group;  // may be empty: no change lists are built then
  };
  explicit StreamMachine(Callbacks cb) : cb_(std::move(cb)) {}

  // Before a connection attempt: the backoff attempt to wait for (nullopt:
  // none) and, through resume_query(), whether it resumes.
  std::optional<unsigned> begin_connect();
  // "&resume=<epoch>:<seq>" when it holds a replica to resume, else "".
  std::string resume_query() const;
  void connected();
  // Result of a message: go on, or drop the connection (a resync was
  // started, or the server refused the stream: both reconnect).
  enum class Next { kContinue, kDrop };
  Next on_message(std::string_view frame);
  // A non-text message: not a frame a client can apply.
  Next on_binary();
  // The connection closed or failed (not because of on_message's kDrop
  // for a resync); `stopping`: the user stopped it, nothing to report.
  void on_cut(bool stopping);
  // Two ping intervals without a frame.
  void on_stale();

  State state() const;
  View view() const;
  // Runs `f(const ReplicaState&)` under the replica's lock: no copy.
  template <class F>
  void read(F&& f) const {
    std::lock_guard lock(mu_);
    f(replica_);
  }
  uint64_t groups() const { return groups_; }
  uint64_t resyncs() const { return resyncs_; }
  std::optional<uint64_t> seq() const;

 private:
  Next on_ready(std::string_view body);
  Next on_info(std::string_view body);
  Next close_snapshot();
  Next apply_group(uint64_t seq, const std::optional<std::string>& digest);
  void set_state(State s);
  void resync(std::string reason);
  Next fail(const char* reason);

  Callbacks cb_;
  mutable std::mutex mu_;  // replica_, the position and state_ (read by view())
  ReplicaState replica_, scratch_;
  State state_ = State::kConnecting;
  std::optional<std::string> epoch_, conn_epoch_;  // the replica's; the connection's ready INFO's
  std::optional<uint64_t> seq_;
  bool verified_ = false;
  uint64_t groups_ = 0, resyncs_ = 0;
  unsigned attempt_ = 0;
  bool resume_ = true;
  std::string pending_resync_;
  bool need_ready_ = true;                      // the connection's first frame is its ready INFO
  bool snapshot_ = false;                       // the frames until the next INFO hold a snapshot
  std::optional<uint64_t> snapshot_frames_;     // how many, when the ready INFO said
  std::optional<std::string> snapshot_digest_;  // and the view's digest once applied (verify=1)
  uint64_t chain_ = 0;                          // the seq the next INFO's `from` follows
  std::vector<std::string> pending_;            // the group's frames (capacity kept)
  size_t n_pending_ = 0;
  std::vector<FrameOp> ops_;
  FrameParser parser_;
};

}  // namespace oddsrelay::client
