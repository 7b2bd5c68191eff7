"""The client-visible state digest (docs/api.md "State digest") written
from its documented definition, independently of the server's code: the
e2e tests compare what the server sends with this."""
import xxhash

MASK = (1 << 64) - 1


def outcome_terms(number, market_id, market):
    """The sum of the terms of one market object's outcomes (empty rungs: none)."""
    total = 0
    for line_key, line in market.items():
        for oid, tup in line.items():
            if oid in ("s", "ls"):
                continue
            text = f"{number}|{market_id}|{line_key}|{oid}|{tup[0]}|{tup[1]}|{line['s']}"
            total += xxhash.xxh64_intdigest(text.encode(), 0)
    return total & MASK


def event_term(number):
    return xxhash.xxh64_intdigest(f"e|{number}".encode(), 0)


def odds_digest(odds_by_number):
    """{event number: {market id: market object}} -> the sum of its outcomes' terms."""
    return sum(outcome_terms(n, m, mk) for n, book in odds_by_number.items()
               for m, mk in book.items()) & MASK


def view_digest(event_numbers, odds_by_number):
    """A stream's view: an e| term per listed event, plus its odds."""
    return (sum(event_term(n) for n in event_numbers) + odds_digest(odds_by_number)) & MASK


def hex16(d):
    return f"{d:016x}"
