"""/pt-ws and /ws through the real binary, driven by Python's websockets
(Debian python3-websockets, an independent RFC 6455 implementation), Node's
ws (tests/e2e/node) and a raw socket client for misbehaviour: handshake
refusals, the connect sequence, seq markers without gaps, filters and
permissions, the per-key limit shared by both streams, ping/pong, the /ws
heartbeat, live_update pacing, protocol errors with their close codes, and
peers that reset. /ws subscriptions run on a feed the test writes
(scripted_feed.py), so each change and what must (not) follow it is exact;
one test subscribes, unsubscribes and disconnects while a thread keeps
changing the event (CI runs it again under ASan, where a connection left in
the event's subscriber list is a use-after-free)."""
import asyncio
import contextlib
import json
import os
import select
import socket
import struct
import subprocess
import threading
import time
import unittest

import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatusCode

import harness as h
from scripted_feed import ScriptedFeed, event_rec, key_of, market_rec, market_removed, score_rec
from wsraw import RawWs, reset_after_first_frame

FULL = "relay-full-key"
KEYS = {"keys": [
    {"key": FULL, "name": "full", "ws_connections": 50, "permissions": ["live", "prematch", "odds"]},
    {"key": "limit-key", "name": "limit", "permissions": ["live", "odds"]},
    {"key": "live-only", "name": "live-only", "permissions": ["live"]},
    {"key": "odds-only", "name": "odds-only", "permissions": ["odds"]},
    {"key": "scores-only", "name": "scores-only", "permissions": ["scores"]},
    {"key": "off-key", "name": "off", "enabled": False, "permissions": ["live", "odds"]},
]}


def wsmsg(raw):
    """A /ws message without its `seq` (every /ws message carries one: the
    log position of the state it reflects), checked to be a position."""
    m = json.loads(raw)
    seq = m.pop("seq", None)
    assert isinstance(seq, int) and seq >= 0, ("a /ws message without seq", raw)
    return m


