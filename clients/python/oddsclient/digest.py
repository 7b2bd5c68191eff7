"""The state digest a verify=1 stream and GET /v1/odds?digest=1 carry
(docs/api.md "State digest"): XXH64 (seed 0) of one text per outcome and
per listed event, summed modulo 2^64. The replica keeps each market's sum,
so a frame costs the terms of the markets it replaces, not the whole state."""
import xxhash

MASK = (1 << 64) - 1
_xxh64 = xxhash.xxh64_intdigest


def market_sum(number, market_id, market):
    """The sum of one market object's outcome terms (empty rungs add nothing)."""
    total = 0
    head = f"{number}|{market_id}|"
    for line_key, line in market.items():
        s = line.get("s", 0)
        for oid, tup in line.items():
            if oid == "s" or oid == "ls":
                continue
            total += _xxh64(f"{head}{line_key}|{oid}|{tup[0]}|{tup[1]}|{s}".encode())
    return total & MASK


def event_term(number):
    return _xxh64(f"e|{number}".encode())


def odds_digest(data, number_of):
    """The /v1/odds formula over a `data` object ({event id: {market id: market}})."""
    return sum(market_sum(number_of(k), m, mk) for k, book in data.items() for m, mk in book.items()) & MASK


def hex16(d):
    return f"{d & MASK:016x}"
