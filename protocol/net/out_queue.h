// What an HTTP connection still owes its client (rest/http_server.cc), as a
// queue of pieces written with one writev: owned bytes (status lines and
// headers, answers built for one request) and references to shared,
// immutable bodies (the per-loop answer caches: rest/list_cache.h,
// rest/catalog_views.h). Queuing a cached answer adds a reference, never a
// copy, so a thousand slow readers of the same 490 KB answer hold it once
// (issue 42; the relay's streams do the same with relay/shared_frame.h). A
// body replaced in its cache while a connection still sends it lives on in
// that connection's reference until the write that carries it completes.
// The unsent bytes are counted by the pieces' sizes, references included:
// that is what the per-connection and process bounds measure. Loop thread
// only (the references' counts are atomic: a cache may be dropped on any
// thread).
#pragma once

#include <uv.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

namespace oddsrelay::net {

// An immutable body shared by every connection that sends it.
using SharedBytes = std::shared_ptr<const std::string>;

inline SharedBytes make_shared_bytes(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

class OutQueue {
 public:
  // Owned bytes: appended to the open owned piece (a new one after a
  // reference or once the last piece went to a write).
  void append(std::string_view b) { tail().append(b); }
  // The open owned piece, for code that builds into a std::string (append
  // only; its growth is counted by size()).
  std::string& tail();
  // A reference to `b` (an empty or null body adds nothing).
  void share(SharedBytes b);

  size_t size() const { return closed_ + (open_ ? q_.back().own.size() : 0); }  // unsent bytes
  bool empty() const { return size() == 0; }
  size_t pieces() const { return q_.size(); }
  // Unsent bytes this queue holds a copy of (not references): what it costs
  // beyond the shared bodies.
  size_t owned() const;

  // A position to roll back to (a handler that threw) and to measure an
  // answer from.
  struct Mark {
    size_t pieces = 0, tail = 0;
    bool open = false;
  };
  Mark mark() const;
  void truncate(const Mark& m);  // drops what came after `m`
  size_t bytes_since(const Mark& m) const;
  std::string_view head_since(const Mark& m) const;  // the first piece's bytes after `m` (the status line)

  // The write side: up to `max` buffers from the front, the pieces they name
  // closed to appends (their bytes must not move while a write holds them).
  // Returns how many buffers were filled.
  unsigned gather(uv_buf_t* bufs, unsigned max);
  void consume(size_t n);  // the first n unsent bytes left: drops finished pieces
  void clear();            // only with no write in flight

 private:
  struct Piece {
    std::string own;  // owned bytes, when ref is null
    SharedBytes ref;
    size_t off = 0;  // bytes of this piece already written
    std::string_view bytes() const { return (ref ? std::string_view(*ref) : std::string_view(own)).substr(off); }
  };
  void close_tail();
  std::deque<Piece> q_;  // a deque: pieces never move while later ones are added
  size_t closed_ = 0;    // unsent bytes of every piece but the open one
  bool open_ = false;    // the last piece is owned and takes appends
};

}  // namespace oddsrelay::net
