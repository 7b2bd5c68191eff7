// The Prometheus text exposition format, version 0.0.4: what GET /metrics
// answers. A family is its # HELP and # TYPE lines followed by all of its
// samples (a family must not be split); label values and help text are
// escaped as the format says; a histogram is its cumulative _bucket series
// with `le` in seconds, then _sum and _count.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "protocol/metrics/instruments.h"

namespace oddsrelay::metrics {

// The Content-Type of an answer in this format.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class Type { Counter, Gauge, Histogram };

struct Label {
  std::string_view name, value;
};
using Labels = std::initializer_list<Label>;

class TextWriter {
 public:
  explicit TextWriter(std::string& out) : out_(out) {}

  void family(std::string_view name, Type type, std::string_view help);
  void sample(std::string_view name, Labels labels, uint64_t v);
  void sample(std::string_view name, Labels labels, int64_t v);
  void sample(std::string_view name, Labels labels, double v);
  // The _bucket, _sum and _count series of one labelled histogram.
  void histogram(std::string_view name, Labels labels, const Histogram& h);

  // A family of one sample without labels.
  template <class V>
  void single(std::string_view name, Type type, std::string_view help, V v) {
    family(name, type, help);
    sample(name, {}, v);
  }

 private:
  void series(std::string_view name, std::string_view suffix, Labels labels, const Label* extra);
  std::string& out_;
};

// Shortest text that parses back to `v`; +Inf, -Inf and NaN as the format spells them.
void append_double(std::string& out, double v);

}  // namespace oddsrelay::metrics
