// The book of one event at a past log position (engine/history/book_at.h).
#include "engine/history/book_at.h"

namespace oddsrelay::history {

MarketList book_at(const EventHistory& h, uint64_t seq) {
  MarketList out;
  std::vector<OutcomeState> states;
  // Made once for the event and searched per outcome, as the sorted list
  // the writer kept once was (the writer keeps an array per market now).
  const OutcomeList outs = h.outcomes();
  for (const MarketLog& mm : h.markets()) {
    const auto mark = mm.at_or_before(seq, &states);
    if (!mark || mark->layout < 0) continue;
    const MarketLayout layout = mm.layout(mark->layout);
    size_t nout = 0;
    for (const LineLayout& l : layout) nout += l.outcomes.size();
    Line* lines = nullptr;
    Outcome* outcomes = nullptr;
    std::shared_ptr<Market> m = Market::make(mm.market(), layout.size(), nout, &lines, &outcomes);
    uint32_t at = 0;
    for (size_t i = 0; i < layout.size(); ++i) {
      const LineLayout& l = layout[i];
      Line& line = lines[i];
      line.key = l.key;
      line.suspended = 0;
      line.first = at;
      line.count = static_cast<uint32_t>(l.outcomes.size());
      line.ls = mark->at;
      for (uint32_t id : l.outcomes) {
        Outcome& o = outcomes[at++];
        o = Outcome{id, 0, 0, 0, 0};
        const OutcomeHistory* oh = outs.find(OutcomeKey{mm.market(), l.key, id});
        if (!oh) continue;
        const OutcomeState& q = states[oh->number];
        o.price = q.price;
        o.prev_price = q.price;  // not served by GET /v1/odds
        o.flags = q.flags;
        o.ts = q.change_ts;
        line.suspended = q.s;
      }
    }
    out.push_back(MarketRef{mm.market(), std::move(m)});
  }
  return out;
}

}  // namespace oddsrelay::history
