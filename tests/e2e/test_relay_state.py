"""The relay's promises that need their own server: a /pt-ws subscriber
that applies the connect snapshot and every delta ends with exactly the
state REST serves (replayed feed, compared at the same seq); so does one
that lags and is conflated, with no gap in its seq chain; a client that
stops reading is closed with 1008 at its byte bound while another client
keeps every batch; one whose socket fills with small frames waits for it
and loses nothing. The *Uring classes run the same with --relay-io uring."""
import asyncio
import json
import os
import time

import websockets

import harness as h
from scripted_feed import ScriptedFeed, event_rec, key_of, market_rec, market_removed
from wsraw import RawWs

KEY = "state-key"
KEYS = {"keys": [{"key": KEY, "name": "state", "ws_connections": 20, "permissions": ["live", "prematch", "odds"]}]}


def rest(port, path):
    r, body = h.request(port, path, KEY)
    data = json.loads(body)
    assert r.status == 200, data
    return data


class WithKeys(h.WithKeys):
    KEYS, SCRATCH = KEYS, "relay-state"


def apply_frame(events, odds, ch, body, test):
    """Applies one /pt-ws P frame as docs/api.md says a client does."""
    kind, *rest_ch = ch.split(":")
    if kind == "evt":
        for k, v in body.items():
            if v is None:
                events.pop(k, None)
            else:
                test.assertEqual(v["sport"], int(rest_ch[0]))
                events[k] = v
    else:
        test.assertEqual(kind, "odds")
        book = odds.setdefault(int(rest_ch[1]), {})
        for m, lines in body.items():
            if lines is None:
                book.pop(m, None)
            else:
                book[m] = lines


def number_of(key):
    return int(key.rsplit(".", 1)[-1].rsplit("-", 1)[-1])


class StreamState(WithKeys):
    IO = ()  # the relay's write path (--relay-io); the *Uring classes run the same tests through io_uring

    def start(self, srv):
        srv.wait_for(r"serving http://")
        if self.IO:
            how = srv.wait_for(r"relay writes: (\S+)").group(1)
            if how != "io_uring":
                self.skipTest("no io_uring here: " + srv.wait_for(r"relay writes: .*").group(0))
        return srv.port

    def assert_rest_state(self, port, events, odds):
        """The events and live odds a client rebuilt are exactly what REST serves."""
        rest_events = {}
        for path in ("/v1/live", "/v1/prematch"):
            for evs in rest(port, path)["data"].values():
                rest_events.update(evs)
        self.assertEqual(events, rest_events)
        live_keys = [k for k, v in events.items() if v["live"]]
        self.assertTrue(live_keys)
        rest_odds = {}
        for i in range(0, len(live_keys), 100):
            rest_odds.update(rest(port, "/v1/odds?ids=" + ",".join(live_keys[i:i + 100]))["data"])
        for k in live_keys:
            self.assertEqual(odds.get(number_of(k), {}), rest_odds.get(k, {}), k)


