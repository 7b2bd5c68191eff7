// net::OutQueue (out_queue.h): pieces, marks and the writev side.
#include "protocol/net/out_queue.h"

namespace oddsrelay::net {

std::string& OutQueue::tail() {
  if (!open_) {
    q_.emplace_back();
    open_ = true;
  }
  return q_.back().own;
}

void OutQueue::close_tail() {
  if (!open_) return;
  open_ = false;
  closed_ += q_.back().own.size();
}

void OutQueue::share(SharedBytes b) {
  if (!b || b->empty()) return;
  close_tail();
  closed_ += b->size();
  q_.push_back(Piece{{}, std::move(b), 0});
}

size_t OutQueue::owned() const {
  size_t n = 0;
  for (const Piece& p : q_)
    if (!p.ref) n += p.own.size() - p.off;
  return n;
}

OutQueue::Mark OutQueue::mark() const {
  Mark m;
  m.pieces = q_.size();
  m.open = open_;
  m.tail = open_ ? q_.back().own.size() : 0;
  return m;
}

void OutQueue::truncate(const Mark& m) {
  close_tail();
  while (q_.size() > m.pieces) {
    closed_ -= q_.back().bytes().size();
    q_.pop_back();
  }
  if (m.open && !q_.empty() && !q_.back().ref) {  // the piece open at the mark takes appends again
    Piece& p = q_.back();
    closed_ -= p.own.size() - m.tail;
    p.own.resize(m.tail);
    closed_ -= p.own.size();
    open_ = true;
  }
}

size_t OutQueue::bytes_since(const Mark& m) const {
  size_t n = 0;
  for (size_t i = m.pieces; i < q_.size(); ++i) n += q_[i].bytes().size();
  if (m.open && m.pieces > 0 && m.pieces <= q_.size()) n += q_[m.pieces - 1].own.size() - m.tail;
  return n;
}

std::string_view OutQueue::head_since(const Mark& m) const {
  if (m.open && m.pieces > 0 && m.pieces <= q_.size()) {
    std::string_view s = std::string_view(q_[m.pieces - 1].own).substr(m.tail);
    if (!s.empty()) return s;
  }
  return m.pieces < q_.size() ? q_[m.pieces].bytes() : std::string_view();
}

unsigned OutQueue::gather(uv_buf_t* bufs, unsigned max) {
  close_tail();
  unsigned n = 0;
  for (size_t i = 0; i < q_.size() && n < max; ++i) {
    std::string_view b = q_[i].bytes();
    if (b.empty()) continue;
    bufs[n++] = uv_buf_init(const_cast<char*>(b.data()), static_cast<unsigned>(b.size()));
  }
  return n;
}

void OutQueue::consume(size_t n) {
  close_tail();
  closed_ -= n;
  while (n > 0 && !q_.empty()) {
    Piece& p = q_.front();
    const size_t left = p.bytes().size();
    if (n < left) {
      p.off += n;
      return;
    }
    n -= left;
    q_.pop_front();
  }
  while (!q_.empty() && q_.front().bytes().empty()) q_.pop_front();
}

void OutQueue::clear() {
  q_.clear();
  closed_ = 0;
  open_ = false;
}

}  // namespace oddsrelay::net
