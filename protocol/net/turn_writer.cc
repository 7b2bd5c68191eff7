// net::TurnWriter (turn_writer.h): the ring, one sendmsg per queued write,
// and the turn's reaping. Without liburing (ODDSRELAY_URING unset) open()
// says so and nothing else is ever called.
#include "protocol/net/turn_writer.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "protocol/net/conn.h"

#ifdef ODDSRELAY_URING
#include <liburing.h>
#endif

namespace oddsrelay::net {

#ifdef ODDSRELAY_URING

struct TurnWriter::Ring {
  io_uring r{};
  bool broken = false;
};

namespace {

constexpr unsigned kEntries = 256;     // SQEs between submissions; a full queue is issued early
constexpr unsigned kCqEntries = 4096;  // completions one turn may hold before it reaps

// The most the kernel offers first: one submitter with its completions run
// only when it asks (no interrupting task work), then cooperative task
// work, then a plain ring.
struct Setup {
  unsigned flags;
  const char* words;
};
constexpr Setup kSetups[] = {
    {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, "single_issuer,defer_taskrun"},
    {IORING_SETUP_COOP_TASKRUN, "coop_taskrun"},
    {0, "plain"},
};

}  // namespace

TurnWriter::TurnWriter() = default;

TurnWriter::~TurnWriter() {
  if (ring_) io_uring_queue_exit(&ring_->r);
}

bool TurnWriter::open(std::string& why) {
  auto ring = std::make_unique<Ring>();
  int rc = -EINVAL;
  for (const Setup& s : kSetups) {
    io_uring_params p{};
    p.flags = s.flags | IORING_SETUP_CQSIZE;
    p.cq_entries = kCqEntries;
    rc = io_uring_queue_init_params(kEntries, &ring->r, &p);
    if (rc == 0) {
      setup_ = s.words;
      ring_ = std::move(ring);
      return true;
    }
    if (rc != -EINVAL) break;  // flags the kernel lacks say EINVAL; anything else is io_uring itself
  }
  why = std::string("io_uring_setup: ") + std::strerror(-rc);
  return false;
}

void TurnWriter::queue(Conn& c, const uv_buf_t* bufs, unsigned n, void* tag) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_->r);
  if (!sqe) {  // a full submission queue goes now; its completions wait in the larger CQ
    submit();
    sqe = io_uring_get_sqe(&ring_->r);
  }
  Op& op = ops_.emplace_back();
  op.conn = &c;
  op.tag = tag;
  c.queued_in_ = this;
  if (!sqe) {  // the ring failed to submit: complete() reports this send failed
    ring_->broken = true;
    return;
  }
  // uv_buf_t is laid out as struct iovec on Unix (libuv's promise for writev).
  op.msg.msg_iov = reinterpret_cast<iovec*>(const_cast<uv_buf_t*>(bufs));
  // At most IOV_MAX buffers a send (more: EMSGSIZE, the whole write
  // refused); the rest is a partial write's, as libuv's writev caps it too.
  op.msg.msg_iovlen = std::min<unsigned>(n, IOV_MAX);
  // Non-blocking, as writev on libuv's socket is: a full socket answers
  // -EAGAIN at once instead of parking the send in the kernel, so the turn's
  // completions are all there when the submission returns.
  io_uring_prep_sendmsg(sqe, c.fd(), &op.msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  io_uring_sqe_set_data64(sqe, ops_.size() - 1);
  ++unsubmitted_;
}

void TurnWriter::submit() {
  while (unsubmitted_ > 0) {
    const int rc = io_uring_submit(&ring_->r);
    if (rc >= 0) {
      unsubmitted_ -= std::min<size_t>(unsubmitted_, static_cast<size_t>(rc));
      if (rc == 0) break;
    } else if (rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      ring_->broken = true;
      return;
    } else if (rc == -EBUSY) {
      return;  // completions must be reaped first (complete() does)
    }
  }
}

const std::vector<TurnWriter::Done>& TurnWriter::complete() {
  done_.clear();
  while (done_.size() < ops_.size() && !ring_->broken) {
    submit();
    unsigned head, n = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_->r, head, cqe) {
      const size_t i = io_uring_cqe_get_data64(cqe);
      Op& op = ops_[i];
      op.conn->queued_in_ = nullptr;
      op.conn = nullptr;  // reported
      done_.push_back({op.tag, cqe->res});
      ++n;
    }
    io_uring_cq_advance(&ring_->r, n);
    if (n == 0 && done_.size() < ops_.size()) {
      const int rc = io_uring_wait_cqe(&ring_->r, &cqe);
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN) ring_->broken = true;
    }
  }
  if (ring_->broken) {
    // The ring failed (not seen in practice: every send on a non-blocking
    // socket completes within its submission). What it did not report is
    // reported failed and the ring is dropped: the owner writes with
    // Conn::write from now on.
    for (Op& op : ops_)
      if (op.conn) {
        op.conn->queued_in_ = nullptr;
        done_.push_back({op.tag, -EIO});
      }
    io_uring_queue_exit(&ring_->r);
    ring_.reset();
    unsubmitted_ = 0;
  }
  ops_.clear();
  return done_;
}

#else  // no liburing in this build

struct TurnWriter::Ring {};

TurnWriter::TurnWriter() = default;
TurnWriter::~TurnWriter() = default;

bool TurnWriter::open(std::string& why) {
  why = "built without liburing";
  return false;
}

void TurnWriter::queue(Conn&, const uv_buf_t*, unsigned, void*) {}
void TurnWriter::submit() {}
const std::vector<TurnWriter::Done>& TurnWriter::complete() { return done_; }

#endif

}  // namespace oddsrelay::net