# Streams that are left with data in flight use max_queue=None: websockets
# stops reading while its message queue is full, so it would not see the
# server's answer to its close (after the data) until its close timeout.
class Relay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("relay")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "sim:seed=3,events=120,rate=400", "--keys", cls.keys, "--progress", "0",
                           "--ws-update", "300", "--ws-ping", "500")
        cls.srv.wait_for(r"serving http://")
        time.sleep(0.5)

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def url(self, path, key=FULL, extra=""):
        return f"ws://127.0.0.1:{self.srv.port}{path}?api_key={key}{extra}"

    def rest(self, path, key=FULL):
        r, data = h.request(self.srv.port, path, key)
        return r.status, json.loads(data)

    def handshake(self, path, headers):
        r, body = h.request(self.srv.port, path, headers=headers)
        return r.status, json.loads(body) if body else None, r

    # -- handshake
    def test_refused_handshakes_answer_with_http_errors(self):
        up = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
        for key in ("nope", "off-key", ""):
            st, body, _ = self.handshake(f"/pt-ws?api_key={key}&protocol=v2", up)
            self.assertEqual((st, body), (401, {"error": "Invalid or disabled API key"}), key)
        st, body, _ = self.handshake(f"/ws?api_key=odds-only", up)
        self.assertEqual(st, 403)
        self.assertIn("live", body["error"])
        st, body, _ = self.handshake(f"/pt-ws?api_key=scores-only", up)
        self.assertEqual(st, 403)
        st, body, r = self.handshake(f"/pt-ws?api_key={FULL}", {})
        self.assertEqual(st, 426)
        self.assertEqual(r.getheader("Upgrade"), "websocket")
        st, body, r = self.handshake(f"/pt-ws?api_key={FULL}", dict(up, **{"Sec-WebSocket-Version": "8"}))
        self.assertEqual(st, 426)
        self.assertEqual(r.getheader("Sec-WebSocket-Version"), "13")
        st, body, _ = self.handshake(f"/pt-ws?api_key={FULL}", dict(up, **{"Sec-WebSocket-Key": "short"}))
        self.assertEqual(st, 400)
        st, body, _ = self.handshake(f"/pt-ws?api_key={FULL}&protocol=v3", up)
        self.assertEqual((st, body["error"]), (400, "Unsupported protocol parameter: use protocol=v2"))
        st, body, _ = self.handshake(f"/pt-ws?api_key={FULL}&sports=1,x", up)
        self.assertEqual(st, 400)

        async def refused():
            with self.assertRaises(InvalidStatusCode) as cm:
                async with websockets.connect(self.url("/pt-ws", key="nope")):
                    pass
            self.assertEqual(cm.exception.status_code, 401)
        h.run_async(refused())

    # -- /pt-ws
    def test_connect_sequence_then_deltas_with_consecutive_seq(self):
        async def go():
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None, max_queue=None) as ws:
                t, ch, ready = h.split_frame(await ws.recv())
                self.assertEqual((t, ch, ready["ready"], ready["protocol"]), ("INFO", "PUB", True, "v2"))
                self.assertEqual(ready["channels"], ["evt", "odds"])
                snapshot_evt, snapshot_odds = {}, set()
                markers, deltas = [], {"evt": 0, "odds": 0}
                live = set()
                while len(markers) < 40:
                    t, ch, body = h.split_frame(await ws.recv())
                    if t == "INFO":
                        self.assertEqual(ch, "PUB")
                        self.assertNotIn("conflated", body)
                        self.assertLessEqual(body["from"], body["seq"])
                        markers.append((body["from"], body["seq"]))
                        continue
                    self.assertEqual(t, "P")
                    kind = ch.split(":")[0]
                    if not markers:  # the connect snapshot
                        if kind == "evt":
                            self.assertFalse(snapshot_odds, "event lists come before odds")
                            snapshot_evt[int(ch.split(":")[1])] = body
                            live |= {k for k, v in body.items() if v["live"]}
                        else:
                            snapshot_odds.add(int(ch.split(":")[2]))
                    else:
                        deltas[kind] += 1
                self.assertEqual(sorted(snapshot_evt), sorted(ready["sports"]))
                for sport, events in snapshot_evt.items():
                    for e in events.values():
                        self.assertEqual(e["sport"], sport)
                live_numbers = {int(k.rsplit(".", 1)[-1].rsplit("-", 1)[-1]) for k in live}
                self.assertEqual(snapshot_odds, live_numbers)
                # Each INFO closes batches from..seq; together they leave no gap.
                self.assertEqual(markers[0][0], ready["seq"] + 1)
                for (f0, s0), (f1, s1) in zip(markers, markers[1:]):
                    self.assertEqual(f1, s0 + 1)
                self.assertGreater(deltas["odds"], 0)
        h.run_async(go())

    def test_sports_filter_and_permissions(self):
        async def frames(url, n=30):
            seen = []
            async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                t, ch, ready = h.split_frame(await ws.recv())
                markers = 0
                while markers < n:
                    t, ch, body = h.split_frame(await ws.recv())
                    markers += t == "INFO"
                    if t == "P":
                        seen.append(ch)
            return ready, seen

        ready, seen = h.run_async(frames(self.url("/pt-ws", extra="&protocol=v2&sports=1")))
        self.assertEqual(ready["sports"], [1])
        self.assertTrue(seen)
        self.assertTrue(all(c == "evt:1" or c.startswith("odds:1:") for c in seen), set(seen))
        ready, seen = h.run_async(frames(self.url("/pt-ws", key="live-only", extra="&protocol=v2")))
        self.assertEqual(ready["channels"], ["evt"])
        self.assertTrue(seen and all(c.startswith("evt:") for c in seen))
        ready, seen = h.run_async(frames(self.url("/pt-ws", key="odds-only", extra="&protocol=v2")))
        self.assertEqual(ready["channels"], ["odds"])
        self.assertTrue(seen and all(c.startswith("odds:") for c in seen))

    def test_ping_pong_and_reconnect_gets_a_fresh_snapshot(self):
        async def go():
            # max_queue=None: websockets stops reading (and so never sees
            # the pong) while its message queue is full.
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None,
                                          max_queue=None) as ws:
                first = h.split_frame(await ws.recv())[2]
                pong = await ws.ping(b"desk-1")
                await asyncio.wait_for(pong, 30)
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None,
                                          max_queue=None) as ws:
                t, ch, again = h.split_frame(await ws.recv())
                self.assertTrue(again["ready"])
                self.assertGreaterEqual(again["seq"], first["seq"])
                t, ch, body = h.split_frame(await ws.recv())
                self.assertTrue(ch.startswith("evt:"))
        h.run_async(go())

    def test_key_limit_is_shared_by_ws_and_pt_ws_and_a_closed_stream_frees_its_slot(self):
        # limit-key has the default ws_connections: 5, for /ws and /pt-ws together.
        ws_url, pt_url = self.url("/ws", key="limit-key"), self.url("/pt-ws", key="limit-key", extra="&protocol=v2")

        async def accepted(url):
            ws = await websockets.connect(url, max_size=None, max_queue=None)
            first = await ws.recv()
            if url == ws_url:
                self.assertEqual(wsmsg(first)["type"], "snapshot")
            else:
                self.assertTrue(h.split_frame(first)[2]["ready"])
            return ws

        async def refused(url):
            ws = await websockets.connect(url, max_size=None)  # the handshake completes (101)
            msg = await ws.recv()
            if url == ws_url:
                self.assertEqual(wsmsg(msg), {"error": "Too many WebSocket connections for this API key"})
            else:
                self.assertEqual(msg, '{"error":"Too many WebSocket connections for this API key"}')
            with self.assertRaises(ConnectionClosed) as cm:
                await ws.recv()
            self.assertEqual(cm.exception.code, 1008)

        async def go():
            before = self.rest("/v1/status")[1]["relay"]["refused_key_limit"]
            held = [await accepted(u) for u in (ws_url, ws_url, ws_url, pt_url, pt_url)]
            await refused(pt_url)
            await refused(ws_url)
            self.assertEqual(self.rest("/v1/status")[1]["relay"]["refused_key_limit"] - before, 2)
            # Closing a /ws stream frees a slot a /pt-ws stream can take, and
            # the other way round; each time the limit holds again.
            await held.pop(0).close()
            held.append(await accepted(pt_url))
            await refused(ws_url)
            await held.pop(2).close()  # a /pt-ws stream
            held.append(await accepted(ws_url))
            await refused(pt_url)
            self.assertEqual(self.rest("/v1/status")[1]["relay"]["refused_key_limit"] - before, 4)
            for ws in held:
                await ws.close()
        h.run_async(go())

    # -- /ws
    def test_ws_snapshot_then_live_updates_at_most_once_per_interval(self):
        interval = 0.3  # --ws-update 300
        async def go():
            t0 = time.monotonic()
            async with websockets.connect(self.url("/ws"), max_size=None, max_queue=None) as ws:
                snap = json.loads(await ws.recv())  # with its seq
                self.assertEqual(snap["type"], "snapshot")
                self.assertIsInstance(snap["ts"], int)
                self.assertIsInstance(snap["seq"], int)
                self.assertTrue(snap["live"])
                self.assertTrue(all(v["live"] for v in snap["live"].values()))
                self.assertTrue(all(not v["live"] for v in snap["prematch"].values()))
                st, rest_live = self.rest("/v1/live")
                rest_ids = {k for evs in rest_live["data"].values() for k in evs}
                self.assertGreater(len(set(snap["live"]) & rest_ids), len(rest_ids) // 2)
                updates = []
                while len(updates) < 8:
                    m = wsmsg(await ws.recv())
                    # Nothing else comes to a stream without subscriptions.
                    self.assertEqual(m["type"], "live_update", m)
                    updates.append(m)
                t1 = time.monotonic()
            for m in updates:
                self.assertEqual(set(m), {"type", "ts", "data"})
                self.assertTrue(m["data"])
                self.assertTrue(all(v is None or v["sport"] > 0 for v in m["data"].values()))
            self.assertEqual([m["ts"] for m in updates], sorted(m["ts"] for m in updates))
            # Every update was sent after t0 (the connection did not exist
            # before) and received by t1, and the server spaces them at least
            # an interval apart on its monotonic clock: load can only lengthen
            # t1 - t0. Sending one per batch breaks this at once.
            self.assertLessEqual(len(updates), (t1 - t0) / interval + 2, (t1 - t0))
        h.run_async(go())

    def test_ws_heartbeat_terminates_a_client_that_never_pongs(self):
        # --ws-ping 500: a client that sends no pong for two intervals (1 s)
        # is closed; never before, and well within ten times that.
        t0 = time.monotonic()
        raw = RawWs(self.srv.port, f"/ws?api_key={FULL}")
        self.assertEqual(raw.status, 101)
        code, reason, seen = raw.until_close(timeout=10)
        elapsed = time.monotonic() - t0
        self.assertEqual(code, 1008)
        self.assertEqual(reason, "no pong within 1 s")  # two --ws-ping intervals
        self.assertGreaterEqual(elapsed, 0.99)  # the server's clock counts whole ms
        self.assertTrue(seen, "the snapshot came before the close")
        self.assertEqual(wsmsg(seen[0][1])["type"], "snapshot")
        self.assertEqual({op for op, _ in seen} - {1, 9}, set(), "only text messages and pings")
        raw.close()

    def test_ws_heartbeat_keeps_a_client_that_answers_pings(self):
        raw = RawWs(self.srv.port, f"/ws?api_key={FULL}")
        self.assertEqual(raw.status, 101)
        pings = 0
        # Pings are at least 500 ms apart: five span more than the two
        # intervals after which a silent client is closed.
        while pings < 5:
            op, p = raw.recv_frame()
            self.assertNotEqual(op, 8, "closed although it answered every ping: %r" % p)
            if op == 9:
                self.assertEqual(p, b"hb")
                raw.send_frame(10, p)
                pings += 1
        raw.send_frame(9, b"still-here")
        # The server's pings keep coming whether or not it answers ours: a
        # missing pong must end the test, not keep it answering forever.
        deadline = time.monotonic() + 30
        while True:
            self.assertLess(time.monotonic(), deadline, "no pong to our ping within 30 s")
            op, p = raw.recv_frame()
            self.assertNotEqual(op, 8, p)
            if op == 10:
                break
            if op == 9:
                raw.send_frame(10, p)
        self.assertEqual(p, b"still-here")
        raw.send_frame(8, struct.pack("!H", 1000))
        code, _, _ = raw.until_close()
        self.assertEqual(code, 1000)
        raw.close()

    def test_protocol_errors_close_with_their_codes(self):
        cases = [
            (lambda r: r.send_frame(1, b'{"a":1}', mask=False), 1002),
            (lambda r: r.send_frame(1, b"\xff\xfe"), 1007),
            (lambda r: r.send_frame(1, b"x" * 70000), 1009),
            (lambda r: r.send_frame(1, b"x", rsv=0x40), 1002),
            (lambda r: r.send_frame(9, b"p" * 126), 1002),
        ]
        for send, want in cases:
            raw = RawWs(self.srv.port, f"/ws?api_key={FULL}")
            send(raw)
            code, reason, _ = raw.until_close()
            self.assertEqual(code, want, reason)
            raw.close()
        # A client-initiated close is echoed.
        raw = RawWs(self.srv.port, f"/pt-ws?api_key={FULL}&protocol=v2")
        raw.send_frame(8, struct.pack("!H", 1000) + b"bye")
        code, _, _ = raw.until_close()
        self.assertEqual(code, 1000)
        raw.close()

    def test_abrupt_disconnects_leave_the_server_serving(self):
        # Peers that reset mid-stream (unread data pending) cost an EPIPE or
        # ECONNRESET on their socket, never the process, and free their slots.
        reset_after_first_frame([RawWs(self.srv.port, f"/pt-ws?api_key={FULL}&protocol=v2", rcvbuf=4096)
                                 for _ in range(20)])
        deadline = time.time() + 30
        while time.time() < deadline:
            st, status = self.rest("/v1/status")
            if status["relay"]["pt_ws_connections"] == 0:
                break
            time.sleep(0.1)
        self.assertEqual(status["relay"]["pt_ws_connections"], 0, status["relay"])
        self.assertIsNone(self.srv.proc.poll())

        async def still_serving():
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None,
                                          max_queue=None) as ws:
                self.assertTrue(h.split_frame(await ws.recv())[2]["ready"])
        h.run_async(still_serving())

    def test_node_ws_client_pt_ws(self):
        p = subprocess.run(node_client("pt", self.srv.port, FULL), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "node ws: ok\n")