class DeltasRebuildRestState(StreamState):
    def test_snapshot_plus_deltas_equals_rest(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        h.gen_feed(feed, 20000, "seed=5,events=60,rate=400")
        # The feed ends with a record of ours whose `at` no other record has:
        # an INFO gives the newest record time of its batches, so the INFO
        # with that `at` closes the last batch there is, whenever the source's
        # end, the log and the stream happen relative to each other.
        with open(feed) as f:
            last_at = max(json.loads(line)["at"] for line in f if line.startswith('{"at"'))
        end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
        with open(feed, "a") as f:
            f.write(json.dumps(end) + "\n")
        with h.Server("--feed", f"replay:{feed},speed=12", "--keys", self.keys, "--progress", "0", *self.IO) as srv:
            port = self.start(srv)

            async def follow():
                events, odds = {}, {}
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    t, ch, ready = h.split_frame(await ws.recv())
                    self.assertTrue(ready["ready"])
                    seq = ready["seq"]
                    while True:
                        t, ch, body = h.split_frame(await asyncio.wait_for(ws.recv(), 60))
                        if t == "INFO":
                            self.assertEqual(body["from"], seq + 1, "a batch is missing")
                            self.assertLessEqual(body["at"], end["at"])
                            seq = body["seq"]
                            if body["at"] == end["at"]:
                                return events, odds, seq
                        else:
                            self.assertEqual(t, "P")
                            apply_frame(events, odds, ch, body, self)

            events, odds, seq = h.run_async(follow(), 180)
            status = h.wait_status(port, KEY, lambda s: s["feed"]["done"], "the end of the replay")
            self.assertEqual(status["seq"], seq, "the state moved after the last record")
            self.assertEqual(status["last_update"], end["at"])
            self.assertEqual(status["feed"]["records_applied"] + status["feed"]["records_skipped"], 20001)
            self.assertIn(end["id"], events)
            self.assert_rest_state(port, events, odds)


class ConflationKeepsTheState(StreamState):
    def test_a_lagging_client_is_conflated_and_still_ends_exact_without_a_seq_gap(self):
        fifo = ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        self.addCleanup(fifo.close)
        with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", self.keys, "--progress", "0",
                      *self.IO) as srv:
            port = self.start(srv)
            fifo.open()
            x = key_of(7001)
            # A connect snapshot twice what the kernel may buffer towards the
            # client (its largest TCP send buffer; the client's receive buffer
            # is 4 KiB) keeps the first write in flight until the client reads.
            with open("/proc/sys/net/ipv4/tcp_wmem") as f:
                wmem = int(f.read().split()[2])
            n = 2 * wmem // 180 + 1000  # an event is ~200 bytes of that snapshot
            last = fifo.write(event_rec(x, True), *(market_rec(x, m) for m in (1001, 1004, 1007)),
                              *(event_rec(key_of(100000 + i, live=False), False) for i in range(n)))
            engine_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == last, "the setup")["seq"]
            deadline = time.monotonic() + 30
            while True:  # until the relay, too, serves the whole setup
                lagging = RawWs(port, f"/pt-ws?api_key={KEY}&protocol=v2", rcvbuf=4096, timeout=60)
                op, p = lagging.recv_frame()
                t, ch, ready = h.split_frame(p.decode())
                if ready["seq"] == engine_seq:
                    break
                lagging.close()
                self.assertLess(time.monotonic(), deadline, "the relay did not catch up with the engine")
                time.sleep(0.05)
            # While the snapshot is in flight: three batches, each changing
            # other markets of x. Their odds frames share x's channel, so each
            # replaces the one queued before it.
            before = rest(port, "/v1/status")["relay"]["conflated"]
            for recs in ([market_rec(x, 1001, 111), market_rec(x, 1004, 150)],
                         [market_rec(x, 1007, 222), market_removed(x, 1004)],
                         [market_rec(x, 1007, 223)]):
                at = fifo.write(*recs)
                final_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == at, "a change")["seq"]
            events, odds, markers, conflated = {}, {}, [], 0
            seq = ready["seq"]
            while seq < final_seq:
                op, p = lagging.recv_frame()
                self.assertEqual(op, 1)
                t, ch, body = h.split_frame(p.decode())
                if t == "INFO":
                    self.assertEqual(body["from"], seq + 1, "a batch is missing")
                    seq = body["seq"]
                    conflated += body.get("conflated", 0)
                    markers.append(body)
                else:
                    apply_frame(events, odds, ch, body, self)
            lagging.close()
            self.assertEqual(seq, final_seq)
            # The path under test was taken: frames of x were replaced.
            self.assertGreater(conflated, 0, markers)
            self.assertGreater(rest(port, "/v1/status")["relay"]["conflated"], before)
            book = odds[number_of(x)]
            self.assertEqual(sorted(book), ["1001", "1007"])
            self.assertEqual(book["1001"]["s"]["2001"][0], 111)
            self.assertEqual(book["1007"]["s2.5"]["2008"][0], 223)
            self.assertEqual(len(events), n + 1)
            self.assert_rest_state(port, events, odds)


class DeltasRebuildRestStateUring(DeltasRebuildRestState):
    """The same, each turn's writes one io_uring submission."""
    IO = ("--relay-io", "uring")


class ConflationKeepsTheStateUring(ConflationKeepsTheState):
    """The same through io_uring: the lagging client's sends are partial or
    refused (EAGAIN) and continue through libuv."""
    IO = ("--relay-io", "uring")


