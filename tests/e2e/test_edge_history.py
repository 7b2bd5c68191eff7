"""An edge's odds history, through the real binaries and nats-server on
loopback: an ingest publishes a simulated log, an edge joins it late (from a
snapshot, after some records), and from its held_from_seq on the two answer
GET /v1/odds/history alike for every event and point: the edge seeds its
history with the joined state, so the records it applies after it make the
points they made on the ingest, no more (docs/api.md "Odds history"); and
the book at a moment after the join is the ingest's, byte for byte.
Skips when nats-server is not installed."""
import json
import os
import shutil
import sys
import unittest
import urllib.parse

import harness as h
from test_nats import NATS, NatsNodes, wait_until

KEY = "edge-history-key"
KEYS = {"keys": [{"key": KEY, "name": "edge-history", "permissions": ["live", "prematch", "odds"]}]}


def held_points(answer, lo, hi):
    """{(market, line, outcome): [points with lo <= seq <= hi]} of a history answer."""
    out = {}
    for m, lines in answer["data"].items():
        for line, outcomes in lines.items():
            for o, v in outcomes.items():
                pts = [p for p in v["points"] if lo <= p[-1] <= hi]
                if pts:
                    out[(m, line, o)] = pts
    return out


class EdgeHistory(NatsNodes, unittest.TestCase):
    wait_serving = True

    def setUp(self):
        self.dir = h.scratch("edge-history")
        self.keys = h.write_keys(self.dir, KEYS)
        self.start_nats(os.path.join(self.dir, "js"))

    def tearDown(self):
        self.stop_nats()
        shutil.rmtree(self.dir)

    def status(self, port):
        return h.status(port, KEY, ready_within=60)

    def history(self, port, event):
        r, body = h.request(port, "/v1/odds/history?id=" + urllib.parse.quote(event), KEY)
        self.assertEqual(r.status, 200, body[:200])
        return json.loads(body)

    def test_a_late_edge_answers_as_the_ingest_from_its_held_from_seq(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", "sim:seed=5,events=24,rate=800", "--publish", url, "--publish-snapshot-every",
                           "300")
        self.assertEqual(self.status(ingest.port)["history"]["held_from_seq"], 0)
        # Late: after a snapshot and some records more.
        wait_until(lambda: self.status(ingest.port)["bus"]["last_snapshot_seq"] >= 600, "a snapshot on the bus", 60)
        edge = self.node("--feed", url)
        edge.wait_for(r"joined log \w+ at seq \d+ from a snapshot")
        joined = self.status(edge.port)["bus"]["joined_seq"]
        self.assertGreater(joined, 0)
        # The edge applied records of its own: points it made itself.
        st = wait_until(lambda: (s := self.status(edge.port)) and s["history"]["seq"] >= joined + 400 and s,
                        "the edge's history past its join", 60)
        held_from_seq = st["history"]["held_from_seq"]
        self.assertGreater(held_from_seq, 0)
        self.assertLessEqual(held_from_seq, joined + 1)  # its first applied record's seq
        self.assertEqual(held_from_seq, joined + 1)
        self.assertEqual(self.status(ingest.port)["history"]["held_from_seq"], 0)

        ids = self.event_ids(edge.port)
        self.assertGreaterEqual(len(ids), 5)
        compared = before = late_ts = 0
        early_ts = 1 << 62
        for event in ids:
            got = self.history(edge.port, event)
            self.assertEqual(got["held_from_seq"], held_from_seq)
            # The ingest is ahead of the edge: its answer holds every point the edge's does.
            want = wait_until(lambda: (a := self.history(ingest.port, event)) and a["seq"] >= got["seq"] and a,
                              "the ingest past the edge", 30)
            self.assertEqual(want["held_from_seq"], 0)
            self.assertEqual(got["epoch"], want["epoch"])
            mine = held_points(got, 0, got["seq"])
            self.assertEqual(mine, held_points(got, held_from_seq, got["seq"]), "a point before held_from_seq")
            theirs = held_points(want, held_from_seq, got["seq"])
            self.assertEqual(mine, theirs, event)
            compared += sum(len(p) for p in mine.values())
            for pts in mine.values():
                late_ts = max([late_ts] + [p[0] for p in pts if p[-1] > held_from_seq + 50])
            for pts in held_points(want, 0, held_from_seq - 1).values():
                early_ts = min([early_ts] + [p[0] for p in pts])
            before += sum(len(p) for p in held_points(want, 0, held_from_seq - 1).values())
        self.assertGreater(compared, 50)
        self.assertGreater(before, 0)  # the ingest holds what the edge never saw
        self.book_at_a_moment(ingest, edge, ids, late_ts, early_ts)

    def book_at_a_moment(self, ingest, edge, ids, late_ts, early_ts):
        """GET /v1/odds?at=: after the edge's join, the same bytes from both
        (the seeded quotes keep each outcome's ts); before it, the edge
        refuses what it does not hold."""
        path = "/v1/odds?ids=" + urllib.parse.quote(",".join(ids)) + "&at="
        r, want = h.request(ingest.port, path + str(late_ts), KEY)
        self.assertEqual(r.status, 200, want[:200])
        r, got = h.request(edge.port, path + str(late_ts), KEY)
        self.assertEqual(r.status, 200, got[:200])
        self.assertEqual(got, want)
        self.assertGreater(len(json.loads(got)["data"]), 0)
        r, body = h.request(edge.port, path + str(early_ts), KEY)
        self.assertEqual(r.status, 400, body[:200])
        self.assertEqual(json.loads(body)["error"], "horizon_exceeded")
        r, body = h.request(ingest.port, path + str(early_ts), KEY)
        self.assertEqual(r.status, 200, body[:200])

    def event_ids(self, port):
        ids = []
        for path in ("/v1/live", "/v1/prematch"):
            r, body = h.request(port, path, KEY)
            self.assertEqual(r.status, 200)
            for evs in json.loads(body)["data"].values():
                ids.extend(evs)
        return sorted(ids)[:12]


if __name__ == "__main__":
    if NATS is None:
        print("test_edge_history: SKIPPED: nats-server is not installed (scripts/install-deps.sh installs it)")
        sys.exit(0)
    h.main()
