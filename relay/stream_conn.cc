// What a stream may receive, by the permission table of protocol/api/access.h: the
// classes of events (live, pre-match) and prices.
#include "relay/stream_conn.h"

#include "protocol/api/access.h"

namespace oddsrelay::relay {

bool may_odds(const StreamConn* c) { return c->ticket.permissions & api::permission_for(api::Data::Price); }

uint8_t stream_event_classes(const StreamConn* c) {
  const uint32_t p = c->ticket.permissions;
  return ((p & api::permission_for(api::Data::LiveEvent)) ? kLiveEvents : 0) |
         ((p & api::permission_for(api::Data::PrematchEvent)) ? kPrematchEvents : 0);
}

StreamFilter StreamConn::filter() const {
  const uint8_t classes = stream_event_classes(this);
  return StreamFilter{ticket.sports, classes != 0, may_odds(this), classes, ticket.events, ticket.markets};
}

}  // namespace oddsrelay::relay