def node_client(mode, port, key, *rest):
    node_dir = os.path.join(os.path.dirname(__file__), "node")
    if not os.path.isdir(os.path.join(node_dir, "node_modules", "ws")):
        raise AssertionError("Node's ws is not installed: run scripts/install-deps.sh (npm ci in tests/e2e/node)")
    return ["node", os.path.join(node_dir, "ws_client.mjs"), mode, str(port), key, *rest]


# -- /ws subscriptions on a feed the test writes (scripted_feed.py)
FENCE = "fence"  # not JSON: answered with FENCE_REPLY after everything queued before it
FENCE_REPLY = {"error": "Malformed message: expected a JSON object"}


# Each test has its own events, so the order the tests run in does not matter.
E_ALL, E_RESUB, E_UNSUB, E_WITNESS, E_MKT_GONE = (key_of(n) for n in (9001, 9002, 9003, 9004, 9005))
E_GONE_SCORED, E_GONE_BARE, NODE_A, NODE_B = (key_of(n) for n in (9006, 9007, 9008, 9009))
E_HOT, E_HOT_WITNESS = key_of(9010), key_of(9011)
PREMATCH = [key_of(9100 + i, live=False) for i in range(100)]
SCORED = {E_ALL, E_GONE_SCORED}
MARKETS = {E_ALL: (1001, 1004, 1007), E_RESUB: (1001, 1007), E_UNSUB: (1001,), E_WITNESS: (1001,),
           E_MKT_GONE: (1001, 1007), E_GONE_SCORED: (1001, 1007), E_GONE_BARE: (1001, 1007),
           NODE_A: (1001,), NODE_B: (1001,), E_HOT: (1001,), E_HOT_WITNESS: (1001,)}


