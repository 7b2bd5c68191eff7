#include "engine/storage/fs_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace oddsrelay {

bool write_fully(int fd, std::string_view data, std::string& err) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool writev_fully(int fd, std::vector<iovec>& iov, std::string& err, WritevFn write_some) {
  size_t next = 0;
  while (next < iov.size()) {
    const int n = static_cast<int>(std::min<size_t>(iov.size() - next, IOV_MAX));
    ssize_t wrote = write_some(fd, iov.data() + next, n);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      err = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    // A short write: skip what went out, go on from the first byte that did not.
    auto left = static_cast<size_t>(wrote);
    while (next < iov.size() && left >= iov[next].iov_len) left -= iov[next++].iov_len;
    if (left > 0) {
      iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + left;
      iov[next].iov_len -= left;
    }
  }
  return true;
}

void sync_dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool open_appending(const std::string& path, std::string_view header, bool truncate, int& fd, std::string& err) {
  const int next = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (next < 0) return err = "cannot open " + path + " for writing: " + std::strerror(errno), false;
  if (::lseek(next, 0, SEEK_END) == 0) {
    if (!write_fully(next, header, err)) {
      ::close(next);
      return false;
    }
    sync_dir_of(path);
  }
  if (fd >= 0) {
    ::fdatasync(fd);
    ::close(fd);
  }
  fd = next;
  return true;
}

}  // namespace oddsrelay
