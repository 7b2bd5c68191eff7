"""The client's copy of what its /pt-ws stream carries: event objects by id,
live odds by event number, and the digest of both kept as frames are applied
(docs/api.md "/pt-ws" and "State digest"). Pure state: no I/O, so the unit
tests drive it frame by frame; the stream loop (stream.py) decides when a
group of frames is applied (at its INFO, never half-way)."""
from .digest import MASK, event_term, hex16, market_sum


class BadFrame(ValueError):
    """A frame that is not a /pt-ws frame a client can apply."""


def number_of(key):
    """An event id's number: the digits after its last '.' or '-' (docs/api.md "Event ids")."""
    try:
        return int(key.rsplit(".", 1)[-1].rsplit("-", 1)[-1])
    except ValueError:
        raise BadFrame(f"not an event id: {key!r}") from None


class State:
    def __init__(self):
        self.events = {}  # event id -> event object
        self.odds = {}  # event number -> {market id: market object}
        self._sums = {}  # event number -> {market id: its digest sum}
        self._event_total = 0  # e| terms of the listed events
        self._odds_total = 0  # outcome terms of every market held

    def digest(self):
        return (self._event_total + self._odds_total) & MASK

    def _drop_odds(self, n):
        self.odds.pop(n, None)
        for s in self._sums.pop(n, {}).values():
            self._odds_total -= s

    def apply_events(self, body, changed):
        if not isinstance(body, dict):
            raise BadFrame("evt: frame is not an object")
        for key, obj in body.items():
            n = number_of(key)
            if key in self.events:
                self._event_total -= event_term(n)
            if obj is None:
                self.events.pop(key, None)
            elif not isinstance(obj, dict):
                raise BadFrame("event is not an object")
            else:
                self.events[key] = obj
                self._event_total += event_term(n)
            # Odds channels exist only for live events: an event that left
            # the lists or is not live any more takes its odds with it.
            if obj is None or not obj.get("live"):
                self._drop_odds(n)
            changed.add(key)

    def apply_odds(self, number, body, changed):
        if not isinstance(body, dict):
            raise BadFrame("odds: frame is not an object")
        book = self.odds.setdefault(number, {})
        sums = self._sums.setdefault(number, {})
        for mid, market in body.items():
            self._odds_total -= sums.pop(mid, 0)
            if market is None:
                book.pop(mid, None)
            elif not isinstance(market, dict):
                raise BadFrame("market is not an object")
            else:
                try:
                    s = market_sum(number, mid, market)
                except (AttributeError, TypeError, IndexError, KeyError) as e:
                    raise BadFrame(f"bad market {mid}: {e}") from None
                book[mid] = market
                sums[mid] = s
                self._odds_total += s
            changed.add((number, mid))

    def apply(self, channel, body, changed_events, changed_markets):
        """One P frame: `evt:<sport>` or `odds:<sport>:<event number>`."""
        kind, _, rest = channel.partition(":")
        if kind == "evt":
            self.apply_events(body, changed_events)
        elif kind == "odds":
            try:
                number = int(rest.split(":")[1])
            except (IndexError, ValueError):
                raise BadFrame(f"bad odds channel {channel!r}") from None
            self.apply_odds(number, body, changed_markets)
        else:
            raise BadFrame(f"unknown channel {channel!r}")

    def data(self):
        """The /v1/odds `data` shape: every live listed event (`{}` without
        markets) and any other event whose odds the stream sent."""
        out = {}
        keys = {}
        for key, obj in self.events.items():
            keys[number_of(key)] = key
            if obj.get("live"):
                out[key] = {}
        for n, book in self.odds.items():
            if book or n in keys:
                out[keys.get(n, str(n))] = dict(book)
        return out

    def hex(self):
        return hex16(self.digest())
