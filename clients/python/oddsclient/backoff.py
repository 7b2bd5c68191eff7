"""Reconnect delays: full-jitter exponential backoff (AWS's "full jitter",
as Centrifugo's SDKs use): the n-th consecutive retry waits a uniform draw
in [0, min(cap, base * 2^n)], base 0.5 s and cap 30 s, so a fleet of
clients cut at once does not come back at once, and none waits more than
30 s. A connection that reaches its ready INFO resets n."""
import random

BASE, CAP = 0.5, 30.0


def ceiling(attempt, base=BASE, cap=CAP):
    return min(cap, base * (2 ** min(attempt, 32)))


def delay(attempt, rng=random.random, base=BASE, cap=CAP):
    return rng() * ceiling(attempt, base, cap)
