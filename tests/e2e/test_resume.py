"""Stream resume as a client uses it: a /pt-ws client that applied a snapshot
and deltas, disconnected and came back with resume=<epoch>:<its last INFO
seq> gets exactly the groups it missed (the same frames a client that stayed
connected got, filtered by its sports, no snapshot) and ends with the state a
fresh connection and REST have at the same seq; resuming inside a group,
from the very start of the log and at the current seq; refusals (other
epoch, ahead, malformed, too old for a tiny window) still upgrade and send
the snapshot with a reason; /ws resume, and seq on every /ws message."""
import asyncio
import json
import os
import re
import struct
import time

import websockets

import harness as h
from wsraw import RawWs

KEY = "resume-key"
KEYS = {"keys": [{"key": KEY, "name": "resume", "ws_connections": 50, "permissions": ["live", "prematch", "odds"]}]}


def number_of(key):
    return int(key.rsplit(".", 1)[-1].rsplit("-", 1)[-1])


class PtClient:
    """A /pt-ws client: its position (seq of the last INFO applied), the
    frames of each group it saw as (from, seq, frames, conflated), and the
    events and odds those frames build. It keeps its state across a resumed
    reconnect, as a real client would. Frames are parsed when the state is
    asked for, so reading keeps up with the stream."""

    def __init__(self, test):
        self.t = test
        self.events, self.odds = {}, {}
        self.frames = []     # not yet applied to events/odds
        self.seq = None
        self.ready = None
        self.groups = []
        self.pending = []
        self.conflated = 0

    def apply(self, raw):
        if raw.startswith("INFO"):
            t, ch, body = h.split_frame(raw)
            if body.get("ready"):
                self.ready = body
                if not body.get("resumed"):  # a snapshot follows: start over
                    self.events, self.odds, self.frames, self.pending = {}, {}, [], []
                    self.seq = body["seq"]
                return body
            self.t.assertEqual(body["from"], self.seq + 1, "INFOs must run on without a gap")
            self.t.assertLessEqual(body["from"], body["seq"])
            k = body.get("conflated", 0)
            self.conflated += k
            self.groups.append((body["from"], body["seq"], self.pending, k))
            self.pending = []
            self.seq = body["seq"]
            return body
        self.t.assertTrue(raw.startswith("P" + h.SEP), raw[:40])
        self.pending.append(raw)
        self.frames.append(raw)
        return None

    def state(self):
        for raw in self.frames:
            t, ch, body = h.split_frame(raw)
            kind, *rest = ch.split(":")
            if kind == "evt":
                for k, v in body.items():
                    if v is None:
                        self.events.pop(k, None)
                    else:
                        self.t.assertEqual(v["sport"], int(rest[0]))
                        self.events[k] = v
                    if v is None or not v["live"]:
                        self.odds.pop(number_of(k), None)  # odds channels are for live events only
            else:
                self.t.assertEqual(kind, "odds")
                book = self.odds.setdefault(int(rest[1]), {})
                for m, lines in body.items():
                    if lines is None:
                        book.pop(m, None)
                    else:
                        book[m] = lines
        self.frames = []
        return self.events, {n: b for n, b in self.odds.items() if b}


def clean(groups):
    """Groups exactly as fan-out sent them: with conflation, a replaced frame
    leaves its group and a replaced INFO merges ranges; an INFO without
    "conflated" closes a group that neither happened to."""
    return {(f, s): frames for f, s, frames, k in groups if k == 0}


async def follow(ws, client, until_seq=None, infos=None):
    """Applies frames until the client's seq reaches until_seq, or until
    `infos` more INFOs arrived."""
    seen = 0
    while True:
        if until_seq is not None and client.seq is not None and client.seq >= until_seq:
            return
        body = client.apply(await asyncio.wait_for(ws.recv(), 60))
        if body is not None and "ready" not in body:
            seen += 1
            if infos is not None and seen >= infos:
                return


