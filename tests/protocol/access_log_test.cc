// The access log's lines: valid JSON with the documented fields, never the
// presented key, whole lines however many threads write, and a new file
// after reopen() (logrotate's rename).
#include "protocol/api/access_log.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace oddsrelay::access_log {
namespace {

rapidjson::Document parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str());
  EXPECT_FALSE(d.HasParseError()) << line;
  return d;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(AccessLog, RequestLineHasEveryField) {
  Request r;
  r.client = "10.1.2.3";
  r.key = "desk-1";
  r.method = "GET";
  r.path = "/v1/odds";
  r.status = 200;
  r.bytes = 1234;
  r.micros = 85;
  const std::string line = format(r, 1795634870123);
  auto d = parse(line);
  EXPECT_STREQ(d["time"].GetString(), "2026-11-25T19:27:50.123Z");
  EXPECT_STREQ(d["type"].GetString(), "request");
  EXPECT_STREQ(d["client"].GetString(), "10.1.2.3");
  EXPECT_STREQ(d["key"].GetString(), "desk-1");
  EXPECT_STREQ(d["method"].GetString(), "GET");
  EXPECT_STREQ(d["path"].GetString(), "/v1/odds");
  EXPECT_EQ(d["status"].GetInt(), 200);
  EXPECT_EQ(d["bytes"].GetUint64(), 1234u);
  EXPECT_EQ(d["us"].GetUint64(), 85u);
  EXPECT_FALSE(d.HasMember("key_unknown"));
}

TEST(AccessLog, AnUnknownKeyIsAHashNeverTheKey) {
  const std::string presented = "sk-live-0123456789abcdef";
  const std::string hint = key_hint(presented);
  ASSERT_EQ(hint.size(), 9u);
  EXPECT_EQ(hint[0], '#');
  EXPECT_EQ(hint, key_hint(presented));  // the same attempts group together
  EXPECT_NE(hint, key_hint("another"));
  Request r;
  r.client = "::1";
  r.key = hint;
  r.key_unknown = true;
  r.method = "GET";
  r.path = "/v1/live\"\n";  // escaped, still one line
  r.status = 401;
  const std::string line = format(r, 0);
  EXPECT_EQ(line.find(presented), std::string::npos);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto d = parse(line);
  EXPECT_TRUE(d["key_unknown"].GetBool());
  EXPECT_STREQ(d["path"].GetString(), "/v1/live\"\n");
  Request none;
  none.status = 400;
  EXPECT_TRUE(parse(format(none, 0))["key"].IsNull());
}

TEST(AccessLog, StreamOpenAndCloseLines) {
  Stream s;
  s.client = "127.0.0.1";
  s.key = "desk-2";
  s.path = "/pt-ws";
  auto open = parse(format(s, 0));
  EXPECT_STREQ(open["type"].GetString(), "stream_open");
  EXPECT_FALSE(open.HasMember("close_code"));
  s.open = false;
  s.close_code = 1008;
  s.reason = "send queue over its limit";
  s.frames = 42;
  s.bytes = 9000;
  s.millis = 1500;
  auto close = parse(format(s, 0));
  EXPECT_STREQ(close["type"].GetString(), "stream_close");
  EXPECT_EQ(close["close_code"].GetInt(), 1008);
  EXPECT_STREQ(close["reason"].GetString(), "send queue over its limit");
  EXPECT_EQ(close["frames"].GetUint64(), 42u);
  EXPECT_EQ(close["bytes"].GetUint64(), 9000u);
  EXPECT_EQ(close["ms"].GetUint64(), 1500u);
}

TEST(AccessLog, ThreadsWriteWholeLinesAndReopenStartsANewFile) {
  char dir[] = "/tmp/access_log_testXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/access.log", rotated = path + ".1";
  Log l;
  std::string err;
  ASSERT_TRUE(l.open(path, err)) << err;
  EXPECT_TRUE(l.on());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&l, t] {
      const std::string path(200, static_cast<char>('a' + t));  // long lines: a torn write would show
      Request r;
      r.method = "GET";
      r.path = path;
      for (int i = 0; i < 500; ++i) l.write(format(r, i));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(l.lines(), 2000u);
  ASSERT_EQ(std::rename(path.c_str(), rotated.c_str()), 0);
  ASSERT_TRUE(l.reopen(err)) << err;
  Request last;
  last.path = "/after-rotation";
  l.write(format(last, 0));
  l.close();
  EXPECT_FALSE(l.on());
  std::istringstream old(read_file(rotated));
  size_t n = 0;
  for (std::string line; std::getline(old, line); ++n) parse(line);
  EXPECT_EQ(n, 2000u);
  const std::string fresh = read_file(path);
  EXPECT_NE(fresh.find("/after-rotation"), std::string::npos);
  EXPECT_EQ(fresh.find("aaaa"), std::string::npos);
  std::remove(rotated.c_str());
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(AccessLog, AnUnopenablePathIsAClearError) {
  Log l;
  std::string err;
  EXPECT_FALSE(l.open("/nonexistent-dir/access.log", err));
  EXPECT_NE(err.find("cannot open access log /nonexistent-dir/access.log"), std::string::npos) << err;
  EXPECT_FALSE(l.on());
}

}  // namespace
}  // namespace oddsrelay::access_log
