"""/pt-ws and /ws through the real binary, driven by Python's websockets
(Debian python3-websockets, an independent RFC 6455 implementation), Node's
ws (tests/e2e/node) and a raw socket client for misbehaviour: handshake
refusals, the connect sequence, deltas that rebuild the exact REST state,
seq markers without gaps, filters and permissions, the per-key limit,
ping/pong, the /ws heartbeat, live_update pacing, subscriptions, protocol
errors with their close codes, and a client that stops reading."""
import asyncio
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import unittest

import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatusCode

import harness as h
from wsraw import RawWs

FULL = "relay-full-key"
KEYS = {"keys": [
    {"key": FULL, "name": "full", "ws_connections": 50, "permissions": ["live", "prematch", "odds"]},
    {"key": "limit-key", "name": "limit", "permissions": ["live", "odds"]},
    {"key": "live-only", "name": "live-only", "permissions": ["live"]},
    {"key": "odds-only", "name": "odds-only", "permissions": ["odds"]},
    {"key": "scores-only", "name": "scores-only", "permissions": ["scores"]},
    {"key": "off-key", "name": "off", "enabled": False, "permissions": ["live", "odds"]},
]}
SEP = "\x1f"


def split(frame):
    t, ch, body = frame.split(SEP, 2)
    return t, ch, json.loads(body)


