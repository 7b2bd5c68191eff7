// Small POSIX file helpers shared by the storage code: whole writes that
// survive EINTR and short writes, and the directory fsync that makes a
// rename or a new file durable.
#pragma once

#include <string>
#include <string_view>

namespace oddsrelay {

// Writes all of `data` to `fd`; false with `err` set on failure.
bool write_fully(int fd, std::string_view data, std::string& err);
// fsyncs the directory holding `path` (best effort).
void sync_dir_of(const std::string& path);

}  // namespace oddsrelay