class FullSocket(StreamState):
    """A client that stops reading while small frames keep coming: each
    write is taken whole until the socket's buffers are full, then one
    finds the socket full (EAGAIN) and waits for it through libuv, later
    frames conflated or queued behind it. Once the client reads again it
    gets every batch and ends with REST's state; nothing closes it."""

    def test_a_full_socket_waits_and_loses_nothing(self):
        fifo = ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        self.addCleanup(fifo.close)
        with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", self.keys, "--progress", "0",
                      *self.IO) as srv:
            port = self.start(srv)
            fifo.open()
            keys = [key_of(300000 + i, live=False) for i in range(100)]
            last = fifo.write(*(event_rec(k, False) for k in keys))
            h.wait_status(port, KEY, lambda s: s["last_update"] == last, "the setup")
            reader = RawWs(port, f"/pt-ws?api_key={KEY}&protocol=v2", rcvbuf=4096, timeout=60)
            self.assertEqual(reader.status, 101)
            # Small batches (ten changed events, a few KB), far more bytes
            # than the socket may hold (its send buffer grows to tcp_wmem's
            # largest, 4 MB here).
            with open("/proc/sys/net/ipv4/tcp_wmem") as f:
                wmem = int(f.read().split()[2])
            n = (wmem * 3 // 2) // 3500 * 10
            for i in range(0, n, 10):
                recs = [event_rec(keys[j % len(keys)], False) for j in range(i, i + 10)]
                for j, rec in enumerate(recs):
                    rec["event"]["h"] += f" c{i + j}"
                last = fifo.write(*recs)
                time.sleep(0.001)
            final_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == last, "the changes")["seq"]
            events, seq = {}, None
            while seq is None or seq < final_seq:
                op, p = reader.recv_frame()
                if op == 9:
                    continue
                self.assertEqual(op, 1, "the stream ended early")
                t, ch, body = h.split_frame(p.decode())
                if t == "INFO":
                    if seq is not None:
                        self.assertEqual(body["from"], seq + 1, "a batch is missing")
                    seq = body["seq"]
                else:
                    apply_frame(events, {}, ch, body, self)
            relay = rest(port, "/v1/status")["relay"]
            reader.close()
            self.assertEqual(seq, final_seq)
            for i in range(n - 100, n):
                self.assertEqual(events[keys[i % len(keys)]]["h"].rsplit(" ", 1)[1], f"c{i}")
            self.assertEqual(relay["closed_slow"] + relay["closed_stalled"] + relay["closed_soft_limit"], 0, relay)
            self.assertEqual(relay["pt_ws_connections"], 1, relay)  # still open while it was read


class FullSocketUring(FullSocket):
    """The same through io_uring: the send that finds the socket full is
    answered -EAGAIN and continues through libuv, the connection kept."""
    IO = ("--relay-io", "uring")


class GroupFrames(StreamState):
    """What one group holds, frame by frame, on an idle scripted feed: each
    record written is its own group, so the frames between two INFOs are
    exactly that record's changes."""

    def next_group(self, ws, seq):
        """The P frames up to the next INFO, which must follow `seq` without a gap."""
        frames = []
        while True:
            op, p = ws.recv_frame()
            if op == 9:  # the server's ping
                continue
            self.assertEqual(op, 1)
            t, ch, body = h.split_frame(p.decode())
            if t == "INFO":
                self.assertEqual(body["from"], seq + 1, "a batch is missing")
                return frames, body["seq"]
            self.assertEqual(t, "P")
            frames.append((ch, body))

    def assert_events_before_their_odds(self, frames):
        """docs/api.md: a client learns of an event before its prices. An
        event that an evt: frame of the group names has that frame before
        any odds: frame of it."""
        named = {}  # event number -> index of the first evt: frame naming it
        for i, (ch, body) in enumerate(frames):
            if ch.startswith("evt:"):
                for k in body:
                    named.setdefault(number_of(k), i)
        for i, (ch, body) in enumerate(frames):
            if ch.startswith("odds:"):
                n = int(ch.split(":")[2])
                if n in named:
                    self.assertLess(named[n], i, [c for c, _ in frames])

    def test_kick_off_without_a_price_change_sends_the_event_then_its_whole_odds(self):
        fifo = ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        self.addCleanup(fifo.close)
        with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            fifo.open()
            pre = key_of(7101, live=False)
            n = number_of(pre)
            last = fifo.write(event_rec(pre, False), market_rec(pre, 1001, 210), market_rec(pre, 1007, 190))
            engine_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == last, "the setup")["seq"]
            deadline = time.monotonic() + 30
            while True:  # until the relay, too, serves the whole setup
                ws = RawWs(port, f"/pt-ws?api_key={KEY}&protocol=v2", timeout=60)
                self.addCleanup(ws.close)
                t, ch, ready = h.split_frame(ws.recv_frame()[1].decode())
                if ready["seq"] == engine_seq:
                    break
                ws.close()
                self.assertLess(time.monotonic(), deadline, "the relay did not catch up with the engine")
                time.sleep(0.05)
            # The connect snapshot: one evt: frame (sport 1), no odds: nothing is live.
            self.assertEqual(ready["sports"], [1])
            t, ch, body = h.split_frame(ws.recv_frame()[1].decode())
            self.assertEqual((t, ch, sorted(body)), ("P", "evt:1", [pre]))
            self.assertFalse(body[pre]["live"])
            seq = ready["seq"]

            # Kick-off: the event record alone, no market record. The group
            # is the event's new listing, then its odds: frame with every
            # market it had before kick-off.
            at = fifo.write(event_rec(pre, True))
            want_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == at, "the kick-off")["seq"]
            frames, seq = self.next_group(ws, seq)
            self.assertEqual(seq, want_seq)
            self.assertEqual([ch for ch, _ in frames], ["evt:1", f"odds:1:{n}"])
            self.assertEqual(sorted(frames[0][1]), [pre])
            self.assertTrue(frames[0][1][pre]["live"])
            self.assertEqual(sorted(frames[1][1]), ["1001", "1007"])
            self.assertEqual(frames[1][1]["1001"]["s"]["2001"][0], 210)
            self.assertEqual(frames[1][1], rest(port, f"/v1/odds?ids={pre}")["data"][pre])

            # A new live event and its prices, written together: however the
            # engine batches them, its evt: frame comes before its odds.
            new = key_of(7102)
            at = fifo.write(event_rec(new, True), market_rec(new, 1001, 150), market_rec(new, 1004, 800))
            want_seq = h.wait_status(port, KEY, lambda s: s["last_update"] == at, "the new event")["seq"]
            events, odds = {pre: frames[0][1][pre]}, {n: frames[1][1]}
            kinds = []
            while seq < want_seq:
                group, seq = self.next_group(ws, seq)
                self.assert_events_before_their_odds(group)
                kinds += [ch for ch, _ in group]
                for ch, body in group:
                    apply_frame(events, odds, ch, body, self)
            self.assertEqual(seq, want_seq)
            self.assertEqual(kinds[0], "evt:1")
            self.assertIn(f"odds:1:{number_of(new)}", kinds)
            self.assert_rest_state(port, events, odds)


