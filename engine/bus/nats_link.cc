#include "engine/bus/nats_link.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace oddsrelay::bus {

std::string nats_error(const char* what, natsStatus s, jsErrCode jerr) {
  std::string out = what;
  out += ": ";
  const char* last = nats_GetLastError(nullptr);
  out += last && *last ? last : natsStatus_GetText(s);
  if (jerr != 0) out += " (JetStream error " + std::to_string(static_cast<int>(jerr)) + ")";
  return out;
}

// Which server of the list this node is on, for the log and /v1/status.
void NatsLink::note_server(natsConnection* nc, const char* how) {
  char buf[256] = {0};
  if (natsConnection_GetConnectedUrl(nc, buf, sizeof buf) != NATS_OK) buf[0] = 0;
  {
    std::lock_guard lock(mu_);
    server_ = buf;
  }
  std::fprintf(stderr, "%s: bus: %s %s\n", name_.c_str(), how, buf[0] ? buf : "a server");
}

void NatsLink::on_connected(natsConnection* nc, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  l->note_server(nc, "connected to");
  l->connected_.store(true, std::memory_order_release);
}

// The last callback nats.c delivers for a connection: after it none of the
// others runs, so close() may let the link go.
void NatsLink::on_closed(natsConnection*, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  std::lock_guard lock(l->mu_);
  l->closed_ = true;
  l->closed_cv_.notify_all();
}

void NatsLink::on_disconnected(natsConnection*, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  if (l->connected_.exchange(false, std::memory_order_acq_rel)) {
    l->disconnects_.fetch_add(1);
    std::fprintf(stderr, "%s: bus: lost %s; trying %s\n", l->name_.c_str(), l->server().c_str(),
                 l->url_.server().c_str());
  }
}

void NatsLink::on_reconnected(natsConnection* nc, void* self) {
  auto* l = static_cast<NatsLink*>(self);
  l->note_server(nc, "reconnected to");
  l->reconnects_.fetch_add(1);
  l->connected_.store(true, std::memory_order_release);
}

// 100 ms doubling to 2 s, with up to 20% jitter, so that many edges do not
// hit a restarted server in step.
int64_t NatsLink::reconnect_delay(natsConnection*, int attempts, void*) {
  static thread_local std::minstd_rand rng(std::random_device{}());
  int64_t d = int64_t{100} << std::min(attempts, 5);
  d = std::min<int64_t>(d, 2000);
  return d + static_cast<int64_t>(rng() % static_cast<unsigned>(d / 5 + 1));
}

bool NatsLink::open(const BusUrl& url, const std::string& name, std::string& err) {
  url_ = url;
  name_ = name;
  const std::string server = url.server();
  const std::vector<std::string> urls = url.server_urls();
  std::vector<const char*> list;
  for (const std::string& u : urls) list.push_back(u.c_str());
  natsStatus s = natsOptions_Create(&opts_);
  if (s == NATS_OK) s = natsOptions_SetServers(opts_, list.data(), static_cast<int>(list.size()));
  // The order given is the operator's: edges spread over the servers by
  // naming a different one first, and fail over in that order.
  if (s == NATS_OK) s = natsOptions_SetNoRandomize(opts_, true);
  if (s == NATS_OK) s = natsOptions_SetName(opts_, name.c_str());
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts_, -1);
  if (s == NATS_OK) s = natsOptions_SetCustomReconnectDelay(opts_, reconnect_delay, nullptr);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts_, 2000);  // notice a dead peer in seconds
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts_, 3);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts_, 2000);
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts_, true);  // latency: no flusher hop
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts_, on_disconnected, this);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts_, on_reconnected, this);
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts_, on_closed, this);
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(opts_, true, on_connected, this);
  if (s != NATS_OK) return err = nats_error("nats options", s), false;
  s = natsConnection_Connect(&nc_, opts_);
  if (s == NATS_OK) {
    note_server(nc_, "connected to");
    connected_.store(true, std::memory_order_release);
  } else if (s != NATS_NOT_YET_CONNECTED)
    return err = nats_error(("connect " + server).c_str(), s), false;
  jsOptions jo;
  jsOptions_Init(&jo);
  // A request the cluster cannot answer now (no stream leader during an
  // election) fails after 2 s and is retried, rather than holding a sync or
  // a join for longer than the election itself.
  jo.Wait = 2000;
  s = natsConnection_JetStream(&js_, nc_, &jo);
  if (s != NATS_OK) return err = nats_error("JetStream context", s), false;
  return true;
}