class Base(h.WithKeys):
    KEYS, SCRATCH = KEYS, "resume"

    def gen(self, records, sim):
        feed = os.path.join(self.dir, "feed.jsonl")
        rc, out, err = h.run([h.binary("oddsfeed"), "gen", "-o", feed, "--records", str(records), "--sim", sim])
        self.assertEqual(rc, 0, err)
        n = int(re.search(r"wrote (\d+) records", out + err).group(1))
        self.assertEqual(n, records)
        return feed

    def rest(self, path):
        r, body = h.request(self.port, path, KEY)
        data = json.loads(body)
        self.assertEqual(r.status, 200, data)
        return data

    async def wait_seq(self, at_least, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.rest("/v1/status")["seq"] >= at_least:
                return
            await asyncio.sleep(0.05)
        self.fail("the server's seq never reached %d" % at_least)

    def url(self, path, extra=""):
        return f"ws://127.0.0.1:{self.port}{path}?api_key={KEY}{extra}"

    def connect(self, path, extra=""):
        return websockets.connect(self.url(path, extra), max_size=None, max_queue=None)

    def assert_rest_state(self, events, odds):
        rest_events = {}
        for group in (self.rest("/v1/live")["data"], self.rest("/v1/prematch")["data"]):
            for evs in group.values():
                rest_events.update(evs)
        self.assertEqual(events, rest_events)
        live_keys = [k for k, v in events.items() if v["live"]]
        self.assertTrue(live_keys)
        rest_odds = {}
        for i in range(0, len(live_keys), 100):
            rest_odds.update(self.rest("/v1/odds?ids=" + ",".join(live_keys[i:i + 100]))["data"])
        for k in live_keys:
            self.assertEqual(odds.get(number_of(k), {}), rest_odds.get(k, {}), k)

    def refused_snapshot(self, extra, reason, path="/pt-ws"):
        """A resume the server cannot honour: still 101, then the ready INFO
        with resumed:false and the reason, then the full snapshot."""
        async def go():
            async with self.connect(path, extra) as ws:
                if path == "/ws":
                    snap = json.loads(await ws.recv())
                    self.assertEqual((snap["type"], snap["resumed"], snap["reason"]), ("snapshot", False, reason))
                    self.assertIsInstance(snap["seq"], int)
                    self.assertTrue(snap["live"])
                    return snap
                t, ch, ready = h.split_frame(await ws.recv())
                self.assertEqual((t, ready["ready"], ready["resumed"], ready["reason"]), ("INFO", True, False, reason))
                self.assertTrue(ready["sports"])
                channels = []
                for _ in ready["sports"]:
                    t, ch, body = h.split_frame(await ws.recv())
                    channels.append(ch)
                self.assertEqual(channels, [f"evt:{s}" for s in ready["sports"]])
                return ready
        return h.run_async(go(), 60)


class PtWsResume(Base):
    def test_resumed_client_ends_with_the_fresh_state(self):
        records = 30000
        feed = self.gen(records, "seed=5,events=60,rate=400")
        # A window that holds the whole replay, so the log can be resumed from 0.
        with h.Server("--feed", f"replay:{feed},speed=4", "--keys", self.keys, "--progress", "0",
                      "--resume-window", "512M,600s") as srv:
            srv.wait_for(r"serving http://")
            self.port = srv.port
            self.main_flow(records)
            self.after_the_feed(records)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)

    def main_flow(self, records):
        async def go():
            control, full, sport1 = PtClient(self), PtClient(self), PtClient(self)
            # The control client stays connected throughout.
            cws = await websockets.connect(self.url("/pt-ws", "&protocol=v2"), max_size=None, max_queue=None)
            control.apply(await cws.recv())
            epoch = control.ready["epoch"]
            self.assertRegex(epoch, r"^[0-9a-f]{12}$")
            self.assertEqual(self.rest("/v1/status")["epoch"], epoch)
            control_task = asyncio.create_task(follow(cws, control, until_seq=records))

            async def first_part(client, extra):
                async with self.connect("/pt-ws", "&protocol=v2" + extra) as ws:
                    client.apply(await ws.recv())
                    self.assertNotIn("resumed", client.ready)
                    self.assertEqual(client.ready["epoch"], epoch)
                    await follow(ws, client, infos=5)
            await asyncio.gather(first_part(full, ""), first_part(sport1, "&sports=1"))
            self.assertLess(max(full.seq, sport1.seq) + 300, records, "the feed ran out before the test could")
            # While they are away the state moves on.
            await self.wait_seq(max(full.seq, sport1.seq) + 300)

            async def resumed_part(client, extra):
                away_at = client.seq
                async with self.connect("/pt-ws", f"&protocol=v2{extra}&resume={epoch}:{away_at}") as ws:
                    client.apply(await ws.recv())
                    r = client.ready
                    self.assertEqual((r["resumed"], r["epoch"]), (True, epoch))
                    self.assertNotIn("reason", r)
                    self.assertGreater(r["seq"], away_at)
                    groups_before = len(client.groups)
                    await follow(ws, client, until_seq=records)
                    caught_up = [g for g in client.groups[groups_before:] if g[1] <= r["seq"]]
                    # The catch-up starts right after the client's seq and ends at the ready seq;
                    # live groups then follow on (from = previous seq + 1 checked by apply()).
                    self.assertEqual(caught_up[0][0], away_at + 1)
                    self.assertEqual(caught_up[-1][1], r["seq"])
                    self.assertGreater(len(client.groups), groups_before + len(caught_up), "no live group after the catch-up")
                    return groups_before
            full_from, sport1_from = await asyncio.gather(resumed_part(full, ""), resumed_part(sport1, "&sports=1"))
            await control_task
            await cws.close()
            return control, full, full_from, sport1, sport1_from

        control, full, full_from, sport1, sport1_from = h.run_async(go(), 180)
        self.assertEqual(self.rest("/v1/status")["seq"], records)
        # Every group the resumed clients got, caught up or live, holds exactly
        # the frames the control client got for it (sports-filtered for sport1):
        # the catch-up is what live fan-out sent, not a snapshot.
        by_range = clean(control.groups[1:])
        for client, first, keep in ((full, full_from, lambda ch: True),
                                    (sport1, sport1_from, lambda ch: ch in ("evt:1",) or ch.startswith("odds:1:"))):
            mine = clean(client.groups[first:])
            both = [r for r in mine if r in by_range]
            self.assertGreater(len(both), 50)
            for r in both:
                self.assertEqual(mine[r], [x for x in by_range[r] if keep(x.split(h.SEP, 2)[1])], r)
            # Filtered, conflated or not.
            self.assertTrue(all(keep(x.split(h.SEP, 2)[1]) for g in client.groups[first:] for x in g[2]))
        self.assertTrue(any(g[2] for g in sport1.groups[sport1_from:]), "sport 1 never changed")
        self.assertTrue(any(x.split(h.SEP, 2)[1] not in ("evt:1",) and not x.split(h.SEP, 2)[1].startswith("odds:1:")
                            for g in control.groups for x in g[2]), "only sport 1 changed: the filter is untested")

        # Their states equal fresh connections' at the same (final) seq, and REST's.
        fresh, fresh1 = self.fresh(records, ""), self.fresh(records, "&sports=1")
        self.assertEqual(full.state(), fresh.state())
        self.assertEqual(sport1.state(), fresh1.state())
        self.assertEqual(control.state(), fresh.state())
        self.assertTrue(all(v["sport"] == 1 for v in sport1.events.values()) and sport1.events)
        self.assert_rest_state(*full.state())
        self.control = control

    def fresh(self, records, extra):
        async def go():
            c = PtClient(self)
            async with self.connect("/pt-ws", "&protocol=v2" + extra) as ws:
                c.apply(await ws.recv())
                self.assertEqual(c.ready["seq"], records)
                # The whole snapshot: one evt frame per sport, one odds frame per live event.
                for i in range(len(c.ready["sports"])):
                    c.apply(await asyncio.wait_for(ws.recv(), 30))
                live = sum(1 for v in c.state()[0].values() if v["live"])
                for i in range(live):
                    c.apply(await asyncio.wait_for(ws.recv(), 30))
            c.state()
            self.assertEqual(len(c.odds), live)
            return c
        return h.run_async(go(), 60)

    def after_the_feed(self, records):
        epoch = self.rest("/v1/status")["epoch"]
        fresh = self.fresh(records, "")

        # From the start of the log, into a tiny receive buffer: the catch-up
        # (megabytes) cannot all be written at once, so it conflates as for a
        # slow client, and the state still ends exactly right.
        zero = PtClient(self)
        zero.seq = 0
        conflated_before = self.rest("/v1/status")["relay"]["conflated"]
        raw = RawWs(self.port, f"/pt-ws?api_key={KEY}&protocol=v2&resume={epoch}:0", rcvbuf=4096, timeout=30)
        self.assertEqual(raw.status, 101)
        op, p = raw.recv_frame()
        zero.apply(p.decode())
        self.assertEqual((zero.ready["resumed"], zero.ready["seq"]), (True, records))
        while zero.seq < records:
            op, p = raw.recv_frame()
            self.assertEqual(op, 1)
            zero.apply(p.decode())
        raw.close()
        self.assertEqual(zero.groups[0][0], 1)
        # Whether the kernel's send buffer took a 256 KB piece of the
        # catch-up whole depends on the machine's pace: under ASan, beside
        # other tests, a clean-clone run (2026-12-02) conflated nothing. The Release run
        # asserts that it does; both check the counts and the state below.
        # Conflated, it read fewer groups than the client that followed live.
        if not h.sanitized():
            self.assertGreater(zero.conflated, 0)
            self.assertLess(len(zero.groups), len(self.control.groups))
        # The INFOs it read report every replacement, those of INFOs that were replaced included.
        self.assertEqual(zero.conflated, self.rest("/v1/status")["relay"]["conflated"] - conflated_before)
        self.assertEqual(zero.state(), fresh.state())

        # Inside a group: that whole group again, its INFO from <seq> + 1.
        multi = [(f, s, fr) for (f, s), fr in clean(self.control.groups[1:]).items() if f < s and fr]
        self.assertTrue(multi, "no group of several records in the replay")
        f, s, frames = multi[len(multi) // 2]

        async def inside():
            c = PtClient(self)
            c.seq = f
            async with self.connect("/pt-ws", f"&protocol=v2&resume={epoch}:{f}") as ws:
                c.apply(await ws.recv())
                self.assertTrue(c.ready["resumed"])
                await follow(ws, c, infos=1)
            return c
        c = h.run_async(inside(), 180)
        # (The first groups of a catch-up are queued before anything is written: never conflated.)
        self.assertEqual(c.groups[0], (f + 1, s, frames, 0))

        # At the current seq: resumed, and nothing at all is sent.
        raw = RawWs(self.port, f"/pt-ws?api_key={KEY}&protocol=v2&resume={epoch}:{records}")
        self.assertEqual(raw.status, 101)
        op, p = raw.recv_frame()
        t, ch, ready = h.split_frame(p.decode())
        self.assertEqual((ready["resumed"], ready["seq"], ready["epoch"]), (True, records, epoch))
        raw.send_frame(9, b"after-ready")
        op, p = raw.recv_frame()
        self.assertEqual((op, p), (10, b"after-ready"), "nothing comes between the ready INFO and the pong")
        raw.close()

        # Refusals: still 101, the reason, then the snapshot.
        self.refused_snapshot(f"&protocol=v2&resume=0123456789ab:{records}", "other_epoch")
        self.refused_snapshot(f"&protocol=v2&resume={epoch}:{records + 1}", "ahead")
        malformed = ["garbage", "", f"{epoch}:", f":{records}", f"{epoch}:-1", f"{epoch}:1x", f"{epoch}:+5",
                     f"{epoch}:99999999999999999999999", "x" * 65 + ":1"]
        for value in malformed:
            self.refused_snapshot(f"&protocol=v2&resume={value}", "malformed")
        self.refused_snapshot(f"&resume={epoch}", "malformed", path="/ws")
        relay = self.rest("/v1/status")["relay"]
        # 2 resumed in main_flow, 3 here; 3 + len(malformed) refused.
        self.assertEqual((relay["resumed"], relay["resume_refused"]), (5, 3 + len(malformed)), relay)
        self.assertEqual(relay["resume_window"]["oldest_seq"], 0)
        self.assertGreater(relay["resume_window"]["groups"], 1)


class WsResume(Base):
    def test_ws_resume_and_seq_on_every_message(self):
        records = 20000
        feed = self.gen(records, "seed=7,events=60,rate=400")
        with h.Server("--feed", f"replay:{feed},speed=5", "--keys", self.keys, "--progress", "0",
                      "--ws-update", "100") as srv:
            srv.wait_for(r"serving http://")
            self.port = srv.port
            seen = {}  # connection name -> every message it got

            def live_apply(live, m):
                for k, v in m["data"].items():
                    if v is None or not v["live"]:
                        live.pop(k, None)
                    else:
                        live[k] = v

            async def recv(ws, name):
                m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                seen.setdefault(name, []).append(m)
                return m

            async def go():
                # A control stream that stays, subscribes, and makes mistakes;
                # once there is a live event to subscribe to.
                # /v1/status can count a live event before the /ws view (sent
                # every --ws-update) has it, or after it ended: connect again
                # until the snapshot itself names one.
                deadline = time.monotonic() + 60
                while True:
                    self.assertLess(time.monotonic(), deadline, "no live event in a /ws snapshot")
                    if self.rest("/v1/status")["live_events"] == 0:
                        await asyncio.sleep(0.05)
                        continue
                    cws = await websockets.connect(self.url("/ws"), max_size=None, max_queue=None)
                    snap = json.loads(await asyncio.wait_for(cws.recv(), 60))
                    self.assertEqual(snap["type"], "snapshot")
                    if snap["live"]:
                        break
                    await cws.close()
                    await asyncio.sleep(0.05)
                seen["control"] = [snap]
                epoch = snap["epoch"]
                self.assertNotIn("resumed", snap)
                eid = next(iter(snap["live"]))
                await cws.send(json.dumps({"subscribe": {"event_id": eid}}))
                await cws.send("not json")
                async def control():
                    while True:
                        await recv(cws, "control")
                control_task = asyncio.create_task(control())

                # The client: snapshot, a few live_updates, then away.
                live = {}
                async with self.connect("/ws") as ws:
                    m = await recv(ws, "client")
                    live.update(m["live"])
                    last = m["seq"]
                    updates = 0
                    while updates < 3:
                        m = await recv(ws, "client")
                        if m["type"] == "live_update":
                            live_apply(live, m)
                            last, updates = m["seq"], updates + 1
                self.assertLess(last + 300, records, "the feed ran out before the test could")
                await self.wait_seq(last + 300)

                async with self.connect("/ws", f"&resume={epoch}:{last}") as ws:
                    r = await recv(ws, "resumed")
                    self.assertEqual((r["type"], r["resumed"], r["epoch"]), ("resumed", True, epoch))
                    self.assertGreaterEqual(r["seq"], last + 300)
                    self.assertGreater(r["changed"], 0)
                    u = await recv(ws, "resumed")
                    self.assertEqual((u["type"], u["seq"], len(u["data"])), ("live_update", r["seq"], r["changed"]))
                    caught = set(u["data"])
                    live_apply(live, u)
                    resumed_at = r["seq"]
                    # Then ordinary live_updates, until the feed is done.
                    while self.rest("/v1/status")["seq"] < records:
                        try:
                            m = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
                        except asyncio.TimeoutError:
                            continue  # quiet for now: look at the status again
                        seen["resumed"].append(m)
                        if m["type"] == "live_update":
                            live_apply(live, m)
                            last = m["seq"]
                # Back once more after the feed finished: the resume brings the
                # client exactly to the final seq.
                async with self.connect("/ws", f"&resume={epoch}:{last}") as ws:
                    r = await recv(ws, "final")
                    self.assertEqual((r["type"], r["seq"]), ("resumed", records))
                    if r["changed"]:
                        u = await recv(ws, "final")
                        self.assertEqual((u["type"], u["seq"], len(u["data"])), ("live_update", records, r["changed"]))
                        live_apply(live, u)
                async with self.connect("/ws") as ws:
                    fresh = await recv(ws, "fresh")
                control_task.cancel()
                try:
                    await control_task
                except asyncio.CancelledError:
                    pass
                await cws.close()
                return live, fresh, caught, last, resumed_at

            live, fresh, caught, last, resumed_at = h.run_async(go(), 180)
            self.assertEqual((fresh["type"], fresh["seq"]), ("snapshot", records))
            self.assertEqual(live, fresh["live"])
            rest_live = {}
            for evs in self.rest("/v1/live")["data"].values():
                rest_live.update(evs)
            self.assertEqual(live, rest_live)

            # The catch-up named every live event the control stream was told
            # had changed after the client left, up to the resume.
            control = seen["control"]
            away = set()
            for m in control:
                if m.get("type") == "live_update" and m["seq"] > seen["client"][-1]["seq"] and m["seq"] <= resumed_at:
                    away |= set(m["data"])
            self.assertTrue(away)
            self.assertLessEqual(away, caught)

            # Every /ws message carries seq, never going back.
            types = set()
            for name, msgs in seen.items():
                prev = 0
                for m in msgs:
                    self.assertIsInstance(m.get("seq"), int, (name, m))
                    self.assertGreaterEqual(m["seq"], prev, (name, m))
                    prev = m["seq"]
                    types.add(m.get("type", "error" if "error" in m else "?"))
            self.assertEqual(types, {"snapshot", "live_update", "resumed", "subscribed", "market", "error"})
            self.short_catch_up_names_exactly_the_changed(feed, records, fresh["live"], fresh["epoch"])
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)


    def short_catch_up_names_exactly_the_changed(self, feed, records, live, epoch):
        """After the feed, from a group boundary near the end: the /ws
        catch-up names every live event the /pt-ws catch-up over the same
        groups sends odds for, among them one whose last change is in the
        first of those groups, and no event their records did not touch."""
        with open(feed) as f:
            lines = [json.loads(line) for line in f][1:]  # record k is line k after the header

        async def pt_since(since):
            pt = PtClient(self)
            pt.seq = since
            async with self.connect("/pt-ws", f"&protocol=v2&resume={epoch}:{since}") as ws:
                pt.apply(await ws.recv())
                self.assertTrue(pt.ready["resumed"])
                await follow(ws, pt, until_seq=records)
            return pt

        def odds_numbers(frames):
            return {int(x.split(h.SEP, 2)[1].split(":")[2]) for x in frames if x.split(h.SEP, 2)[1].startswith("odds:")}

        # Group boundaries: every INFO's from - 1 after the first.
        near_end = h.run_async(pt_since(records - 1500), 60)
        last = {}
        for k in range(records - 1499, records + 1):
            last[lines[k - 1].get("id")] = k
        target = None
        for f, s, frames, _ in near_end.groups[1:]:
            for eid, k in last.items():
                if f <= k <= s and eid in live and number_of(eid) in odds_numbers(frames):
                    target, since = eid, f - 1
        self.assertIsNotNone(target, "no group near the end holds a live event's last price change")
        touched = {r.get("id") for r in lines[since:]}

        async def ws_since():
            async with self.connect("/ws", f"&resume={epoch}:{since}") as ws:
                r = json.loads(await ws.recv())
                self.assertEqual((r["type"], r["seq"]), ("resumed", records))
                u = json.loads(await ws.recv()) if r["changed"] else {"data": {}}
            return set(u["data"])
        pt, caught = h.run_async(pt_since(since), 60), h.run_async(ws_since(), 60)
        with_odds = odds_numbers([x for g in pt.groups for x in g[2]])
        self.assertIn(number_of(target), with_odds)
        self.assertIn(target, caught)
        self.assertLessEqual(with_odds, {number_of(k) for k in caught})
        self.assertLessEqual(caught, touched)


