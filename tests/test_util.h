// Helpers shared by the unit tests: records built in code, temp files.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "protocol/feed_record.h"

namespace oddsrelay::test {

// One record parsed from a feed-format line; fails the test if it does not parse.
feed::Record rec(const std::string& line);

// A market record: lines as {key, s, {{outcome, price, flags}...}}.
struct L {
  std::string key;
  int s;
  std::vector<std::array<int, 3>> o;
};
feed::Record market(int64_t at, const std::string& id, uint32_t market, const std::vector<L>& lines);
feed::Record event(int64_t at, const std::string& id, int sport, bool live);

void apply_all(Engine& e, std::vector<feed::Record> recs);

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);

}  // namespace oddsrelay::test