bool NatsLink::wait_connected(int timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!connected()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void NatsLink::close() {
  if (js_) jsCtx_Destroy(js_);
  js_ = nullptr;
  if (nc_) {
    natsConnection_Close(nc_);
    // The callbacks run on nats.c's own thread and use this link: wait
    // (boundedly) for the last of them before the link can be destroyed.
    std::unique_lock lock(mu_);
    closed_cv_.wait_for(lock, std::chrono::seconds(2), [this] { return closed_; });
    lock.unlock();
    natsConnection_Destroy(nc_);
  }
  nc_ = nullptr;
  if (opts_) natsOptions_Destroy(opts_);
  opts_ = nullptr;
  connected_.store(false);
  std::lock_guard lock(mu_);
  server_.clear();
}

std::string NatsLink::server() const {
  std::lock_guard lock(mu_);
  return server_;
}

Got NatsLink::stream_state(const std::string& stream, StreamState& out, std::string& err, int wait_ms,
                           StreamShape* shape) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsOptions o;
  jsOptions_Init(&o);
  o.Wait = wait_ms;
  natsStatus s = js_GetStreamInfo(&si, js_, stream.c_str(), wait_ms > 0 ? &o : nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) return Got::Missing;
  if (s != NATS_OK) return err = nats_error(("stream info " + stream).c_str(), s, jerr), Got::Failed;
  out.msgs = si->State.Msgs;
  out.bytes = si->State.Bytes;
  out.first_seq = si->State.FirstSeq;
  out.last_seq = si->State.LastSeq;
  if (shape && si->Config) {
    shape->subjects.assign(si->Config->Subjects, si->Config->Subjects + si->Config->SubjectsLen);
    shape->file_storage = si->Config->Storage == js_FileStorage;
    shape->replicas = si->Config->Replicas > 0 ? si->Config->Replicas : 1;
  }
  jsStreamInfo_Destroy(si);
  return Got::Ok;
}

std::string shape_differences(const std::string& name, const StreamShape& want, const StreamShape& have, bool& fatal) {
  fatal = false;
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) {
      if (!out.empty()) out += ' ';
      out += s;
    }
    return out;
  };
  std::string out;
  auto add = [&](const std::string& what) {
    out += out.empty() ? "stream " + name + " exists with " : std::string(", ");
    out += what;
  };
  if (have.subjects != want.subjects) {
    add("subjects [" + list(have.subjects) + "], not [" + list(want.subjects) + "]");
    // A stream that still takes the subject written to can carry the log.
    fatal = true;
    for (const std::string& s : have.subjects)
      if (!want.subjects.empty() && s == want.subjects.front()) fatal = false;
  }
  if (have.file_storage != want.file_storage)
    add(std::string(have.file_storage ? "file" : "memory") + " storage, not " +
        (want.file_storage ? "file" : "memory"));
  if (have.replicas != want.replicas)
    add(std::to_string(have.replicas) + " replica(s), not " + std::to_string(want.replicas));
  if (!out.empty())
    out += fatal ? ": it cannot carry this log; delete it or use another stream name"
                 : ": used as it is (change it with the nats CLI, or delete it to have it made again)";
  return out;
}

namespace {

bool add_stream(jsCtx* js, jsStreamConfig& cfg, std::string& err) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js, &cfg, nullptr, &jerr);
  if (si) jsStreamInfo_Destroy(si);
  // Another node may have made it in between: the same config is no error.
  if (s != NATS_OK && jerr != JSStreamNameExistErr)
    return err = nats_error((std::string("create stream ") + cfg.Name).c_str(), s, jerr), false;
  return true;
}

}  // namespace

