#include "tools/oddsload/frame_fields.h"

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <string.h>

#include <algorithm>
#include <charconv>

namespace oddsrelay::load {

namespace {

// The numbers of an INFO the client reads, and where each goes.
struct Stamp {
  std::string_view key;
  double InfoFields::*value;
  bool InfoFields::*has;
};
constexpr Stamp kStamps[] = {
    {"seq", &InfoFields::seq, &InfoFields::has_seq},
    {"from", &InfoFields::from, &InfoFields::has_from},
    {"at", &InfoFields::at, &InfoFields::has_at},
    {"conflated", &InfoFields::conflated, &InfoFields::has_conflated},
    {"arrived_us", &InfoFields::arrived_us, &InfoFields::has_arrived},
    {"applied_us", &InfoFields::applied_us, &InfoFields::has_applied},
    {"encoded_us", &InfoFields::encoded_us, &InfoFields::has_encoded},
};

// RapidJSON's SAX reader walks the object; this handler keeps the members at
// depth 1 and counts depth for everything else, so a key inside an array or
// a nested object is never taken for the member. Numbers come parsed: the
// stamps are integers or milliseconds with three decimals, well inside a
// double's exact range, which RapidJSON's fast path rounds correctly.
class InfoHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, InfoHandler> {
 public:
  explicit InfoHandler(InfoFields& f) : f_(f) {}

  bool Default() { return took(); }
  bool Int(int v) { return number(v); }
  bool Uint(unsigned v) { return number(v); }
  bool Int64(int64_t v) { return number(static_cast<double>(v)); }
  bool Uint64(uint64_t v) { return number(static_cast<double>(v)); }
  bool Double(double v) { return number(v); }
  // The key's text lives on the reader's stack only until the value comes,
  // so the field it names is chosen here.
  bool Key(const char* s, rapidjson::SizeType len, bool) {
    if (depth_ != 1) return true;
    const std::string_view key(s, len);
    if (key == "ready") f_.ready = true;  // the connect INFO, whatever its value
    for (const Stamp& k : kStamps)
      if (key == k.key) to_ = &(f_.*k.value), has_ = &(f_.*k.has);
    return true;
  }
  bool StartObject() { return ++depth_, true; }
  bool StartArray() { return depth_ > 0 && (++depth_, true); }
  bool EndObject(rapidjson::SizeType) { return --depth_ == 0 || took(); }
  bool EndArray(rapidjson::SizeType) { return --depth_, took(); }

 private:
  bool number(double v) {
    if (depth_ == 1 && to_) *to_ = v, *has_ = true;
    return took();
  }
  // A value is done; one at the root is not an object, and is refused.
  bool took() {
    if (depth_ == 1) to_ = nullptr;
    return depth_ > 0;
  }

  InfoFields& f_;
  int depth_ = 0;
  double* to_ = nullptr;  // the field the depth-1 value being read goes to
  bool* has_ = nullptr;
};

}  // namespace

bool read_info(std::string_view s, InfoFields& out) {
  // Not insitu: the frame is a read-only view of the socket buffer.
  rapidjson::MemoryStream in(s.data(), s.size());
  InfoHandler h(out);
  rapidjson::Reader reader;
  // Iterative: no stack frame a nesting level. Stop when done: what follows
  // the object is not the INFO's.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;
  return !reader.Parse<kFlags>(in, h).IsError();
}

int64_t newest_ls(std::string_view json) {
  // memmem skips ahead by the pattern's length: a search that stopped at
  // every quote of the frame was a sixth of the client's core.
  static constexpr char kKey[] = "\"ls\":";
  constexpr size_t kLen = sizeof kKey - 1;
  int64_t newest = 0;
  const char* p = json.data();
  const char* const end = json.data() + json.size();
  while (const void* hit = memmem(p, static_cast<size_t>(end - p), kKey, kLen)) {
    p = static_cast<const char*>(hit) + kLen;
    int64_t v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec == std::errc()) newest = std::max(newest, v);
    p = r.ptr;
  }
  return newest;
}

}  // namespace oddsrelay::load