class Changer(threading.Thread):
    """Changes E_HOT, then E_HOT_WITNESS, in one write every 100 ms, each
    time to a new price: a witness message shows the relay has handled the
    E_HOT change before it, and a price seen twice is a change sent twice."""

    def __init__(self, feed):
        super().__init__(daemon=True)
        self.feed, self.stop, self.error = feed, threading.Event(), None

    def run(self):
        price = 200
        try:
            while not self.stop.wait(0.1):
                price += 1
                self.feed.write(market_rec(E_HOT, 1001, price=price), market_rec(E_HOT_WITNESS, 1001, price=price))
        except BaseException as e:  # reported by the test
            self.error = e


def is_market(m, key):
    return m.get("type") == "market" and m.get("event_id") == key


class WsSubscriptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("ws-subs")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.feed = ScriptedFeed(os.path.join(cls.dir, "feed.fifo"))
        cls.srv = h.Server("--feed", f"replay:{cls.feed.path},speed=max", "--keys", cls.keys, "--progress", "0",
                           "--ws-update", "200")
        try:
            cls.srv.wait_for(r"serving http://")
            cls.feed.open()
            records = []
            for key, markets in MARKETS.items():
                records.append(event_rec(key, True))
                records += [market_rec(key, m) for m in markets]
                if key in SCORED:
                    records.append(score_rec(key))
            records += [event_rec(k, False) for k in PREMATCH]
            last = cls.feed.write(*records)
            cls.wait_applied(last)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.feed.close()
        h.shut_down(cls.srv, cls.dir)

    @classmethod
    def wait_applied(cls, last_at, timeout=30):
        """Until REST and the relay both serve the state up to the record at `last_at`."""
        deadline = time.monotonic() + timeout
        while True:
            r, body = h.request(cls.srv.port, "/v1/status", FULL)
            status = json.loads(body)
            if status["last_update"] == last_at:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"record at {last_at} not applied within {timeout}s: {status}")
            time.sleep(0.05)

        async def relay_seq():
            async with websockets.connect(f"ws://127.0.0.1:{cls.srv.port}/ws?api_key={FULL}", max_size=None) as ws:
                return json.loads(await ws.recv())["seq"]  # keeps seq: it is the point
        # A new stream's snapshot is the relay's state: it has caught up when
        # that is the engine's (the feed is idle, so the seq stays put).
        while h.run_async(relay_seq()) != status["seq"]:
            if time.monotonic() > deadline:
                raise AssertionError(f"the relay did not reach seq {status['seq']} within {timeout}s")
            time.sleep(0.05)

    def odds(self, key, market):
        r, body = h.request(self.srv.port, f"/v1/odds?ids={key}", FULL)
        self.assertEqual(r.status, 200)
        return json.loads(body)["data"].get(key, {}).get(market)

    @contextlib.asynccontextmanager
    async def open(self, key=FULL):
        """A /ws stream past its snapshot."""
        async with websockets.connect(f"ws://127.0.0.1:{self.srv.port}/ws?api_key={key}", max_size=None,
                                      max_queue=None) as ws:
            self.assertEqual(wsmsg(await ws.recv())["type"], "snapshot")
            yield ws

    async def exchange(self, ws, *msgs):
        """Sends msgs, then the fence; returns every message before the
        fence's answer except live_updates (paced, so they may fall anywhere)."""
        for m in msgs:
            await ws.send(m if isinstance(m, str) else json.dumps(m))
        await ws.send(FENCE)
        got = []
        while True:
            m = wsmsg(await ws.recv())
            if m == FENCE_REPLY:
                return got
            if m.get("type") != "live_update":
                got.append(m)

    async def until(self, ws, pred):
        """Messages up to and including the first one pred accepts, live_updates left out."""
        got = []
        while True:
            m = wsmsg(await ws.recv())
            if m.get("type") != "live_update":
                got.append(m)
            if pred(m):
                return got

    def subscribed(self, key, markets):
        return {"type": "subscribed", "event_id": key, "markets": [str(m) for m in markets]}

    def market(self, key, market, outcomes):
        return {"type": "market", "event_id": key, "market": str(market), "outcomes": outcomes}

    def current(self, key, *markets):
        """The market messages a subscription must start with: the state REST serves."""
        return [self.market(key, m, self.odds(key, str(m))) for m in markets]

    def without_ts(self, msgs):
        for m in msgs:
            if m.get("type") == "market":
                self.assertIsInstance(m.pop("ts"), int)
        return msgs

    def test_subscribe_without_markets_sends_every_market_now_and_matches_rest(self):
        async def go():
            async with self.open() as ws:
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_ALL}}))
                self.assertEqual(got, [self.subscribed(E_ALL, [])] + self.current(E_ALL, 1001, 1004, 1007))
                self.assertEqual(got[1]["outcomes"]["s"]["2001"][0], 185)
                # "markets": [] is the same as no list; any id form names the event.
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": "9001", "markets": []}}))
                self.assertEqual(got, [self.subscribed(E_ALL, [])] + self.current(E_ALL, 1001, 1004, 1007))
        h.run_async(go())

    def test_resubscribing_replaces_the_market_list(self):
        async def go():
            async with self.open() as ws:
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_RESUB,
                                                                             "markets": ["1001"]}}))
                self.assertEqual(got, [self.subscribed(E_RESUB, [1001])] + self.current(E_RESUB, 1001))
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_RESUB, "markets": [1007]}}))
                self.assertEqual(got, [self.subscribed(E_RESUB, [1007])] + self.current(E_RESUB, 1007))
                self.feed.write(market_rec(E_RESUB, 1001, price=111), market_rec(E_RESUB, 1007, price=222))
                got = await self.until(ws, lambda m: m.get("market") == "1007")
                got += await self.exchange(ws)  # whatever that batch sent is before the fence
                self.assertEqual(self.without_ts(got), self.current(E_RESUB, 1007))
                self.assertEqual(got[0]["outcomes"]["s2.5"]["2008"][0], 222)
        h.run_async(go())

    def test_unsubscribe_stops_the_messages_of_that_event_only(self):
        async def go():
            async with self.open() as ws:
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_UNSUB}},
                                                          {"subscribe": {"event_id": E_WITNESS, "markets": ["1001"]}}))
                self.assertEqual(got, [self.subscribed(E_UNSUB, [])] + self.current(E_UNSUB, 1001) +
                                 [self.subscribed(E_WITNESS, [1001])] + self.current(E_WITNESS, 1001))
                self.assertEqual(await self.exchange(ws, {"unsubscribe": {"event_id": E_UNSUB}}), [])  # no answer
                # E_UNSUB changes first; the witness's message shows the relay
                # has handled both records, so an E_UNSUB message would be here.
                self.feed.write(market_rec(E_UNSUB, 1001, price=150), market_rec(E_WITNESS, 1001, price=160))
                got = await self.until(ws, lambda m: m.get("event_id") == E_WITNESS)
                got += await self.exchange(ws)
                self.assertEqual(self.without_ts(got), self.current(E_WITNESS, 1001))
                self.assertEqual(got[0]["outcomes"]["s"]["2001"][0], 160)
                self.assertEqual(await self.exchange(ws, {"unsubscribe": {"event_id": E_UNSUB}}),
                                 [{"error": "Not subscribed to that event"}])
        h.run_async(go())

    def assert_once_each(self, msgs, who):
        """Each change reaches a subscriber once: a connection listed twice
        for the event would get it twice."""
        seen = [(m["event_id"], m["outcomes"]["s"]["2001"][0]) for m in msgs if m.get("type") == "market"]
        self.assertEqual(len(seen), len(set(seen)), f"{who} got a change twice: {seen}")

    async def subscribe_unsubscribe_disconnect(self, n):
        """One client's round, E_HOT changing all along."""
        ws = await websockets.connect(f"ws://127.0.0.1:{self.srv.port}/ws?api_key={FULL}", max_size=None,
                                      max_queue=None)
        self.assertEqual(wsmsg(await ws.recv())["type"], "snapshot")
        # E_HOT's current state comes before the second "subscribed": the
        # next E_HOT message is a change.
        await ws.send(json.dumps({"subscribe": {"event_id": E_HOT}}))
        await ws.send(json.dumps({"subscribe": {"event_id": E_HOT_WITNESS}}))
        msgs = await self.until(ws, lambda m: m.get("type") == "subscribed" and m["event_id"] == E_HOT_WITNESS)
        msgs += await self.until(ws, lambda m: is_market(m, E_HOT))
        msgs += await self.exchange(ws, {"unsubscribe": {"event_id": E_HOT}})  # handled: no E_HOT from here on
        after = []
        for _ in range(3):  # three changes of both events later
            after += await self.until(ws, lambda m: is_market(m, E_HOT_WITNESS))
        after += await self.exchange(ws)
        self.assertEqual([m for m in after if is_market(m, E_HOT)], [], f"round {n}: E_HOT after its unsubscribe")
        self.assert_once_each(msgs + after, f"round {n}")
        if n % 2:
            ws.transport.abort()  # gone without a close: the server finds out on its read
        else:
            await ws.close()

    def test_unsubscribe_then_disconnect_while_the_event_keeps_changing(self):
        # A watcher stays subscribed throughout; each round's client
        # subscribes, unsubscribes and goes. Were the unsubscribed client
        # left in E_HOT's list, the next change would reach it (freed: ASan
        # stops the server) or a later client the allocator put at its
        # address would get each change twice.
        changer = Changer(self.feed)

        async def go():
            async with self.open() as watcher:
                seen = await self.exchange(watcher, {"subscribe": {"event_id": E_HOT}})
                changer.start()
                for n in range(8):
                    await self.subscribe_unsubscribe_disconnect(n)
                    # E_HOT changes after the client is gone: the relay walks its subscribers.
                    seen += await self.until(watcher, lambda m: is_market(m, E_HOT))
                    seen += await self.until(watcher, lambda m: is_market(m, E_HOT))
                seen += await self.exchange(watcher)
                self.assert_once_each(seen, "the watcher")
                self.assertGreaterEqual(len([m for m in seen if is_market(m, E_HOT)]), 17)

        try:
            h.run_async(go(), 120)
        finally:
            changer.stop.set()
            changer.join(30)
        self.assertIsNone(changer.error)
        h.wait_until(lambda: h.status(self.srv.port, FULL)["relay"]["ws_connections"] == 0,
                     what="every /ws stream counted gone")

    def test_a_removed_market_is_sent_as_null_outcomes(self):
        async def go():
            async with self.open() as ws:
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_MKT_GONE}}))
                self.assertEqual(got, [self.subscribed(E_MKT_GONE, [])] + self.current(E_MKT_GONE, 1001, 1007))
                self.feed.write(market_removed(E_MKT_GONE, 1007))
                got = await self.until(ws, lambda m: m.get("type") == "market")
                got += await self.exchange(ws)
                self.assertEqual(self.without_ts(got), [self.market(E_MKT_GONE, 1007, None)])
                self.assertIsNone(self.odds(E_MKT_GONE, "1007"))
                self.assertIsNotNone(self.odds(E_MKT_GONE, "1001"))
        h.run_async(go())

    def test_a_removed_event_nulls_its_markets_and_is_null_in_live_update(self):
        # One event keeps a scoreboard after removal (its entry stays), one has none.
        async def go():
            async with self.open() as ws:
                for key in (E_GONE_SCORED, E_GONE_BARE):
                    got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": key}}))
                    self.assertEqual(got, [self.subscribed(key, [])] + self.current(key, 1001, 1007))
                gone = {E_GONE_SCORED, E_GONE_BARE}
                self.feed.write({"op": "remove", "id": E_GONE_SCORED}, {"op": "remove", "id": E_GONE_BARE})
                # A live_update paced out before the removal may still carry
                # the events' objects: wait until each one's latest value is
                # the null of its removal (a deadline only for one that never
                # comes).
                markets, nulled = [], {}
                while any(nulled.get(k, "absent") is not None for k in gone):
                    m = wsmsg(await asyncio.wait_for(ws.recv(), 60))
                    if m["type"] == "live_update":
                        nulled.update({k: v for k, v in m["data"].items() if k in gone})
                    else:
                        markets.append(m)
                markets += await self.exchange(ws)
                self.assertEqual(nulled, {E_GONE_SCORED: None, E_GONE_BARE: None})
                self.assertEqual(sorted((m["event_id"], m["market"]) for m in self.without_ts(markets)),
                                 [(k, m) for k in sorted(gone) for m in ("1001", "1007")])
                self.assertEqual([m["outcomes"] for m in markets], [None] * 4)
                for key in gone:
                    r, body = h.request(self.srv.port, f"/v1/event?id={key}", FULL)
                    self.assertEqual(r.status, 404)
        h.run_async(go())

    def test_at_most_100_events_and_200_markets_per_stream(self):
        async def go():
            async with self.open() as ws:
                got = await self.exchange(ws, *({"subscribe": {"event_id": k}} for k in PREMATCH))
                self.assertEqual(got, [self.subscribed(k, []) for k in PREMATCH])  # no markets to send
                too_many = [{"error": "Too many subscriptions: at most 100 events"}]
                self.assertEqual(await self.exchange(ws, {"subscribe": {"event_id": E_ALL}}), too_many)
                # Subscribing again to a subscribed event replaces, so it fits.
                got = await self.exchange(ws, {"subscribe": {"event_id": PREMATCH[0], "markets": ["1001"]}})
                self.assertEqual(got, [self.subscribed(PREMATCH[0], [1001])])
                self.assertEqual(await self.exchange(ws, {"unsubscribe": {"event_id": PREMATCH[1]}}), [])
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_ALL, "markets": ["1004"]}}))
                self.assertEqual(got, [self.subscribed(E_ALL, [1004])] + self.current(E_ALL, 1004))
                self.assertEqual(await self.exchange(ws, {"subscribe": {"event_id": PREMATCH[1]}}), too_many)

            async with self.open() as ws:
                ids = [str(1001 + i) for i in range(201)]
                got = await self.exchange(ws, {"subscribe": {"event_id": E_ALL, "markets": ids}})
                self.assertEqual(got, [{"error": "Invalid markets: expected at most 200 market ids"}])
                got = self.without_ts(await self.exchange(ws, {"subscribe": {"event_id": E_ALL, "markets": ids[:200]}}))
                self.assertEqual(got, [self.subscribed(E_ALL, ids[:200])] + self.current(E_ALL, 1001, 1004, 1007))
        h.run_async(go())

    def test_mistakes_are_answered_and_the_stream_stays_open(self):
        async def go():
            async with self.open() as ws:
                for msg, err in (
                        ('{"hello":1}', 'Unknown message: expected {"subscribe":{"event_id":...,"markets":[...]}}'),
                        ({"subscribe": {"markets": ["1001"]}},
                         'Unknown message: expected {"subscribe":{"event_id":...,"markets":[...]}}'),
                        ({"subscribe": {"event_id": "999999999"}}, "Event not found"),
                        ({"subscribe": {"event_id": "not an id"}}, "Event not found"),
                        ({"subscribe": {"event_id": E_ALL, "markets": ["x"]}},
                         'Invalid markets: expected market ids such as "1001"'),
                        ({"subscribe": {"event_id": E_ALL, "markets": "1001"}},
                         "Invalid markets: expected at most 200 market ids"),
                        ({"unsubscribe": {"event_id": E_ALL}}, "Not subscribed to that event")):
                    self.assertEqual(await self.exchange(ws, msg), [{"error": err}], msg)
            # A key without 'odds' may watch /ws but not subscribe to markets.
            async with self.open(key="live-only") as ws:
                self.assertEqual(await self.exchange(ws, {"subscribe": {"event_id": E_ALL}}),
                                 [{"error": "API key lacks the 'odds' permission"}])
        h.run_async(go())

    def test_node_ws_client_ws(self):
        # Node drives the stream and says when to change the feed.
        spec = {"a": NODE_A, "b": NODE_B, "a1001": self.odds(NODE_A, "1001"), "b1001": self.odds(NODE_B, "1001"),
                "b_price": 175}
        p = subprocess.Popen(node_client("ws", self.srv.port, FULL, json.dumps(spec)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        step = ""
        try:
            if select.select([p.stdout], [], [], 60)[0]:
                step = p.stdout.readline()
                if step == "unsubscribed\n":
                    self.feed.write(market_rec(NODE_A, 1001, price=170), market_rec(NODE_B, 1001, price=175))
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 0, f"stdout: {step}{out}\nstderr: {err}")
        self.assertEqual((step, out), ("unsubscribed\n", "node ws: ok\n"))


if __name__ == "__main__":
    h.main()