bool NatsLink::ensure_streams(const StreamSettings& r, std::string& err) {
  const std::string log = url_.stream, logsub = log_subject(log);
  const std::string snap = snapshot_stream(log), snapsub = snapshot_subjects(log);
  std::string warning;
  for (int i = 0; i < 2; ++i) {
    const std::string& name = i == 0 ? log : snap;
    const std::string& subject = i == 0 ? logsub : snapsub;
    StreamState st;
    StreamShape have;
    const Got g = stream_state(name, st, err, 0, &have);
    // The snapshot stream has a leader of its own: while it is being
    // elected the log goes on (a snapshot that fails then is counted and
    // retried by the publisher).
    if (g == Got::Failed && i == 1) continue;
    if (g == Got::Failed) return false;
    if (g == Got::Ok) {
      const StreamShape want{{subject}, true, r.replicas};
      bool fatal = false;
      const std::string diff = shape_differences(name, want, have, fatal);
      if (fatal) return err = diff, false;
      if (!diff.empty()) {
        if (!warning.empty()) warning += "; ";
        warning += diff;
      }
      continue;
    }
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    const char* subjects[] = {subject.c_str()};
    cfg.Name = name.c_str();
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = js_LimitsPolicy;
    cfg.Discard = js_DiscardOld;
    cfg.Replicas = r.replicas;
    if (i == 0) {
      cfg.Description = "oddsrelay log: feed-format records, Nats-Msg-Id <epoch>:<position>";
      cfg.MaxAge = r.max_age_s * 1'000'000'000;  // nanoseconds
      cfg.MaxBytes = r.max_bytes;
      cfg.Duplicates = int64_t{120} * 1'000'000'000;  // the dedup window for Nats-Msg-Id
      // Every replica answers reads by sequence (an edge reading on while no
      // consumer can be placed), not only the leader: they go on through the
      // leader's election.
      cfg.AllowDirect = true;
    } else {
      cfg.Description = "oddsrelay snapshots: chunks of the state at a log position, and the newest head";
      cfg.AllowDirect = false;
    }
    if (!add_stream(js_, cfg, err)) return false;
  }
  std::lock_guard lock(mu_);
  if (warning != stream_warning_ && !warning.empty())
    std::fprintf(stderr, "%s: bus: warning: %s\n", name_.c_str(), warning.c_str());
  stream_warning_ = warning;
  return true;
}

std::string NatsLink::stream_warning() const {
  std::lock_guard lock(mu_);
  return stream_warning_;
}

namespace {

Got read_stored(natsStatus s, jsErrCode jerr, natsMsg* m, uint64_t seq, StoredMsg& out, std::string& err,
                const std::string& what) {
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr || jerr == JSStreamNotFoundErr) return Got::Missing;
  if (s != NATS_OK) return err = nats_error(what.c_str(), s, jerr), Got::Failed;
  out.seq = seq ? seq : natsMsg_GetSequence(m);
  out.subject = natsMsg_GetSubject(m) ? natsMsg_GetSubject(m) : "";
  const char* v = nullptr;
  out.msg_id = natsMsgHeader_Get(m, kMsgIdHeader, &v) == NATS_OK && v ? v : "";
  v = nullptr;
  out.chunk = natsMsgHeader_Get(m, kChunkHeader, &v) == NATS_OK && v ? v : "";
  const char* d = natsMsg_GetData(m);
  out.data.assign(d ? d : "", static_cast<size_t>(natsMsg_GetDataLength(m)));
  natsMsg_Destroy(m);
  return Got::Ok;
}

}  // namespace

Got NatsLink::get_msg(const std::string& stream, uint64_t seq, StoredMsg& out, std::string& err) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetMsg(&m, js_, stream.c_str(), seq, nullptr, &jerr);
  return read_stored(s, jerr, m, seq, out, err, "get " + stream + " #" + std::to_string(seq));
}

Got NatsLink::get_last(const std::string& stream, const std::string& subject, StoredMsg& out, std::string& err) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&m, js_, stream.c_str(), subject.c_str(), nullptr, &jerr);
  return read_stored(s, jerr, m, 0, out, err, "get last " + subject);
}

bool NatsLink::purge_below(const std::string& stream, uint64_t seq, std::string& err) {
  if (seq <= 1) return true;
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Purge.Sequence = seq;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PurgeStream(js_, stream.c_str(), &o, &jerr);
  if (s != NATS_OK) return err = nats_error(("purge " + stream).c_str(), s, jerr), false;
  return true;
}

}  // namespace oddsrelay::bus
