"""oddsclient: a /pt-ws client that keeps a verified replica of what its
stream carries, resumes after cuts, backs off, and syncs again from a
snapshot when its replica is found wrong (docs/clients.md). Standard
library plus Debian's python3-websockets and python3-xxhash."""
from .digest import event_term, hex16, market_sum, odds_digest
from .replica import BadFrame, State, number_of
from .stream import Replica, stream_url

__all__ = ["Replica", "State", "BadFrame", "stream_url", "number_of", "market_sum", "event_term", "odds_digest",
           "hex16"]
