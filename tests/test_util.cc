#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "protocol/event_json.h"
#include "protocol/feed_reader.h"

namespace oddsrelay::test {

feed::Record rec(const std::string& line) {
  static thread_local feed::FeedParser parser;
  feed::Record r;
  feed::LineStatus st = parser.parse(line, r);
  EXPECT_EQ(st, feed::LineStatus::Record) << line << " -> " << parser.error();
  return r;
}

feed::Record market(int64_t at, const std::string& id, uint32_t market, const std::vector<L>& lines) {
  std::string s = "{\"at\":" + std::to_string(at) + ",\"op\":\"market\",\"id\":\"" + id +
                  "\",\"market\":" + std::to_string(market) + ",\"lines\":{";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) s += ",";
    s += "\"" + lines[i].key + "\":{\"s\":" + std::to_string(lines[i].s) + ",\"o\":{";
    for (size_t j = 0; j < lines[i].o.size(); ++j) {
      if (j) s += ",";
      auto [oid, price, flags] = lines[i].o[j];
      s += "\"" + std::to_string(oid) + "\":[" + std::to_string(price) + "," + std::to_string(flags) + "]";
    }
    s += "}}";
  }
  return rec(s + "}}");
}

feed::Record event(int64_t at, const std::string& id, int sport, bool live) {
  return rec("{\"at\":" + std::to_string(at) + ",\"op\":\"event\",\"id\":\"" + id +
             "\",\"event\":{\"c\":[1,\"England\"," + std::to_string(sport) +
             ",\"GB\"],\"t\":[10,\"Premier League\",1],\"g\":1,\"ts\":1767225600,\"h\":\"Home\",\"a\":\"Away\","
             "\"co\":1,\"map\":{},\"s\":0,\"live\":" +
             (live ? "true" : "false") + ",\"sport\":" + std::to_string(sport) + "}}");
}

void apply_all(Engine& e, std::vector<feed::Record> recs) {
  for (auto& r : recs) e.apply(std::move(r));
  e.commit();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "oddsrelay-test-XXXXXX").string();
  path_ = mkdtemp(tmpl.data());
}

TempDir::~TempDir() { std::filesystem::remove_all(path_); }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

}  // namespace oddsrelay::test
