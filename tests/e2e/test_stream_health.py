"""Streams stay honest about who is connected (docs/api.md "Streams"),
through the real binary: /pt-ws has the /ws heartbeat (a client that never
answers a ping is closed 1008 after two intervals and its key's slot is
free again, while a client that answers stays); stream handshakes do not
count against the REST rate limit (a key at its REST limit still opens
streams) and have their own per-key rate; slow consumers, a client whose
writes stalled or that holds more than the soft bound for --slow-timeout,
are closed and counted by reason, healthy streams see no gap, and the
server's memory goes back to where it was once they are gone."""
import asyncio
import json
import os
import socket
import struct
import threading
import time

import websockets

import harness as h
from wsraw import RawWs


KEYS = {"keys": [
    {"key": "one-slot", "ws_connections": 1, "permissions": ["live", "prematch", "odds"]},
    {"key": "rest-limited", "rate_limit": 2, "ws_connections": 2, "permissions": ["live", "prematch", "odds"]},
    {"key": "storm", "ws_connections": 1, "permissions": ["live", "odds"]},
    {"key": "sandbox", "sandbox": True, "ws_connections": 50, "permissions": ["live", "prematch", "odds"]},
    {"key": "watcher", "sandbox": True, "permissions": ["live"]},
]}
TOO_MANY = {"error": "Too many WebSocket connections for this API key"}


class WithKeys(h.WithKeys):
    KEYS, SCRATCH = KEYS, "stream-health"


class Heartbeat(WithKeys):
    def test_pt_ws_client_that_never_pongs_is_closed_and_its_slot_reused(self):
        with h.clean_server(self, "--feed", "sim:seed=8,events=60,rate=100", "--keys", self.keys, "--progress", "0",
                      "--ws-ping", "500") as srv:
            srv.wait_for(r"serving http://")
            start = time.monotonic()
            silent = RawWs(srv.port, "/pt-ws?api_key=one-slot&protocol=v2")
            self.assertEqual(silent.status, 101)
            # It holds the key's only slot: another stream is refused.
            extra = RawWs(srv.port, "/pt-ws?api_key=one-slot&protocol=v2")
            self.assertEqual(extra.status, 101)
            code, reason, seen = extra.until_close()
            self.assertEqual(code, 1008)
            self.assertEqual([json.loads(p) for op, p in seen if op == 1], [TOO_MANY])
            extra.close()
            # Pings come, no pong goes back: closed after two intervals.
            code, reason, seen = silent.until_close(timeout=30)
            elapsed = time.monotonic() - start
            self.assertEqual(code, 1008)
            self.assertEqual(reason, "no pong within 1 s")
            self.assertTrue(any(op == 9 for op, _ in seen), "pings came before the close")
            self.assertGreaterEqual(elapsed, 1.0)  # two 500 ms intervals at least
            silent.close()
            self.assertEqual(h.status(srv.port, "watcher")["relay"]["closed_heartbeat"], 1)

            async def answering_client():
                # The slot is free again; a client that answers pings (websockets
                # does) stays through many intervals.
                url = f"ws://127.0.0.1:{srv.port}/pt-ws?api_key=one-slot&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    t, ch, ready = h.split_frame(await ws.recv())
                    self.assertTrue(ready["ready"])
                    until = time.monotonic() + 3  # six intervals
                    markers = 0
                    while time.monotonic() < until:
                        t, ch, body = h.split_frame(await ws.recv())
                        markers += t == "INFO"
                    st = h.status(srv.port, "watcher")
                    self.assertEqual((st["relay"]["closed_heartbeat"], st["relay"]["pt_ws_connections"]), (1, 1))
                    self.assertEqual(st["downstream_clients"], 1)
                    return markers
            self.assertGreater(h.run_async(answering_client(), 60), 0)


