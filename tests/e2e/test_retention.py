"""Retention through the real binary (--retain-ended, a horizon of seconds
of feed time): on a replay where one event ends early, one is removed early
without a final and one ends late, the early ones are gone from /v1/scores,
/v1/settlements (not_found), /v1/event and /v1/odds while the late one still
settles; the compacted snapshot no longer carries them; a restart on the
same --data-dir answers exactly the same; a late correction for an evicted
event is applied as for a new event; and the streams say an evicted listed
event left the lists (/pt-ws null, /ws live_update null)."""
import asyncio
import glob
import json
import os
import shutil
import time
import unittest

import websockets

import harness as h

KEY = "retain-key"
KEYS = {"keys": [{"key": KEY, "name": "retain", "ws_connections": 10,
                  "permissions": ["live", "prematch", "odds", "scores"]}]}
T0 = 1767225600000
EARLY, GONE, LATE, NEW = "s7-1.101", "s7-1.103", "s7-1.102", "s7-1.104"


class Feed:
    def __init__(self):
        self.lines = [json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"})]

    def rec(self, at, **r):
        self.lines.append(json.dumps({"at": T0 + at, **r}, separators=(",", ":")))

    def event(self, at, eid, live):
        n = eid.rsplit(".", 1)[1]
        self.rec(at, op="event", id=eid, event={
            "c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11, "ts": T0 // 1000,
            "h": f"Home {n}", "a": f"Away {n}", "co": 101, "map": {f"s7_l1.{n}": {"p": 0}}, "s": 0,
            "live": live, "sport": 1})

    def odds(self, at, eid, home=200):
        self.rec(at, op="market", id=eid, market=1001,
                 lines={"s": {"s": 0, "o": {"2001": [home, 0], "2002": [320, 0], "2003": [380, 0]}}})

    def score(self, at, eid, status, home=None, away=None):
        r = {"op": "score", "id": eid, "status": status}
        if home is not None:
            r["home"], r["away"] = home, away
        self.rec(at, **r)

    def write(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        return len(self.lines) - 1


def build_feed(path):
    """60 s of feed time. EARLY ends at 1 s and stays listed; GONE is
    removed at 1.5 s without a final (its scoreboard stays); LATE is priced
    every 200 ms and ends at 50 s; NEW is listed at 60 s. With a 20 s horizon
    EARLY leaves at the record of 21 s, GONE at that of 21.6 s; LATE's last
    record is at 50 s, 10 s before the feed ends: it stays."""
    f = Feed()
    f.event(0, EARLY, True)
    f.odds(0, EARLY)
    f.score(0, EARLY, "live", 0, 0)
    f.event(0, LATE, True)
    f.odds(0, LATE)
    f.score(0, LATE, "live", 0, 0)
    f.event(0, GONE, False)
    f.score(0, GONE, "scheduled")
    f.score(1000, EARLY, "ended", 2, 1)
    f.rec(1500, op="remove", id=GONE)
    for i, t in enumerate(range(2000, 50000, 200)):
        f.odds(t, LATE, 150 + i % 50)
    f.score(50000, LATE, "ended", 1, 1)
    f.event(60000, NEW, False)
    return f.write(path)


def position_of(path, at):
    """The seq of the feed's first record at or after `at`."""
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()][1:]  # after the header
    return next(i + 1 for i, r in enumerate(recs) if r["at"] >= at)


def get(port, path, code=200):
    r, body = h.request(port, path, KEY)
    assert r.status == code, (path, r.status, body)
    return json.loads(body)


def answers(port):
    """What a client reads about the three events."""
    ids = ",".join((EARLY, LATE, GONE))
    st = h.status(port, KEY)
    return {
        "events": st["events"], "seq": st["seq"], "feed_clock": st["feed_clock"],
        "scores": get(port, f"/v1/scores?ids={ids}"),
        "settlements": get(port, f"/v1/settlements?ids={ids}"),
        "odds": get(port, f"/v1/odds?ids={ids}"),
        "event_early": get(port, f"/v1/event?id={EARLY}", 404),
        "event_late": get(port, f"/v1/event?id={LATE}"),
    }


class Retention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("retain")
        cls.keys = h.write_keys(cls.dir, KEYS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def server(self, *extra):
        return h.Server("--keys", self.keys, "--progress", "0", *extra)

    def check_evicted(self, a):
        self.assertEqual(a["events"], {"held": 2, "live": 0, "prematch": 1, "ended": 1, "other": 0, "evicted": 2})
        self.assertEqual(a["feed_clock"], T0 + 60000)
        self.assertEqual(list(a["scores"]["data"]), [LATE])
        self.assertEqual(a["scores"]["data"][LATE]["status"], "ended")
        s = a["settlements"]
        self.assertEqual(list(s["data"]), [LATE])
        self.assertEqual(s["not_found"], [EARLY, GONE])
        late = s["data"][LATE]
        self.assertEqual((late["status"], late["result"], late["score"]), ("ended", "completed", {"home": 1, "away": 1}))
        outcomes = late["markets"]["1001"]["lines"]["s"]["outcomes"]
        self.assertEqual({o: v["result"] for o, v in outcomes.items()}, {"2001": "lose", "2002": "win", "2003": "lose"})
        self.assertEqual(a["odds"]["data"], {LATE: a["odds"]["data"][LATE]})
        self.assertEqual(a["event_early"], {"error": "Event not found"})
        self.assertEqual(a["event_late"]["data"]["h"], "Home 102")

    def test_early_events_leave_late_one_settles_and_a_restart_agrees(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        n = build_feed(feed)
        data = os.path.join(self.dir, "data")
        with self.server("--feed", f"replay:{feed},speed=max", "--data-dir", data, "--retain-ended", "20s",
                         "--snapshot-every", "100") as srv:
            srv.wait_for(r"serving http://")
            st = h.wait_done(srv.port, KEY)
            self.assertEqual(st["seq"], n)
            self.assertEqual(st["retain_ended"], 20)
            first = answers(srv.port)
            self.check_evicted(first)
            # Compaction: a snapshot written after the evictions holds none of
            # them. The replay may come in several batches (a busy machine), the
            # first snapshot before the evictions; one due while it was being
            # written is taken once the feed is idle, not at a next record.
            evicted_at = position_of(feed, T0 + 21600)
            deadline = time.time() + 60
            while time.time() < deadline and h.status(srv.port, KEY)["log"]["last_snapshot_seq"] < evicted_at:
                time.sleep(0.1)
            self.assertGreaterEqual(h.status(srv.port, KEY)["log"]["last_snapshot_seq"], evicted_at)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log[-2000:])
        digest = h.stopped_digest(log)
        snaps = sorted(glob.glob(os.path.join(data, "snapshot-*.jsonl")))
        self.assertTrue(snaps)
        with open(snaps[-1]) as f:
            newest = f.read()
        header = json.loads(newest.splitlines()[0])
        self.assertEqual((header["evicted"], header["retain_ended"]), (2, 20000))
        self.assertNotIn(f'"id":"{EARLY}"', newest)
        self.assertNotIn(f'"id":"{GONE}"', newest)
        self.assertIn(f'"id":"{LATE}"', newest)

        # The same log, digested offline with the same horizon, is the same
        # state; with the default horizon (nothing evicted) it is another.
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", feed, "--retain-ended", "20s"])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"digest={digest}", out)
        self.assertNotEqual(h.file_digest(feed), digest)
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", data, "--retain-ended", "20s"])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"seq={n} ", out)
        self.assertIn(f"digest={digest}", out)
        # Without the flag, a data dir is digested with the horizon its newest
        # snapshot was kept with.
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", data])
        self.assertEqual(rc, 0, err)
        self.assertIn("retain_ended=20s", out)
        self.assertIn(f"digest={digest}", out)

        # A restart on the data dir answers byte for byte as before.
        with self.server("--feed", "none", "--data-dir", data, "--retain-ended", "20s") as srv:
            srv.wait_for(r"serving http://")
            self.assertEqual(answers(srv.port), first)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log[-2000:])
        self.assertEqual(h.stopped_digest(log), digest)

        # A late correction for the evicted EARLY is applied as for a new
        # event: a first final with no odds; GONE stays unknown.
        late = Feed()
        late.score(61000, EARLY, "ended", 3, 1)
        late_path = os.path.join(self.dir, "late.jsonl")
        late.write(late_path)
        with self.server("--feed", f"replay:{late_path},speed=max", "--data-dir", data, "--retain-ended", "20s") as srv:
            srv.wait_for(r"serving http://")
            st = h.wait_done(srv.port, KEY)
            self.assertEqual(st["seq"], n + 1)
            self.assertEqual(st["events"], {"held": 3, "live": 0, "prematch": 1, "ended": 2, "other": 0, "evicted": 2})
            s = get(srv.port, f"/v1/settlements?ids={EARLY},{GONE}")
            self.assertEqual(s["not_found"], [GONE])
            early = s["data"][EARLY]
            self.assertEqual((early["status"], early["score"]), ("ended", {"home": 3, "away": 1}))
            self.assertEqual(early["coverage"]["markets"], 0)  # its odds left with it
            get(srv.port, f"/v1/event?id={EARLY}", 404)  # a score is no listing

    def test_streams_see_an_evicted_listed_event_leave(self):
        """Paced at real time: EARLY ends at 0.5 s and stays listed; the next
        record comes 12 s later and, with a 10 s horizon, evicts it. The
        clients connect within those 12 s and must see it leave."""
        f = Feed()
        f.event(0, EARLY, True)
        f.odds(0, EARLY)
        f.event(0, LATE, True)
        f.odds(0, LATE)
        f.score(500, EARLY, "ended", 2, 1)
        f.odds(12500, LATE, 170)
        path = os.path.join(self.dir, "paced.jsonl")
        f.write(path)
        with self.server("--feed", f"replay:{path},speed=1", "--retain-ended", "10s", "--ws-update", "10") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port

            async def pt():
                seen, left = False, None
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2"
                async with websockets.connect(url, max_size=None) as ws:
                    while True:
                        t, ch, body = (await asyncio.wait_for(ws.recv(), 60)).split("\x1f", 2)
                        body = json.loads(body)
                        if ch == "evt:1" and EARLY in body:
                            if body[EARLY] is None:
                                return seen, body
                            seen = True

            async def ws():
                seen = False
                async with websockets.connect(f"ws://127.0.0.1:{port}/ws?api_key={KEY}", max_size=None) as c:
                    while True:
                        m = json.loads(await asyncio.wait_for(c.recv(), 60))
                        if m["type"] == "snapshot" and EARLY in m["live"]:
                            seen = True
                        if m["type"] == "live_update" and EARLY in m["data"]:
                            if m["data"][EARLY] is None:
                                return seen, m
                            seen = True

            async def both():
                return await asyncio.gather(pt(), ws())

            (pt_seen, pt_frame), (ws_seen, ws_msg) = h.run_async(both(), 90)
            self.assertTrue(pt_seen, "/pt-ws never saw the event listed: connected after the eviction?")
            self.assertEqual(pt_frame, {EARLY: None})
            self.assertTrue(ws_seen, "/ws never saw the event listed: connected after the eviction?")
            self.assertIsNone(ws_msg["data"][EARLY])
            st = h.status(port, KEY)
            self.assertEqual(st["events"]["evicted"], 1)
            get(port, f"/v1/event?id={EARLY}", 404)


if __name__ == "__main__":
    h.main()
