// Small POSIX file helpers shared by the storage code: whole writes that
// survive EINTR and short writes, and the directory fsync that makes a
// rename or a new file durable.
#pragma once

#include <sys/uio.h>

#include <string>
#include <string_view>
#include <vector>

namespace oddsrelay {

// Writes all of `data` to `fd`; false with `err` set on failure.
bool write_fully(int fd, std::string_view data, std::string& err);
// Writes every byte the iovecs name, in order, in as few writev() calls as
// IOV_MAX allows, going on after a short write; false with `err` set on
// failure. `iov` is consumed. `write_some` is writev(2) but for tests.
using WritevFn = ssize_t (*)(int, const iovec*, int);
bool writev_fully(int fd, std::vector<iovec>& iov, std::string& err, WritevFn write_some = ::writev);
// fsyncs the directory holding `path` (best effort).
void sync_dir_of(const std::string& path);
// The next file a log appends to (a journal segment, a history file):
// opens `path` for appends (created when missing, emptied first with
// `truncate`); a file found empty gets `header` and a directory fsync. Then
// the file `fd` held (when open) is fdatasync'd and closed and `fd` takes
// the new one. False with `err` set and `fd` unchanged.
bool open_appending(const std::string& path, std::string_view header, bool truncate, int& fd, std::string& err);

}  // namespace oddsrelay
