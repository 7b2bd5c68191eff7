"""A feed the test writes while the server runs: the server replays a FIFO
(--feed replay:FIFO,speed=max), so a record enters the engine when the test
writes it and not before, and the feed is idle otherwise. Tests of what a
stream sends after a given change (a market removed, an unsubscribed event
changing, a lagging client's conflation) decide that change and its moment
here instead of hoping a simulator produces it."""
import errno
import json
import os
import select
import time

T0 = 1767225600000


class ScriptedFeed:
    # The server reads a FIFO as plain lines, each as soon as it is written
    # (engine/storage/feed_file.cc), so a write needs no padding behind it.

    def __init__(self, path):
        os.mkfifo(path)
        self.path, self.fd, self.at = path, None, T0

    def open(self, timeout=30):
        """After the server started: ENXIO until its replay thread opens the FIFO."""
        deadline = time.monotonic() + timeout
        while self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def write(self, *records, timeout=60):
        """Appends the records, each with the next `at` (10 ms apart); returns the last `at`."""
        lines = []
        for r in records:
            self.at += 10
            lines.append(json.dumps(dict(r, at=self.at)))
        data = memoryview(("\n".join(lines) + "\n").encode())
        deadline = time.monotonic() + timeout
        while data:
            if not select.select([], [self.fd], [], max(0.0, deadline - time.monotonic()))[1]:
                raise AssertionError("the server stopped reading its feed")
            try:
                data = data[os.write(self.fd, data[:65536]):]
            except BlockingIOError:
                pass
        return self.at

    def close(self):
        """EOF: the replay finishes; the state stays served."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def key_of(number, live=True):
    return f"s7-{101 if live else 102}.{number}"


def event_rec(key, live):
    channel, number = key.split("-", 1)[1].split(".")
    return {"op": "event", "id": key, "event": {
        "c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11 if live else 10, "ts": 1767225000,
        "h": f"Home {number}", "a": f"Away {number}", "co": 101,
        "map": {f"s7_{'l' if live else 'p'}{channel}.{number}": {"p": 0}}, "s": 1000 if live else 0,
        **({"ms": 23} if live else {}), "live": live, "sport": 1}}


def market_rec(key, market, price=185):
    """Market 1001 (1X2), 1004 (correct score) or 1007 (total) with `price` on its first outcome."""
    lines = {1001: {"s": {"s": 0, "o": {"2001": [price, 0], "2002": [340, 0], "2003": [420, 0]}}},
             1004: {"s1:0": {"s": 0, "o": {"2004": [price, 0]}}},
             1007: {"s2.5": {"s": 1, "o": {"2008": [price, 0], "2009": [195, 4]}}}}[market]
    return {"op": "market", "id": key, "market": market, "lines": lines}


def market_removed(key, market):
    return {"op": "market", "id": key, "market": market, "lines": {}}


def score_rec(key):
    return {"op": "score", "id": key, "home": 1, "away": 0, "status": "live", "clock": "23:10", "period": "1H"}