# Streams that are left with data in flight use max_queue=None: websockets
# stops reading while its message queue is full, so it would not see the
# server's answer to its close (after the data) until its close timeout.
def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Relay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-relay-")
        cls.keys = os.path.join(cls.dir, "keys.json")
        with open(cls.keys, "w") as f:
            json.dump(KEYS, f)
        cls.srv = h.Server("--feed", "sim:seed=3,events=120,rate=400", "--keys", cls.keys, "--progress", "0",
                           "--ws-update", "300", "--ws-ping", "500")
        cls.srv.wait_for(r"serving http://")
        time.sleep(0.5)

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rc == 0, log

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
        run(refused())

    # -- /pt-ws
    def test_connect_sequence_then_deltas_with_consecutive_seq(self):
        async def go():
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None, max_queue=None) as ws:
                t, ch, ready = split(await ws.recv())
                self.assertEqual((t, ch, ready["ready"], ready["protocol"]), ("INFO", "PUB", True, "v2"))
                self.assertEqual(ready["channels"], ["evt", "odds"])
                snapshot_evt, snapshot_odds = {}, set()
                markers, deltas = [], {"evt": 0, "odds": 0}
                live = set()
                while len(markers) < 40:
                    t, ch, body = split(await ws.recv())
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
        run(go())

    def test_sports_filter_and_permissions(self):
        async def frames(url, n=30):
            seen = []
            async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                t, ch, ready = split(await ws.recv())
                markers = 0
                while markers < n:
                    t, ch, body = split(await ws.recv())
                    markers += t == "INFO"
                    if t == "P":
                        seen.append(ch)
            return ready, seen

        ready, seen = run(frames(self.url("/pt-ws", extra="&protocol=v2&sports=1")))
        self.assertEqual(ready["sports"], [1])
        self.assertTrue(seen)
        self.assertTrue(all(c == "evt:1" or c.startswith("odds:1:") for c in seen), set(seen))
        ready, seen = run(frames(self.url("/pt-ws", key="live-only", extra="&protocol=v2")))
        self.assertEqual(ready["channels"], ["evt"])
        self.assertTrue(seen and all(c.startswith("evt:") for c in seen))
        ready, seen = run(frames(self.url("/pt-ws", key="odds-only", extra="&protocol=v2")))
        self.assertEqual(ready["channels"], ["odds"])
        self.assertTrue(seen and all(c.startswith("odds:") for c in seen))

    def test_ping_pong_and_reconnect_gets_a_fresh_snapshot(self):
        async def go():
            # max_queue=None: websockets stops reading (and so never sees
            # the pong) while its message queue is full.
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None,
                                          max_queue=None) as ws:
                first = split(await ws.recv())[2]
                pong = await ws.ping(b"desk-1")
                await asyncio.wait_for(pong, 5)
            async with websockets.connect(self.url("/pt-ws", extra="&protocol=v2"), max_size=None,
                                          max_queue=None) as ws:
                t, ch, again = split(await ws.recv())
                self.assertTrue(again["ready"])
                self.assertGreaterEqual(again["seq"], first["seq"])
                t, ch, body = split(await ws.recv())
                self.assertTrue(ch.startswith("evt:"))
        run(go())

    def test_sixth_connection_of_a_key_is_refused_and_a_slot_frees_at_once(self):
        async def go():
            url = self.url("/ws", key="limit-key")
            held = [await websockets.connect(url, max_size=None, max_queue=None) for _ in range(5)]
            extra = await websockets.connect(url, max_size=None)
            msg = json.loads(await extra.recv())
            self.assertIsInstance(msg.pop("seq"), int)  # every /ws message carries seq
            self.assertEqual(msg, {"error": "Too many WebSocket connections for this API key"})
            with self.assertRaises(ConnectionClosed) as cm:
                await extra.recv()
            self.assertEqual(cm.exception.code, 1008)
            await held[0].close()
            again = await websockets.connect(url, max_size=None)
            self.assertEqual(json.loads(await again.recv())["type"], "snapshot")
            for ws in held[1:] + [again]:
                await ws.close()
        run(go())

    # -- /ws
    def test_ws_snapshot_live_updates_paced_and_subscriptions(self):
        async def go():
            async with websockets.connect(self.url("/ws"), max_size=None, max_queue=None) as ws:
                snap = json.loads(await ws.recv())
                self.assertEqual(snap["type"], "snapshot")
                self.assertIsInstance(snap["ts"], int)
                self.assertTrue(snap["live"])
                self.assertTrue(all(v["live"] for v in snap["live"].values()))
                self.assertTrue(all(not v["live"] for v in snap["prematch"].values()))
                st, rest_live = self.rest("/v1/live")
                rest_ids = {k for evs in rest_live["data"].values() for k in evs}
                self.assertGreater(len(set(snap["live"]) & rest_ids), len(rest_ids) // 2)
                times = []
                while len(times) < 4:
                    m = json.loads(await ws.recv())
                    if m["type"] == "live_update":
                        times.append(time.monotonic())
                        self.assertTrue(m["data"])
                gaps = [b - a for a, b in zip(times, times[1:])]
                self.assertGreater(min(gaps), 0.2, gaps)  # --ws-update 300

                eid = next(iter(snap["live"]))
                await ws.send(json.dumps({"subscribe": {"event_id": eid, "markets": ["1001"]}}))
                got = []
                deadline = time.monotonic() + 15
                while len(got) < 3 and time.monotonic() < deadline:
                    m = json.loads(await ws.recv())
                    if m["type"] in ("subscribed", "market"):
                        got.append(m)
                self.assertIsInstance(got[0].pop("seq"), int)
                self.assertEqual(got[0], {"type": "subscribed", "event_id": eid, "markets": ["1001"]})
                for m in got[1:]:
                    self.assertEqual((m["type"], m["event_id"], m["market"]), ("market", eid, "1001"))
                    self.assertEqual(set(m["outcomes"]["s"]) - {"s", "ls"}, {"2001", "2002", "2003"})
                for bad, err in (("not json", "Malformed"), ('{"hello":1}', "Unknown message"),
                                 ('{"subscribe":{"event_id":"999999999"}}', "Event not found")):
                    await ws.send(bad)
                    while True:
                        m = json.loads(await ws.recv())
                        if "error" in m:
                            break
                    self.assertIn(err, m["error"])
                await ws.send(json.dumps({"unsubscribe": {"event_id": eid}}))
                await ws.ping()
        run(go())

    def test_ws_heartbeat_terminates_a_client_that_never_pongs(self):
        raw = RawWs(self.srv.port, f"/ws?api_key={FULL}")
        self.assertEqual(raw.status, 101)
        start = time.time()
        code, reason, seen = raw.until_close(timeout=10)
        self.assertEqual(code, 1008)
        self.assertIn("pong", reason)
        self.assertTrue(any(op == 9 for op, _ in seen), "pings came before the close")
        self.assertLess(time.time() - start, 5)  # 2 x 500 ms plus a tick
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
        raws = [RawWs(self.srv.port, f"/pt-ws?api_key={FULL}&protocol=v2", rcvbuf=4096) for _ in range(20)]
        for r in raws:
            r.recv_frame()
            r.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.3)
        for r in raws:
            r.close()
        deadline = time.time() + 10
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
                self.assertTrue(split(await ws.recv())[2]["ready"])
        run(still_serving())

    def test_node_ws_client(self):
        node_dir = os.path.join(os.path.dirname(__file__), "node")
        if not os.path.isdir(os.path.join(node_dir, "node_modules", "ws")):
            self.fail("Node's ws is not installed: run scripts/install-deps.sh (npm ci in tests/e2e/node)")
        p = subprocess.run(["node", os.path.join(node_dir, "ws_client.mjs"), str(self.srv.port), FULL],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("node ws: ok", p.stdout)


if __name__ == "__main__":
    h.main()
