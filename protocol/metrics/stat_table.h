// Counters described once. A component lists its statistics in one table
// (the /v1/status field, how to read it, and the /metrics family it is a
// sample of), and both views are written from that table: the status JSON
// object's fields and the exposition's families cannot drift apart, and a
// new counter is one line. Components keep their counters as atomics in a
// stats struct (relay/relay_stats.h, relay/webhooks/webhooks.h,
// rest/http_stats.h, the journal's LogStats, the bus's PublisherStats and
// BusSourceStats); the tables sit next to them (the bus's in
// tools/oddsrelay/bus_node.cc, beside its status), and the node's
// collectors (tools/oddsrelay/node_metrics.cc) write the families.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "protocol/json_out.h"
#include "protocol/metrics/text_format.h"

namespace oddsrelay::metrics {

// Where a statistic appears in /metrics: a family (name, type, help) and,
// for a family split by one label, this statistic's label. No family name:
// /v1/status only. The help text is read from the family's first statistic.
struct Series {
  std::string_view family;
  Type type = Type::Counter;
  std::string_view help;
  Label label{};  // no name: the family's only sample
};

template <class Stats>
struct Stat {
  const char* key;                            // its field in the component's /v1/status object
  const std::atomic<uint64_t> Stats::*value;  // the counter it reads
  Series series{};
};

template <class Stats>
using StatTable = std::span<const Stat<Stats>>;

// The table's fields, in its order, into the status object being written
// (the caller opens and closes the object).
template <class Stats>
void write_status_fields(json::Writer& w, const Stats& s, StatTable<Stats> table) {
  for (const Stat<Stats>& st : table) {
    w.Key(st.key);
    w.Uint64((s.*st.value).load(std::memory_order_relaxed));
  }
}

// The table's families in order of first appearance, each written once
// with all of its samples (the format does not allow a family to be split).
template <class Stats>
void write_families(TextWriter& w, const Stats& s, StatTable<Stats> table) {
  for (size_t i = 0; i < table.size(); ++i) {
    const Series& f = table[i].series;
    if (f.family.empty()) continue;
    bool written = false;
    for (size_t j = 0; j < i && !written; ++j) written = table[j].series.family == f.family;
    if (written) continue;
    w.family(f.family, f.type, f.help);
    for (size_t j = i; j < table.size(); ++j) {
      const Series& g = table[j].series;
      if (g.family != f.family) continue;
      const uint64_t v = (s.*table[j].value).load(std::memory_order_relaxed);
      if (g.label.name.empty())
        w.sample(f.family, {}, v);
      else
        w.sample(f.family, {g.label}, v);
    }
  }
}

}  // namespace oddsrelay::metrics
