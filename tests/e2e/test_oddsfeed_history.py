"""`oddsfeed history` against the real server: a capture is replayed through
oddsrelay (--feed replay:FILE,speed=max) and, once the server's odds
history holds all of it, the server's GET /v1/odds/history answers are
compared byte for byte with what `oddsfeed history` prints for the same
query on the same file: raw points, filters, a from/to window, candles and
CSV, for several events of two captures (the simulator's, and the feed of
test_odds_history.py, which removes events and takes them live). Only
"epoch" may differ: the tool prints "" (a capture has no log epoch). Then
the tool's own errors: unknown event (exit 1), bad arguments (exit 2 with
the usage), --help."""
import json
import os
import re
import shutil
import unittest

import harness as h
from test_odds_history import EVENTS, build_feed

KEY = "feedhist-key"
KEYS = {"keys": [{"key": KEY, "name": "feedhist", "permissions": ["live", "prematch", "odds"]}]}


def tool(feed, eid, *opts, code=0):
    rc, out, err = h.run([h.binary("oddsfeed"), "history", feed, "--id", eid, *opts])
    assert rc == code, (eid, opts, rc, err[-2000:])
    return out, err


def as_query(eid, opts):
    """The tool's options as the server's query string."""
    pairs = [("id", eid)] + [(opts[i][2:], opts[i + 1]) for i in range(0, len(opts), 2)]
    return "&".join(f"{k}={v}" for k, v in pairs)


def events_with_markets(feed):
    """The event ids with market records, in the order they first have one."""
    seen = {}
    with open(feed) as f:
        for line in f:
            r = json.loads(line)
            if r.get("op") == "market":
                seen.setdefault(r["id"], 0)
                seen[r["id"]] += 1
    return seen


class Capture:
    """A feed file replayed by a server until its history holds every record."""

    def __init__(self, directory, keys, feed):
        self.feed = feed
        # The log position the whole file reaches, as the engine counts it
        # (records it skips take none): from `oddsfeed digest`, not the tool.
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", feed])
        assert rc == 0, err
        self.seq = int(re.search(r" seq=(\d+)", out).group(1))
        self.srv = h.Server("--keys", keys, "--progress", "0", "--feed", f"replay:{feed},speed=max")
        self.srv.wait_for(r"serving http://")

    def ready(self, eid):
        h.wait_until(lambda: self.history_seq(eid) == self.seq, 120, "the history reaching the feed's end")

    def history_seq(self, eid):
        r, body = h.request(self.srv.port, f"/v1/odds/history?id={eid}&from=0&to=0", KEY)
        return r.status == 200 and json.loads(body)["seq"]

    def server(self, query):
        r, body = h.request(self.srv.port, "/v1/odds/history?" + query, KEY)
        assert r.status == 200, (query, r.status, body[:300])
        return body.decode()


def same_but_epoch(test, server_body, tool_body, what):
    """Equal bytes once the server's epoch is the tool's ("")."""
    got = re.sub(r'^\{"success":true,"id":("[^"]*"),"epoch":"[0-9a-zA-Z_-]*"', r'{"success":true,"id":\1,"epoch":""',
                 server_body)
    test.assertNotEqual(got, server_body, "the server's answer has an epoch")
    test.assertEqual(tool_body, got, what)


class OddsfeedHistory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("feedhist")
        cls.keys = h.write_keys(cls.dir, KEYS)
        sim = h.gen_feed(os.path.join(cls.dir, "sim.jsonl"), 30000, "seed=39,events=40,rate=2000")
        built = os.path.join(cls.dir, "built.jsonl")
        build_feed(built, n=1500, seed=40)
        cls.sim, cls.built = Capture(cls.dir, cls.keys, sim), Capture(cls.dir, cls.keys, built)
        counts = events_with_markets(sim)
        busiest = sorted(counts, key=lambda e: -counts[e])
        cls.sim_events = [busiest[0], busiest[len(busiest) // 2], busiest[-1]]
        cls.sim.ready(cls.sim_events[0])
        cls.built.ready(EVENTS[0])

    @classmethod
    def tearDownClass(cls):
        rcs = [cls.sim.srv.stop()[0], cls.built.srv.stop()[0]]
        cls.sim.srv.__exit__()
        cls.built.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rcs == [0, 0], rcs

    def compare(self, cap, eid, *opts):
        out, _ = tool(cap.feed, eid, *opts)
        body = cap.server(as_query(eid, opts))
        if "csv" in opts:
            self.assertEqual(out, body, (eid, opts))
            self.assertGreater(out.count("\n"), 1, (eid, opts))  # rows besides the header
            return
        same_but_epoch(self, body, out, (eid, opts))
        a = json.loads(out)
        self.assertEqual((a["success"], a["seq"], a["epoch"]), (True, cap.seq, ""))
        return a

    def test_raw_points_of_several_events(self):
        points = 0
        for cap, events in ((self.sim, self.sim_events), (self.built, EVENTS)):
            for eid in events:
                a = self.compare(cap, eid)
                points += sum(len(o["points"]) for m in a["data"].values() for l in m.values() for o in l.values())
        self.assertGreater(points, 500)

    def test_filters_and_window(self):
        eid = EVENTS[1]
        a = self.compare(self.built, eid, "--market", "1018", "--line", "s2.5", "--outcome", "13")
        self.assertEqual(list(a["data"]), ["1018"])
        self.compare(self.built, eid, "--market", "1001")
        first = json.loads(tool(self.built.feed, eid)[0])["data"]["1001"]["s"]["2001"]["points"]
        lo, hi = first[len(first) // 4][0], first[len(first) // 2][0]
        self.compare(self.built, eid, "--from", str(lo), "--to", str(hi))
        # Any id form the server takes: the numeric tail.
        self.compare(self.built, eid.rsplit(".", 1)[1])
        sim = self.compare(self.sim, self.sim_events[0])
        market = next(iter(sim["data"]))
        self.assertEqual(list(self.compare(self.sim, self.sim_events[0], "--market", market)["data"]), [market])

    def test_candles(self):
        for interval in ("1s", "1m", "1h"):
            self.compare(self.built, EVENTS[0], "--interval", interval)
            a = self.compare(self.sim, self.sim_events[0], "--interval", interval)
            self.assertTrue(any(o["candles"] for m in a["data"].values() for l in m.values() for o in l.values()))

    def test_csv(self):
        self.compare(self.built, EVENTS[2], "--format", "csv")
        self.compare(self.built, EVENTS[3], "--format", "csv", "--interval", "10s")
        self.compare(self.sim, self.sim_events[1], "--format", "csv")

    def test_errors(self):
        out, err = tool(self.built.feed, "s7-1.999", code=1)
        self.assertEqual(out, "")
        self.assertIn("Event not found", err)
        for opts in (["--interval", "2m"], ["--format", "xml"], ["--market", "-1"], ["--from", "5", "--to", "4"],
                     ["--to", "x"], ["--bogus", "1"], ["--market"]):
            out, err = tool(self.built.feed, EVENTS[0], *opts, code=2)
            self.assertIn("usage: oddsfeed history", err, opts)
        rc, _, err = h.run([h.binary("oddsfeed"), "history", self.built.feed])
        self.assertEqual(rc, 2, err)
        rc, out, _ = h.run([h.binary("oddsfeed"), "history", "--help"])
        self.assertEqual(rc, 0)
        self.assertIn("history FILE --id EVENT", out)


if __name__ == "__main__":
    h.main()
