"""The relay's promises that need their own server: a /pt-ws subscriber
that applies the connect snapshot and every delta ends with exactly the
state REST serves (replayed feed, compared at the same seq); a client that
stops reading is closed with 1008 at its byte bound while another client
keeps every batch; a client that reads slowly is conflated and told so."""
import asyncio
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import unittest

import websockets
from websockets.exceptions import ConnectionClosed

import harness as h
from wsraw import RawWs

KEY = "state-key"
KEYS = {"keys": [{"key": KEY, "name": "state", "ws_connections": 20, "permissions": ["live", "prematch", "odds"]}]}


def split(frame):
    t, ch, body = frame.split("\x1f", 2)
    return t, ch, json.loads(body)


def rest(port, path):
    r, body = h.request(port, path, KEY)
    data = json.loads(body)
    assert r.status == 200, data
    return data


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class WithKeys(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="oddsrelay-relay-state-")
        self.keys = os.path.join(self.dir, "keys.json")
        with open(self.keys, "w") as f:
            json.dump(KEYS, f)

    def tearDown(self):
        shutil.rmtree(self.dir)


class DeltasRebuildRestState(WithKeys):
    def test_snapshot_plus_deltas_equals_rest(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        rc, out, err = h.run([h.binary("oddsfeed"), "gen", "-o", feed, "--records", "20000",
                              "--sim", "seed=5,events=60,rate=400"])
        self.assertEqual(rc, 0, err)
        with h.Server("--feed", f"replay:{feed},speed=12", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port

            async def follow():
                events, odds, number_key = {}, {}, {}
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    t, ch, ready = split(await ws.recv())
                    seq, last = ready["seq"], None
                    done_seq = None
                    while True:
                        t, ch, body = split(await asyncio.wait_for(ws.recv(), 30))
                        if t == "INFO":
                            self.assertEqual(body["from"], seq + 1, "a batch is missing")
                            seq = body["seq"]
                            if done_seq is None and "finished" in srv.log():
                                # The source is done; the engine may still be applying its
                                # queue: the final seq is the one that stops moving.
                                a = rest(port, "/v1/status")["seq"]
                                time.sleep(0.3)
                                if rest(port, "/v1/status")["seq"] == a:
                                    done_seq = a
                            if done_seq is not None and seq >= done_seq:
                                return events, odds, seq
                            continue
                        kind, *rest_ch = ch.split(":")
                        if kind == "evt":
                            for k, v in body.items():
                                if v is None:
                                    events.pop(k, None)
                                else:
                                    self.assertEqual(v["sport"], int(rest_ch[0]))
                                    events[k] = v
                        else:
                            book = odds.setdefault(int(rest_ch[1]), {})
                            for m, lines in body.items():
                                if lines is None:
                                    book.pop(m, None)
                                else:
                                    book[m] = lines

            events, odds, seq = asyncio.run(asyncio.wait_for(follow(), 120))
            self.assertEqual(rest(port, "/v1/status")["seq"], seq, "the feed kept moving after it finished")
            live = rest(port, "/v1/live")["data"]
            pre = rest(port, "/v1/prematch")["data"]
            rest_events = {}
            for group in (live, pre):
                for evs in group.values():
                    rest_events.update(evs)
            self.assertEqual(events, rest_events)
            live_keys = [k for k, v in events.items() if v["live"]]
            self.assertTrue(live_keys)
            rest_odds = {}
            for i in range(0, len(live_keys), 100):
                rest_odds.update(rest(port, "/v1/odds?ids=" + ",".join(live_keys[i:i + 100]))["data"])
            for k in live_keys:
                number = int(k.rsplit(".", 1)[-1].rsplit("-", 1)[-1])
                self.assertEqual(odds.get(number, {}), rest_odds.get(k, {}), k)


class SlowClients(WithKeys):
    def test_non_reader_closed_at_bound_others_unaffected(self):
        # The slow reader has a server of its own with the default bound: what a
        # lagging client holds after lossless conflation (the last state of every
        # market that changed) is more than the stalled client's 256 KiB. Tiny
        # resume windows: the memory check is about the send queues.
        with h.Server("--feed", "sim:seed=4,events=300,rate=3000", "--keys", self.keys, "--progress", "0",
                      "--max-queue-bytes", "262144", "--resume-window", "64K,1s") as srv, \
             h.Server("--feed", "sim:seed=4,events=300,rate=3000", "--keys", self.keys, "--progress", "0",
                      "--resume-window", "64K,1s") as slow_srv:
            srv.wait_for(r"serving http://")
            slow_srv.wait_for(r"serving http://")
            port = srv.port
            time.sleep(1)
            rss_before = rss_kib(srv.proc.pid)
            stalled = RawWs(port, f"/pt-ws?api_key={KEY}&protocol=v2", rcvbuf=4096)
            self.assertEqual(stalled.status, 101)

            # A slow reader: a little at a time, so its queue backs up.
            slow = RawWs(slow_srv.port, f"/pt-ws?api_key={KEY}&protocol=v2", rcvbuf=8192)
            conflated = []
            stop = threading.Event()

            def read_slowly():
                try:
                    while not stop.is_set():
                        op, p = slow.recv_frame()
                        if op == 1 and p.startswith(b"INFO\x1fPUB\x1f") and b"conflated" in p:
                            conflated.append(json.loads(p.split(b"\x1f", 2)[2]))
                            break
                        if op == 8:
                            break
                        time.sleep(0.002)
                except (OSError, ConnectionError):
                    pass
            reader = threading.Thread(target=read_slowly, daemon=True)
            reader.start()

            async def good_client():
                url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    t, ch, ready = split(await ws.recv())
                    seq, markers = ready["seq"], 0
                    deadline = time.monotonic() + 40
                    while time.monotonic() < deadline:
                        t, ch, body = split(await ws.recv())
                        if t == "INFO":
                            self.assertEqual(body["from"], seq + 1)
                            seq, markers = body["seq"], markers + 1
                            if markers % 50 == 0 and rest(port, "/v1/status")["relay"]["closed_slow"] >= 1:
                                return markers
                    self.fail("the stalled client was not closed within 40 s: %s" % rest(port, "/v1/status")["relay"])

            markers = asyncio.run(asyncio.wait_for(good_client(), 60))
            self.assertGreater(markers, 0)
            # The stalled client finds our close frame (1008) once it reads.
            code, reason, _ = stalled.until_close(timeout=20)
            self.assertEqual(code, 1008)
            self.assertIn("too slow", reason)
            stalled.close()
            reader.join(30)  # until the slow reader meets an INFO that reports conflation
            stop.set()
            slow.close()
            status = rest(slow_srv.port, "/v1/status")["relay"]
            self.assertGreater(status["conflated"], 0, status)
            self.assertTrue(conflated, "the slow reader was never told of conflation: %s" % status)
            self.assertGreater(conflated[0]["conflated"], 0)
            # Memory stayed near where it was: the bound holds references, not
            # copies. (Not under a sanitizer: its quarantine holds freed memory.)
            if not h.sanitized():
                self.assertLess(rss_kib(srv.proc.pid) - rss_before, 64 * 1024)


if __name__ == "__main__":
    h.main()
