#include "tools/sources/journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "tools/sources/feed_file.h"

namespace oddsrelay {

std::string journal_path(const std::string& data_dir) { return data_dir + "/journal.jsonl"; }

JournalRecovery recover_journal(const std::string& data_dir, Engine& engine) {
  if (::mkdir(data_dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create data dir " + data_dir + ": " + std::strerror(errno));
  JournalRecovery r;
  const std::string path = journal_path(data_dir);
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return r;  // first start

  FeedFileReader reader;
  std::string err;
  if (!reader.open(path, err)) throw std::runtime_error(err);
  uint64_t last_bad_line = 0;
  reader.on_problem([&](uint64_t line, feed::LineStatus, const std::string& why) {
    std::fprintf(stderr, "oddsrelay: journal %s line %llu: %s\n", path.c_str(),
                 static_cast<unsigned long long>(line), why.c_str());
    last_bad_line = line;
  });
  feed::Record rec;
  uint64_t in_batch = 0;
  while (reader.next(rec)) {
    engine.apply(std::move(rec));
    ++r.records;
    if (++in_batch == 256) {
      engine.commit();
      in_batch = 0;
    }
  }
  engine.commit();
  if (!reader.fatal().empty()) throw std::runtime_error("journal " + path + ": " + reader.fatal());
  r.bad_records = reader.stats().malformed;
  // Bad lines after the last good record are a torn tail: cut them off so
  // that new appends follow intact records.
  if (last_bad_line != 0 && reader.good_end() < static_cast<uint64_t>(st.st_size)) {
    r.torn_tail = true;
    r.truncated_bytes = static_cast<uint64_t>(st.st_size) - reader.good_end();
    if (::truncate(path.c_str(), static_cast<off_t>(reader.good_end())) != 0)
      throw std::runtime_error("cannot truncate torn journal tail: " + std::string(std::strerror(errno)));
  }
  return r;
}

}  // namespace oddsrelay
