#include "protocol/metrics/process.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>

namespace oddsrelay::metrics {

namespace {

// utime + stime of /proc/self/stat, in seconds; -1 when unreadable.
double cpu_seconds() {
  FILE* f = std::fopen("/proc/self/stat", "r");
  if (!f) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // The command name (field 2) may hold spaces: fields count from its ')'.
  const char* p = nullptr;
  for (size_t i = n; i-- > 0;)
    if (buf[i] == ')') {
      p = buf + i + 1;
      break;
    }
  unsigned long utime = 0, stime = 0;
  // Fields 3..13 skipped, then utime (14) and stime (15).
  if (!p || std::sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t open_fds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int64_t n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the descriptor opendir itself holds
}

}  // namespace

uint64_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

void write_process(TextWriter& w, int64_t started_ms) {
  w.single("process_resident_memory_bytes", Type::Gauge, "Resident memory size in bytes.", resident_bytes());
  if (const double cpu = cpu_seconds(); cpu >= 0)
    w.single("process_cpu_seconds_total", Type::Counter, "User and system CPU time spent in seconds.", cpu);
  if (const int64_t fds = open_fds(); fds >= 0)
    w.single("process_open_fds", Type::Gauge, "Number of open file descriptors.", fds);
  w.single("process_start_time_seconds", Type::Gauge, "Start time of the process since unix epoch in seconds.",
           static_cast<double>(started_ms) / 1000.0);
}

}  // namespace oddsrelay::metrics
