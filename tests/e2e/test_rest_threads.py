"""The REST API with several loops (--http-threads 2), through the real
binary on loopback: connections are dealt to both loops; one key's rate
limit is exact when its requests arrive on both at once; an ETag from one
loop is honoured by the other; stream upgrades accepted on either loop are
handed to the relay; and every test of test_rest_polling.py (rate-limit
headers, CORS, conditional /v1/odds, the answer caches) passes again with two
loops. Short on purpose: scripts/test.sh also runs it under TSan."""
import threading
import time
import unittest
import http.client

import harness as h
import test_rest_polling
from wsraw import RawWs

KEY = "threads-key"
KEYS = {"keys": [
    {"key": KEY, "name": "full", "sandbox": True, "permissions": ["live", "prematch", "odds", "scores"]},
    {"key": "shared-limit-key", "name": "limited", "rate_limit": 40, "permissions": ["live"]},
]}
WINDOW_S = 3600


class PollingOnTwoLoops(test_rest_polling.Polling):
    EXTRA = ("--http-threads", "2")


class TwoLoops(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("threads")
        keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "replay:" + h.fixture("rest.jsonl") + ",speed=max", "--keys", keys,
                           "--http-threads", "2", "--rate-window", str(WINDOW_S), "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"replay of .* finished")
        h.wait_until(lambda: h.status(cls.srv.port, KEY)["last_update"] == 1767225601504, 30, "the last record served")

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def test_connections_are_dealt_to_both_loops(self):
        before = h.status(self.srv.port, KEY)["http"]["loop_requests"]
        self.assertEqual(len(before), 2)
        for _ in range(6):  # one request per connection
            self.assertEqual(h.request(self.srv.port, "/v1/sports", KEY)[0].status, 200)
        after = h.status(self.srv.port, KEY)["http"]["loop_requests"]
        # Seven connections (six and this status) in turn: 3 or 4 on each loop.
        self.assertEqual(sorted(a - b for a, b in zip(after, before)), [3, 4])

    def test_one_key_on_both_loops_gets_exactly_its_limit(self):
        for _ in range(3):
            start = time.time()
            results, lock = [], threading.Lock()

            def client():
                c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30)
                got = []
                for _ in range(10):
                    c.request("GET", "/v1/live", headers={"X-API-Key": "shared-limit-key"})
                    r = c.getresponse()
                    r.read()
                    got.append((r.status, r.getheader("X-RateLimit-Remaining")))
                c.close()
                with lock:
                    results.extend(got)

            ts = [threading.Thread(target=client) for _ in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(120)
            if int(start) // WINDOW_S == int(time.time()) // WINDOW_S:
                break
        self.assertEqual(len(results), 80)
        self.assertEqual(sum(1 for s, _ in results if s == 200), 40)
        self.assertEqual(sum(1 for s, _ in results if s == 429), 40)
        # Each admitted request saw its own place: the 40 remainders 0..39 once each.
        self.assertEqual(sorted(int(r) for s, r in results if s == 200), list(range(40)))
        self.assertEqual({r for s, r in results if s == 429}, {"0"})

    def test_an_etag_from_one_loop_holds_on_the_other(self):
        path = "/v1/odds?ids=5001,s7-6001"
        tags = set()
        for _ in range(2):  # consecutive connections: one on each loop
            r, _ = h.request(self.srv.port, path, KEY)
            self.assertEqual(r.status, 200)
            tags.add(r.getheader("ETag"))
        self.assertEqual(len(tags), 1)
        tag = tags.pop()
        for _ in range(2):
            r, data = h.request(self.srv.port, path, KEY, headers={"If-None-Match": tag})
            self.assertEqual((r.status, data), (304, b""))

    def test_streams_upgraded_on_either_loop_reach_the_relay(self):
        before = h.status(self.srv.port, KEY)["relay"]["accepted"]
        streams = [RawWs(self.srv.port, f"/pt-ws?api_key={KEY}&protocol=v2") for _ in range(4)]
        try:
            for ws in streams:
                self.assertEqual(ws.status, 101, ws.head)
                op, payload = ws.recv_frame()
                self.assertEqual(op, 1)
                self.assertTrue(payload.decode().startswith("INFO\x1fPUB\x1f"), payload[:80])
        finally:
            for ws in streams:
                ws.s.close()
        self.assertEqual(h.status(self.srv.port, KEY)["relay"]["accepted"] - before, 4)


if __name__ == "__main__":
    h.main()