class SlowClients(StreamState):
    def test_non_reader_closed_at_bound_others_unaffected(self):
        # Rounds of changed pre-match events (evt frames are never conflated,
        # so a queue that is not read only grows), each read whole by the
        # good client before the next: it never lags, the stalled one only
        # does. A round is ~100 KB, well under the bound of 256 KiB.
        fifo = ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        self.addCleanup(fifo.close)
        with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", self.keys, "--progress", "0",
                      "--max-queue-bytes", "262144") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            fifo.open()
            keys = [key_of(200000 + i, live=False) for i in range(500)] + [key_of(7002)]

            def round_of(r):
                recs = [event_rec(k, k == keys[-1]) for k in keys]
                for rec in recs:
                    rec["event"]["h"] += f" r{r}"
                return recs

            last = fifo.write(*round_of(0))
            h.wait_status(port, KEY, lambda s: s["last_update"] == last, "the first round")
            rss_before = h.rss_kib(srv.proc.pid)
            stalled = RawWs(port, f"/pt-ws?api_key={KEY}&protocol=v2", rcvbuf=4096)
            self.assertEqual(stalled.status, 101)

            async def good_client():
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2"
                events, odds = {}, {}
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    t, ch, ready = h.split_frame(await ws.recv())
                    seq = ready["seq"]
                    for r in range(1, 400):
                        # Off the event loop, so the stream is read meanwhile.
                        at = await asyncio.to_thread(fifo.write, *round_of(r))
                        status = await asyncio.to_thread(h.wait_status, port, KEY, lambda s: s["last_update"] == at,
                                                         f"round {r}")
                        while seq < status["seq"]:
                            t, ch, body = h.split_frame(await ws.recv())
                            if t == "INFO":
                                self.assertEqual(body["from"], seq + 1, "a batch is missing")
                                seq = body["seq"]
                            else:
                                apply_frame(events, odds, ch, body, self)
                        relay = rest(port, "/v1/status")["relay"]
                        if relay["closed_slow"]:
                            self.assertEqual(relay["closed_slow"], 1, relay)  # the stalled one only
                            self.assertEqual(relay["pt_ws_connections"], 1, relay)
                            return r, events
                    self.fail("the stalled client was never closed: %s" % rest(port, "/v1/status")["relay"])

            rounds, events = h.run_async(good_client(), 240)
            self.assertGreater(rounds, 1)
            # The good client kept every batch: it holds exactly REST's state.
            self.assertEqual({k: v["h"] for k, v in events.items()}, {k: f"Home {k.rsplit('.', 1)[1]} r{rounds}"
                                                                       for k in keys})
            self.assert_rest_state(port, events, {})
            # The stalled client finds our close frame (1008) once it reads.
            code, reason, _ = stalled.until_close(timeout=60)
            self.assertEqual((code, reason), (1008, "send queue over limit: client too slow"))
            stalled.close()
            # Memory stayed near where it was: the bound holds references, not
            # copies. (Not under a sanitizer: its quarantine holds freed memory.)
            if not h.sanitized():
                self.assertLess(h.rss_kib(srv.proc.pid) - rss_before, 64 * 1024)


if __name__ == "__main__":
    h.main()
