// What one scrape of /metrics writes: the collectors registered at start-up,
// in order, each writing whole families (text_format.h). A collector reads
// instruments and the components' own counters; nothing is sampled between
// scrapes, so a registry costs nothing until it is scraped.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "protocol/metrics/text_format.h"

namespace oddsrelay::metrics {

class Registry {
 public:
  using Collector = std::function<void(TextWriter&)>;

  // Before the first scrape (start-up): scrapes read the list unlocked.
  void add(Collector c) { collectors_.push_back(std::move(c)); }

  // The whole exposition, appended to `out`.
  void write(std::string& out) const {
    TextWriter w(out);
    for (const Collector& c : collectors_) c(w);
  }

 private:
  std::vector<Collector> collectors_;
};

}  // namespace oddsrelay::metrics