class TinyWindow(Base):
    def test_too_old_with_a_tiny_window(self):
        with h.Server("--feed", "sim:seed=4,events=80,rate=500", "--keys", self.keys, "--progress", "0",
                      "--resume-window", "64K,1s") as srv:
            srv.wait_for(r"serving http://")
            self.port = srv.port

            async def first():
                async with self.connect("/pt-ws", "&protocol=v2") as ws:
                    t, ch, ready = h.split_frame(await ws.recv())
                    return ready
            ready = h.run_async(first(), 30)
            epoch, seq = ready["epoch"], ready["seq"]
            deadline = time.monotonic() + 60
            while self.rest("/v1/status")["relay"]["resume_window"]["oldest_seq"] <= seq:
                self.assertLess(time.monotonic(), deadline, "the window never moved past the client's seq")
                time.sleep(0.05)
            self.refused_snapshot(f"&protocol=v2&resume={epoch}:{seq}", "too_old")
            self.refused_snapshot(f"&resume={epoch}:{seq}", "too_old", path="/ws")
            relay = self.rest("/v1/status")["relay"]
            self.assertLessEqual(relay["resume_window"]["bytes"], 64 * 1024)
            self.assertEqual((relay["resumed"], relay["resume_refused"]), (0, 2))
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)


if __name__ == "__main__":
    h.main()
