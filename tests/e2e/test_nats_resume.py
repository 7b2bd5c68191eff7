"""Resume across edges. Edges follow one log, so (epoch, seq) names the same
state on each of them, and each keeps its own resume window, filled from the
batches it applied since it joined. A /pt-ws client that followed edge A and
comes back on edge B with resume=<epoch>:<seq> is resumed with exactly the
groups it missed: B's own frames for those records (those a client connected
to B all along got), INFOs running on from <seq> + 1 without a gap, and in the
end the state of a fresh connection to either edge and of REST. A client whose
seq is before B joined (B's window starts at its join point) is refused with
too_old and gets the snapshot. The same for /ws: resumed with one live_update
of the live events that changed, or refused before B's join.
Skips when nats-server is not installed."""
import asyncio
import json
import os
import re
import shutil
import sys
import time
import unittest

import websockets

import harness as h
from test_nats import NATS, NatsNodes, wait_until
from test_resume import PtClient, clean, follow, number_of

KEY = "edge-key"
KEYS = {"keys": [{"key": KEY, "name": "edges", "ws_connections": 50, "permissions": ["live", "prematch", "odds"]}]}
RECORDS = 45000


class CrossEdgeResume(NatsNodes, unittest.TestCase):
    node_args = ("--ws-update", "100", "--resume-window", "512M,600s")
    wait_serving = True

    def setUp(self):
        self.dir = h.scratch("nats-resume")
        self.keys = h.write_keys(self.dir, KEYS)
        self.feed = os.path.join(self.dir, "feed.jsonl")
        h.gen_feed(self.feed, RECORDS, "seed=7,events=60,rate=400")
        self.start_nats(os.path.join(self.dir, "js"))

    def tearDown(self):
        self.stop_nats()
        shutil.rmtree(self.dir)

    def rest(self, port, path):
        r, body = h.request(port, path, KEY)
        self.assertEqual(r.status, 200, body[:200])
        return json.loads(body)

    async def wait_seq(self, port, at_least, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if h.status(port, KEY)["seq"] >= at_least:
                return
            await asyncio.sleep(0.05)
        self.fail(f"seq never reached {at_least} on :{port}")

    def connect(self, port, path, extra=""):
        return websockets.connect(f"ws://127.0.0.1:{port}{path}?api_key={KEY}{extra}", max_size=None, max_queue=None)

    def rest_state(self, port):
        events = {}
        for group in (self.rest(port, "/v1/live")["data"], self.rest(port, "/v1/prematch")["data"]):
            for evs in group.values():
                events.update(evs)
        live = sorted(k for k, v in events.items() if v["live"])
        odds = {}
        for i in range(0, len(live), 100):
            odds.update(self.rest(port, "/v1/odds?ids=" + ",".join(live[i:i + 100]))["data"])
        return events, {number_of(k): odds[k] for k in live if odds.get(k)}

    def test_a_client_of_one_edge_resumes_on_another(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", f"replay:{self.feed},speed=3", "--publish", url,
                           "--publish-snapshot-every", "500")
        a = self.node("--feed", url)
        epoch = a.wait_for(r"joined log (\w+) at seq (\d+)").group(1)
        a_joined = h.status(a.port, KEY)["bus"]["joined_seq"]

        async def pt_away(port, after):
            """A /pt-ws client of `port` that follows until its seq is past
            `after` and a few groups more, then leaves."""
            c = PtClient(self)
            async with self.connect(port, "/pt-ws", "&protocol=v2") as ws:
                c.apply(await ws.recv())
                self.assertEqual(c.ready["epoch"], epoch)
                await follow(ws, c, until_seq=after + 1)
                await follow(ws, c, infos=3)
            c.state()
            return c

        async def ws_away(port, after):
            """A /ws client that leaves after a live_update past `after`;
            returns its live events and the seq it would resume from."""
            async with self.connect(port, "/ws") as ws:
                snap = json.loads(await ws.recv())
                self.assertEqual((snap["type"], snap["epoch"]), ("snapshot", epoch))
                live, last = dict(snap["live"]), snap["seq"]
                while last <= after:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    if m.get("type") == "live_update":
                        apply_live(live, m)
                        last = m["seq"]
            return live, last

        async def go():
            await self.wait_seq(a.port, a_joined + 1)
            # Early clients of A: their positions come before B joins.
            early_pt, (early_live, w0) = await asyncio.gather(pt_away(a.port, a_joined), ws_away(a.port, a_joined))
            s0 = early_pt.seq
            await self.wait_seq(ingest.port, max(s0, w0) + 1500)
            b = self.node("--feed", url)
            m = b.wait_for(r"joined log (\w+) at seq (\d+) from a snapshot")
            b_joined = int(m.group(2))
            self.assertEqual(m.group(1), epoch)
            self.assertGreater(b_joined, max(s0, w0), "B must join after the early clients left")
            self.assertEqual(h.status(b.port, KEY)["bus"]["joined_seq"], b_joined)
            # A client of B from its start: what B sent for each range of records.
            control = PtClient(self)
            cws = await websockets.connect(f"ws://127.0.0.1:{b.port}/pt-ws?api_key={KEY}&protocol=v2",
                                           max_size=None, max_queue=None)
            control.apply(await cws.recv())
            control_task = asyncio.create_task(follow(cws, control, until_seq=RECORDS))
            # Late clients of A: their positions lie after B joined.
            late_pt, (late_live, w1) = await asyncio.gather(pt_away(a.port, b_joined), ws_away(a.port, b_joined))
            s1 = late_pt.seq
            self.assertGreater(min(s1, w1), b_joined)
            self.assertLess(max(s1, w1) + 600, RECORDS, "the feed ran out before the test could")
            # Away while the ingest goes on publishing.
            await self.wait_seq(b.port, max(s1, w1) + 600)

            async def pt_back(c, expect_resumed):
                away_at = c.seq
                async with self.connect(b.port, "/pt-ws", f"&protocol=v2&resume={epoch}:{away_at}") as ws:
                    c.apply(await ws.recv())
                    r = c.ready
                    self.assertEqual(r["epoch"], epoch)
                    if not expect_resumed:
                        self.assertEqual((r["resumed"], r["reason"]), (False, "too_old"))
                        await follow(ws, c, until_seq=RECORDS)
                        return None
                    self.assertEqual(r["resumed"], True)
                    self.assertNotIn("reason", r)
                    self.assertGreaterEqual(r["seq"], away_at + 600)
                    groups_before = len(c.groups)
                    await follow(ws, c, until_seq=RECORDS)
                    caught_up = [g for g in c.groups[groups_before:] if g[1] <= r["seq"]]
                    self.assertEqual(caught_up[0][0], away_at + 1)
                    self.assertEqual(caught_up[-1][1], r["seq"])
                    return groups_before

            async def ws_back(live, last, expect_resumed):
                async with self.connect(b.port, "/ws", f"&resume={epoch}:{last}") as ws:
                    r = json.loads(await ws.recv())
                    if not expect_resumed:
                        self.assertEqual((r["type"], r["resumed"], r["reason"]), ("snapshot", False, "too_old"))
                        self.assertGreater(r["seq"], b_joined)
                        return None
                    self.assertEqual((r["type"], r["resumed"], r["epoch"]), ("resumed", True, epoch))
                    self.assertGreaterEqual(r["seq"], last + 600)
                    self.assertGreater(r["changed"], 0)
                    u = json.loads(await ws.recv())
                    self.assertEqual((u["type"], u["seq"], len(u["data"])), ("live_update", r["seq"], r["changed"]))
                    apply_live(live, u)
                    # Ordinary live_updates follow until the feed is done.
                    while h.status(b.port, KEY)["seq"] < RECORDS:
                        try:
                            m = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
                        except asyncio.TimeoutError:
                            continue
                        if m.get("type") == "live_update":
                            self.assertGreater(m["seq"], last)
                            apply_live(live, m)
                            last = m["seq"]
                # Once more from the last live_update: exactly to the final seq.
                async with self.connect(b.port, "/ws", f"&resume={epoch}:{last}") as ws:
                    r = json.loads(await ws.recv())
                    self.assertEqual((r["type"], r["resumed"], r["seq"]), ("resumed", True, RECORDS))
                    if r["changed"]:
                        u = json.loads(await ws.recv())
                        self.assertEqual((u["type"], u["seq"], len(u["data"])), ("live_update", RECORDS, r["changed"]))
                        apply_live(live, u)
                return live

            late_from, _, late_live, _ = await asyncio.gather(
                pt_back(late_pt, True), pt_back(early_pt, False), ws_back(late_live, w1, True),
                ws_back(early_live, w0, False))
            await control_task
            await cws.close()
            return b, b_joined, control, late_pt, late_from, early_pt, late_live

        b, b_joined, control, late_pt, late_from, early_pt, late_live = h.run_async(go(), 300)
        for port in (ingest.port, a.port, b.port):
            self.assertEqual(h.status(port, KEY)["seq"], RECORDS)

        # Every group the resumed client got, caught up or live, holds B's
        # frames for that range: the catch-up is what B's fan-out sent.
        by_range = clean(control.groups[1:])
        mine = clean(late_pt.groups[late_from:])
        both = [r for r in mine if r in by_range]
        self.assertGreater(len(both), 10)
        for r in both:
            self.assertEqual(mine[r], by_range[r], r)

        # The same state everywhere at the final seq: the resumed client, the
        # refused one (snapshot then deltas), B's control client, fresh
        # connections to A and to B, and REST on both edges.
        fresh_a, fresh_b = self.fresh(a.port), self.fresh(b.port)
        self.assertEqual(fresh_a, fresh_b)
        for c in (late_pt, early_pt, control):
            self.assertEqual(c.state(), fresh_b)
        self.assertEqual(self.rest_state(b.port), fresh_b)
        self.assertEqual(self.rest_state(a.port), fresh_b)
        self.assertTrue(fresh_b[1], "no live odds at the end: the comparison is empty")

        async def ws_fresh(port):
            async with self.connect(port, "/ws") as ws:
                return json.loads(await ws.recv())
        snap = h.run_async(ws_fresh(b.port), 60)
        self.assertEqual((snap["seq"], snap["epoch"]), (RECORDS, epoch))
        self.assertEqual(late_live, snap["live"])

        relay_b = h.status(b.port, KEY)["relay"]
        # pt and ws resumed on B, and the final /ws resume; pt and ws refused.
        self.assertEqual((relay_b["resumed"], relay_b["resume_refused"]), (3, 2), relay_b)
        self.assertEqual(relay_b["resume_window"]["oldest_seq"], b_joined)
        for s in (ingest, a, b):
            rc, out = s.stop()
            self.assertEqual(rc, 0, out)

    def fresh(self, port):
        async def go():
            c = PtClient(self)
            async with self.connect(port, "/pt-ws", "&protocol=v2") as ws:
                c.apply(await ws.recv())
                self.assertEqual(c.ready["seq"], RECORDS)
                for _ in c.ready["sports"]:
                    c.apply(await asyncio.wait_for(ws.recv(), 30))
                live = sum(1 for v in c.state()[0].values() if v["live"])
                for _ in range(live):
                    c.apply(await asyncio.wait_for(ws.recv(), 30))
            return c.state()
        return h.run_async(go(), 60)


def apply_live(live, m):
    for k, v in m["data"].items():
        if v is None or not v["live"]:
            live.pop(k, None)
        else:
            live[k] = v


if __name__ == "__main__":
    if NATS is None:
        print("test_nats_resume: SKIPPED: nats-server is not installed (scripts/install-deps.sh installs it)")
        sys.exit(0)
    h.main()