def tcp_timer(local_port, remote_port):
    """The kernel's timer on the server side of a loopback connection
    (/proc/net/tcp `tr`: 0 none, 1 retransmit, 2 keepalive, ...), or None."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                local, remote = cols[1], cols[2]
                if int(local.split(":")[1], 16) == local_port and int(remote.split(":")[1], 16) == remote_port:
                    return int(cols[5].split(":")[0])
    return None


class Keepalive(WithKeys):
    def test_stream_sockets_have_tcp_keepalive(self):
        # A quiet server (a finished replay, pings far apart): an idle socket
        # shows the keepalive timer only if keepalive is on.
        empty = os.path.join(self.dir, "empty.jsonl")
        with open(empty, "w") as f:
            f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')
        with h.clean_server(self, "--feed", f"replay:{empty}", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            stream = RawWs(srv.port, "/pt-ws?api_key=sandbox&protocol=v2")
            self.assertEqual(stream.status, 101)
            stream.recv_frame()  # the ready INFO
            rest = socket.create_connection(("127.0.0.1", srv.port))
            rest.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            self.assertIn(b" 200 ", rest.recv(4096))
            timers, deadline = (None, None), time.time() + 30
            while time.time() < deadline:
                timers = (tcp_timer(srv.port, stream.s.getsockname()[1]), tcp_timer(srv.port, rest.getsockname()[1]))
                if timers == (2, 0):
                    break
                time.sleep(0.1)
            self.assertEqual(timers, (2, 0))  # the stream has keepalive, a REST connection does not
            rest.close()
            stream.close()


class HandshakesAndRestLimit(WithKeys):
    def test_a_key_at_its_rest_limit_still_opens_streams(self):
        with h.clean_server(self, "--feed", "sim:seed=8,events=60,rate=100", "--keys", self.keys, "--progress", "0",
                      "--rate-window", "3600") as srv:
            srv.wait_for(r"serving http://")
            codes = [h.request(srv.port, "/v1/sports", "rest-limited")[0].status for _ in range(3)]
            self.assertEqual(codes, [200, 200, 429])

            async def streams():
                base = f"ws://127.0.0.1:{srv.port}"
                async with websockets.connect(f"{base}/pt-ws?api_key=rest-limited&protocol=v2", max_size=None,
                                              max_queue=None) as pt:
                    self.assertTrue(h.split_frame(await pt.recv())[2]["ready"])
                    async with websockets.connect(f"{base}/ws?api_key=rest-limited", max_size=None,
                                                  max_queue=None) as ws:
                        self.assertEqual(json.loads(await ws.recv())["type"], "snapshot")
            h.run_async(streams(), 60)
            # The handshakes neither counted nor reset the REST window.
            r, body = h.request(srv.port, "/v1/sports", "rest-limited")
            self.assertEqual((r.status, json.loads(body)["error"]), (429, "Rate limit exceeded"))

    def test_handshakes_have_their_own_per_key_rate(self):
        with h.clean_server(self, "--feed", "sim:seed=8,events=60,rate=100", "--keys", self.keys, "--progress", "0",
                      "--handshake-rate", "2") as srv:
            srv.wait_for(r"serving http://")
            # storm: 1 slot x 2 a minute = a burst of 2.
            for i in range(2):
                raw = RawWs(srv.port, "/pt-ws?api_key=storm&protocol=v2")
                self.assertEqual(raw.status, 101, i)
                raw.send_frame(8, struct.pack("!H", 1000))
                self.assertEqual(raw.until_close()[0], 1000)
                raw.close()
            r, body = h.request(srv.port, "/pt-ws?api_key=storm&protocol=v2", headers={
                "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
            body = json.loads(body)
            self.assertEqual(r.status, 429)
            self.assertEqual((body["error"], body["limit"], body["window"]),
                             ("Too many stream handshakes for this API key", 2, "60s"))
            self.assertTrue(1 <= body["retry_after"] <= 30, body)  # one handshake back every 30 s
            self.assertEqual(r.getheader("Retry-After"), str(body["retry_after"]))
            # REST is not touched by it; sandbox keys are never bounded.
            self.assertEqual(h.request(srv.port, "/v1/live", "storm")[0].status, 200)
            for i in range(5):
                raw = RawWs(srv.port, "/ws?api_key=sandbox")
                self.assertEqual(raw.status, 101, i)
                raw.close()


class SlowConsumers(WithKeys):
    def test_stalled_readers_are_closed_by_reason_and_memory_comes_back(self):
        n = 12
        # A tiny resume window: the default one (60 s of frames) would hold
        # memory of its own and hide whether the stalled streams' went back.
        with h.clean_server(self, "--feed", "sim:seed=4,events=300,rate=3000", "--keys", self.keys, "--progress", "0",
                      "--slow-timeout", "2", "--resume-window", "64K,1s") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            stop = threading.Event()
            healthy = {"markers": 0, "gaps": 0, "closed": None}

            async def healthy_client():
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key=sandbox&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    seq = h.split_frame(await ws.recv())[2]["seq"]
                    while not stop.is_set():
                        try:
                            t, ch, body = h.split_frame(await asyncio.wait_for(ws.recv(), 1))
                        except asyncio.TimeoutError:
                            continue
                        if t == "INFO":
                            healthy["gaps"] += body["from"] != seq + 1
                            seq, healthy["markers"] = body["seq"], healthy["markers"] + 1

            def run_healthy():
                try:
                    asyncio.run(healthy_client())
                except Exception as e:  # reported below
                    healthy["closed"] = repr(e)
            reader = threading.Thread(target=run_healthy, daemon=True)
            reader.start()
            time.sleep(2)  # warm-up: the state and the healthy stream settle
            rss_before = h.rss_kib(srv.proc.pid)

            # Never-reading clients, each with a tiny receive buffer.
            opened = time.monotonic()
            slow = [RawWs(port, "/pt-ws?api_key=sandbox&protocol=v2", rcvbuf=4096) for _ in range(n)]
            self.assertTrue(all(s.status == 101 for s in slow))
            rss_during, relay, deadline = rss_before, None, time.time() + 90
            while time.time() < deadline:
                rss_during = max(rss_during, h.rss_kib(srv.proc.pid))
                relay = h.status(port, "watcher")["relay"]
                if relay["closed_stalled"] + relay["closed_soft_limit"] >= n and relay["pt_ws_connections"] == 1:
                    break
                time.sleep(0.1)
            elapsed = time.monotonic() - opened
            self.assertEqual(relay["closed_stalled"] + relay["closed_soft_limit"], n, relay)
            self.assertEqual(relay["pt_ws_connections"], 1, relay)  # the healthy one
            self.assertEqual(relay["closed_slow"], 0, relay)         # none reached the hard bound
            self.assertGreaterEqual(elapsed, 2.0)                    # --slow-timeout is the lower bound
            self.assertEqual(h.status(port, "watcher")["downstream_clients"], 1)
            # The server dropped them: each socket ends (close frame or EOF).
            for s in slow:
                s.s.settimeout(30)
                ended = False
                try:
                    while True:
                        op, p = s.recv_frame()
                        if op == 8:
                            self.assertEqual(struct.unpack("!H", p[:2])[0], 1008)
                            self.assertIn("client too slow", p[2:].decode())
                            ended = True
                            break
                except (ConnectionError, OSError):
                    ended = True
                self.assertTrue(ended)
                s.close()
            # Memory goes back to where it was (not under a sanitizer: its
            # quarantine holds freed memory). jemalloc returns freed pages
            # over seconds: wait for it with a deadline that only fails if
            # it never happens.
            rss_after = h.rss_kib(srv.proc.pid)
            if not h.sanitized():
                deadline = time.time() + 90
                while time.time() < deadline and rss_after > rss_before + 16 * 1024:
                    time.sleep(0.5)
                    rss_after = h.rss_kib(srv.proc.pid)
                self.assertLessEqual(rss_after, rss_before + 16 * 1024, (rss_before, rss_during, rss_after))
            print(f"\nslow consumers: {n} closed in {elapsed:.1f} s ({relay['closed_stalled']} stalled, "
                  f"{relay['closed_soft_limit']} over the soft bound); RSS before {rss_before // 1024} MiB, "
                  f"during {rss_during // 1024} MiB, after {rss_after // 1024} MiB")
            stop.set()
            reader.join(30)
            self.assertIsNone(healthy["closed"])
            self.assertGreater(healthy["markers"], 0)
            self.assertEqual(healthy["gaps"], 0)

    def test_steady_but_slow_reader_is_closed_over_the_soft_bound(self):
        # It takes bytes all the time (no stall), but less than it is sent:
        # past a quarter of the bound (64 KiB of 256 KiB) for 2 s, it goes,
        # long before the hard bound. 100 events: the state it is sent on
        # connecting stays well under the bound however late a loaded
        # machine lets it connect (300 events' odds can pass 256 KiB, and
        # then the very first queue closes it at the hard bound).
        with h.clean_server(self, "--feed", "sim:seed=4,events=100,rate=3000", "--keys", self.keys, "--progress", "0",
                      "--slow-timeout", "2", "--max-queue-bytes", "262144") as srv:
            srv.wait_for(r"serving http://")
            raw = RawWs(srv.port, "/pt-ws?api_key=sandbox&protocol=v2", rcvbuf=8192)
            self.assertEqual(raw.status, 101)
            raw.s.settimeout(1)
            deadline, relay, taken = time.time() + 120, None, 0
            while time.time() < deadline:
                try:
                    chunk = raw.s.recv(4096)
                    if not chunk:
                        break
                    taken += len(chunk)
                except socket.timeout:
                    pass
                time.sleep(0.1)  # about 40 KB/s
                relay = h.status(srv.port, "watcher")["relay"]
                if relay["closed_soft_limit"] + relay["closed_stalled"] + relay["closed_slow"]:
                    break
            self.assertEqual((relay["closed_soft_limit"], relay["closed_stalled"], relay["closed_slow"]), (1, 0, 0),
                             relay)
            self.assertGreater(taken, 0)
            raw.close()

    def test_never_reading_client_is_closed_for_no_progress(self):
        # A queue bound far above what it queues (a quarter of 256 MiB), so
        # only the stalled write can close it, and a rate that fills the
        # socket's buffers in seconds (at 300 records/s that took 20 s).
        with h.clean_server(self, "--feed", "sim:seed=4,events=300,rate=3000", "--keys", self.keys, "--progress", "0",
                      "--slow-timeout", "2", "--max-queue-bytes", str(256 << 20)) as srv:
            srv.wait_for(r"serving http://")
            raw = RawWs(srv.port, "/pt-ws?api_key=sandbox&protocol=v2", rcvbuf=4096)
            self.assertEqual(raw.status, 101)
            deadline, relay = time.time() + 120, None
            while time.time() < deadline:
                relay = h.status(srv.port, "watcher")["relay"]
                if relay["closed_stalled"] >= 1:
                    break
                time.sleep(0.2)
            self.assertEqual((relay["closed_stalled"], relay["closed_soft_limit"], relay["closed_slow"]), (1, 0, 0),
                             relay)
            raw.close()


if __name__ == "__main__":
    h.main()
