"""The REST API through the real binary on loopback: every endpoint's shape,
every id form, every error status, keys (permissions, source addresses,
disabled keys, SIGHUP reload), rate limits and their reset, gzip, CORS,
pipelining, and a slow-loris client closed while others are served."""
import gzip
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import harness as h

FULL = "full-key-0123456789"
KEYS = {
    "keys": [
        {"key": FULL, "name": "full", "sandbox": True,
         "permissions": ["live", "prematch", "odds", "scores", "widget", "stream"]},
        {"key": "no-odds-key", "name": "no-odds", "permissions": ["live", "prematch"]},
        {"key": "disabled-key", "name": "off", "enabled": False, "permissions": ["live"]},
        {"key": "far-away-key", "name": "ip", "allow_ips": ["10.0.0.0/8"], "permissions": ["live"]},
        {"key": "limited-key", "name": "limited", "rate_limit": 3, "permissions": ["live", "odds"]},
        {"key_sha256": hashlib.sha256(b"hashed-key").hexdigest(), "name": "hashed", "permissions": ["scores"]},
    ]
}


class Rest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-rest-")
        cls.keys = os.path.join(cls.dir, "keys.json")
        with open(cls.keys, "w") as f:
            json.dump(KEYS, f)
        cls.srv = h.Server("--feed", "replay:" + h.fixture("rest.jsonl") + ",speed=max", "--keys", cls.keys,
                           "--rate-window", "3", "--header-timeout", "1000", "--idle-timeout", "5000",
                           "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"replay of .* finished")

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rc == 0, log

    # -- helpers
    def req(self, path, key=FULL, method="GET", body=None, headers=None):
        return h.request(self.srv.port, path, key, method, headers, body)

    def get_json(self, path, status=200, **kw):
        r, data = self.req(path, **kw)
        self.assertEqual(r.status, status, data)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        return json.loads(data)

    def raw(self, data, read_until_close=True, timeout=5):
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=timeout)
        s.sendall(data)
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
                if not read_until_close:
                    break
        except socket.timeout:
            pass
        s.close()
        return out

    # -- endpoints
    def test_sports(self):
        d = self.get_json("/v1/sports")
        self.assertTrue(d["success"])
        by_id = {s["id"]: s for s in d["data"]}
        self.assertEqual(by_id[1], {"id": 1, "name": "Soccer", "live_count": 1, "prematch_count": 3})
        self.assertEqual(by_id[2]["name"], "Basketball")
        self.assertEqual(by_id[2]["live_count"], 1)

    def test_live(self):
        d = self.get_json("/v1/live?sport=1")
        self.assertEqual(d["sport"], 1)
        self.assertIsInstance(d["ts"], int)
        self.assertEqual(list(d["data"]), ["s7-101.5001"])
        ev = d["data"]["s7-101.5001"]
        self.assertEqual(ev["h"], "Leeds United")
        self.assertEqual(ev["c"], [1, "England", 1, "GB"])
        self.assertTrue(ev["live"])
        all_ = self.get_json("/v1/live")
        self.assertIsNone(all_["sport"])
        self.assertEqual(sorted(all_["data"]), ["1", "2"])
        self.assertIn("s7-6001", all_["data"]["2"])
        self.assertEqual(self.get_json("/v1/live?sport=99")["data"], {})

    def test_prematch_orders_by_priority_then_kickoff_and_limits(self):
        d = self.get_json("/v1/prematch?sport=1")
        self.assertNotIn("ts", d)
        self.assertEqual(list(d["data"]), ["s7-101.5004", "s7-101.5003", "s7-102.5002"])
        d = self.get_json("/v1/prematch?sport=1&limit=2")
        self.assertEqual(list(d["data"]), ["s7-101.5004", "s7-101.5003"])
        self.assertEqual(self.get_json("/v1/prematch?limit=0", status=400)["error"],
                         "Invalid limit parameter: expected an integer from 1 to 10000")

    def test_event_accepts_every_id_form(self):
        for id_ in ["s7-101.5001", "s7_l101.5001", "s7_p999.5001", "5001"]:
            d = self.get_json("/v1/event?id=" + id_)
            self.assertEqual(d["data"]["h"], "Leeds United", id_)
        self.assertEqual(self.get_json("/v1/event?id=s7-6001&sport=2")["data"]["sport"], 2)
        for bad in ["424242", "bogus", "s7-6001&sport=1", "5009"]:  # unknown, garbage, wrong sport, removed
            self.assertEqual(self.get_json("/v1/event?id=" + bad, status=404), {"error": "Event not found"})
        self.assertEqual(self.get_json("/v1/event", status=400)["error"], "Missing id parameter")

    def test_odds_get(self):
        d = self.get_json("/v1/odds?ids=5001,s7-6001,424242,garbage")
        self.assertEqual(sorted(d["data"]), ["s7-101.5001", "s7-6001"])
        ev = d["data"]["s7-101.5001"]
        line = ev["1001"]["s"]
        self.assertEqual(line["2001"], [175, 0, None, 1767225600400])  # price moved: ts moved
        self.assertEqual(line["2002"], [340, 0, None, 1767225600100])  # unchanged: ts kept
        self.assertEqual(line["s"], 0)
        self.assertEqual(line["ls"], 1767225600400)
        self.assertEqual(ev["1007"]["s2.5"]["2102"], [195, 4, "2.5", 1767225600200])
        self.assertEqual(ev["1007"]["s2.5"]["s"], 1)
        self.assertEqual(ev["1007"]["s3.5"], {"ls": 1767225600200})  # empty rung
        self.assertEqual(ev["1004"]["s1:0"]["2201"], [650, 0, "1:0", 1767225600300])
        self.assertEqual(self.get_json("/v1/odds", status=400), {"error": "Missing ids parameter"})
        self.assertEqual(self.get_json("/v1/odds?ids=,", status=400), {"error": "Missing ids parameter"})
        many = ",".join(str(i) for i in range(1, 102))
        self.assertEqual(self.get_json("/v1/odds?ids=" + many, status=400)["error"],
                         "Too many ids: at most 100 per request")
        self.get_json("/v1/odds?ids=" + ",".join(str(i) for i in range(1, 101)))

    def test_odds_post_has_five_element_outcomes(self):
        body = json.dumps({"sport": 1, "market": 1001, "events": ["s7_l101.5001", "s7-6001"]})
        r, data = self.req("/v1/odds", method="POST", body=body, headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, data)
        d = json.loads(data)
        self.assertEqual(list(d), ["s7-101.5001"])  # a bare object, 6001 has no market 1001
        self.assertEqual(d["s7-101.5001"]["1001"]["s"]["2001"], [175, 0, None, 185, 1767225600400])
        self.assertEqual(d["s7-101.5001"]["1001"]["s"]["2002"], [340, 0, None, 340, 1767225600100])
        for bad in ["not json", "[]", '{"market":"x","events":[]}', '{"market":1001,"events":[5]}']:
            r, data = self.req("/v1/odds", method="POST", body=bad)
            self.assertEqual(r.status, 400, bad)
            self.assertIn("Invalid body", json.loads(data)["error"])

    def test_scores(self):
        d = self.get_json("/v1/scores")
        self.assertEqual(d["data"]["s7-101.5001"], {"home": 1, "away": 0, "status": "live", "ts": 1767225600500,
                                                    "kickoff": 1767225000, "clock": "23:10", "ms": 23,
                                                    "period": "1H", "match_length": 90})
        self.assertEqual(sorted(self.get_json("/v1/scores?sport=2")["data"]), ["s7-6001"])
        # A removed event's score is still there when asked for by id.
        d = self.get_json("/v1/scores?ids=5009", key="hashed-key")
        self.assertEqual(d["data"]["s7-101.5009"]["status"], "ended")

    def test_status(self):
        d = self.get_json("/v1/status")
        self.assertTrue(d["success"])
        self.assertEqual(d["live_events"], 2)
        self.assertEqual(d["prematch_events"], 7)
        self.assertEqual(d["last_update"], 1767225601504)
        self.assertEqual(d["feed"]["source"], "replay")
        self.assertTrue(d["feed"]["done"])
        self.assertEqual(d["feed"]["records_applied"], 19)
        self.assertGreaterEqual(d["uptime"], 0)

    # -- keys
    def test_keys_and_permissions(self):
        for key in [None, "", "wrong", "disabled-key"]:
            self.assertEqual(self.get_json("/v1/live", status=401, key=key), {"error": "Invalid or disabled API key"})
        self.assertEqual(self.get_json("/v1/live?api_key=" + FULL, key=None)["success"], True)
        r, _ = self.req("/v1/live", key=None, headers={"x-api-key": FULL})  # any case of the header name
        self.assertEqual(r.status, 200)
        e = self.get_json("/v1/odds?ids=5001", status=403, key="no-odds-key")["error"]
        self.assertIn("'odds'", e)
        self.assertEqual(self.get_json("/v1/live", status=403, key="far-away-key")["error"],
                         "Source address not allowed for this API key")
        self.get_json("/v1/scores", key="hashed-key")
        self.get_json("/v1/live", status=403, key="hashed-key")

    def test_unknown_path_and_wrong_method(self):
        self.assertEqual(self.get_json("/v1/nothing", status=404), {"error": "Not found"})
        self.assertEqual(self.get_json("/v1/nothing", status=404, key=None), {"error": "Not found"})
        r, data = self.req("/v1/live", method="DELETE")
        self.assertEqual(r.status, 405)
        self.assertEqual(json.loads(data), {"error": "Method not allowed"})
        self.assertEqual(r.getheader("Allow"), "GET, OPTIONS")

    def test_rate_limit_body_header_and_reset(self):
        # Align to the start of a window so the 4 calls land in one.
        window = 3
        time.sleep(window - time.time() % window + 0.05)
        for _ in range(3):
            self.get_json("/v1/live", key="limited-key")
        r, data = self.req("/v1/live", key="limited-key")
        self.assertEqual(r.status, 429)
        d = json.loads(data)
        self.assertEqual(d["error"], "Rate limit exceeded")
        self.assertEqual(d["limit"], 3)
        self.assertEqual(d["window"], "3s")
        self.assertIn(d["retry_after"], [1, 2, 3])
        self.assertEqual(r.getheader("Retry-After"), str(d["retry_after"]))
        time.sleep(d["retry_after"] + 0.1)
        self.get_json("/v1/live", key="limited-key")  # the window reset

    def test_sighup_reload_keeps_connections_and_applies_at_once(self):
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        c.request("GET", "/v1/sports", headers={"X-API-Key": "no-odds-key"})
        self.assertEqual(c.getresponse().read() and 200, 200)
        changed = json.loads(json.dumps(KEYS))
        changed["keys"][1]["enabled"] = False
        changed["keys"].append({"key": "new-key", "permissions": ["live"]})
        with open(self.keys, "w") as f:
            json.dump(changed, f)
        try:
            self.srv.proc.send_signal(signal.SIGHUP)
            self.srv.wait_for(r"keys reloaded: 7 keys")
            c.request("GET", "/v1/sports", headers={"X-API-Key": "no-odds-key"})  # same connection
            r = c.getresponse()
            self.assertEqual(r.status, 401)
            r.read()
            c.request("GET", "/v1/live", headers={"X-API-Key": "new-key"})
            self.assertEqual(c.getresponse().status, 200)
            c.close()
        finally:
            with open(self.keys, "w") as f:
                json.dump(KEYS, f)
            self.srv.proc.send_signal(signal.SIGHUP)
            self.srv.wait_for(r"keys reloaded: 7 keys(.|\n)*keys reloaded: 6 keys")

    # -- HTTP
    def test_gzip_for_big_bodies(self):
        r, data = self.req("/v1/prematch", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")
        plain = json.loads(gzip.decompress(data))
        r2, data2 = self.req("/v1/prematch")
        self.assertGreater(len(data2), 1024)
        self.assertIsNone(r2.getheader("Content-Encoding"))
        self.assertEqual(plain["data"], json.loads(data2)["data"])
        r3, _ = self.req("/v1/event?id=5001", headers={"Accept-Encoding": "gzip"})  # small: not worth it
        self.assertIsNone(r3.getheader("Content-Encoding"))

    def test_cors(self):
        r, data = self.req("/v1/odds", key=None, method="OPTIONS",
                           headers={"Origin": "http://example.test", "Access-Control-Request-Method": "GET",
                                    "Access-Control-Request-Headers": "x-api-key"})
        self.assertEqual(r.status, 204)
        self.assertEqual(r.getheader("Access-Control-Allow-Origin"), "*")
        self.assertIn("X-API-Key", r.getheader("Access-Control-Allow-Headers"))
        r, _ = self.req("/v1/sports")
        self.assertEqual(r.getheader("Access-Control-Allow-Origin"), "*")

    def test_pipelining_answers_in_order(self):
        reqs = b"".join(
            b"GET /v1/event?id=%s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n" % (i, FULL.encode())
            for i in [b"5001", b"5002", b"5003"])
        out = self.raw(reqs + b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-API-Key: " + FULL.encode() +
                       b"\r\nConnection: close\r\n\r\n")
        self.assertEqual(out.count(b"HTTP/1.1 200 OK"), 4)
        first = [out.find(n) for n in [b"Leeds United", b"Sevilla FC", b"Bristol City", b'"uptime"']]
        self.assertEqual(first, sorted(first))
        self.assertTrue(all(p > 0 for p in first))

    def test_bounds_and_framing_errors(self):
        key = FULL.encode()
        cases = [
            (b"GET /v1/live?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"414"),
            (b"GET /v1/live HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n", b"431"),
            (b"GET /v1/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * 17000 + b"\r\n\r\n", b"431"),
            (b"POST /v1/odds HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key + b"\r\nContent-Length: 2000000\r\n\r\n", b"413"),
            (b"POST /v1/odds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", b"411"),
            (b"POST /v1/odds HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", b"400"),
            (b"GARBAGE\r\n\r\n", b"400"),
        ]
        for data, status in cases:
            out = self.raw(data)
            self.assertTrue(out.startswith(b"HTTP/1.1 " + status), (data[:60], out[:100]))
            self.assertIn(b'{"error":', out)
            self.assertIn(b"Connection: close", out)

    def test_http10_closes(self):
        out = self.raw(b"GET /v1/sports HTTP/1.0\r\nX-API-Key: " + FULL.encode() + b"\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 200"))
        self.assertIn(b"Connection: close", out)

    def test_slow_loris_is_closed_while_others_are_served(self):
        slow = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
        slow.sendall(b"GET /v1/live HTTP/1.1\r\nHost: x\r\n")
        t0 = time.time()
        for _ in range(5):  # others are answered meanwhile
            self.get_json("/v1/sports")
            slow.sendall(b"X-Drip: 1\r\n")
            time.sleep(0.1)
        self.assertLess(time.time() - t0, 3)
        slow.settimeout(5)
        try:
            closed = slow.recv(100) == b""
        except ConnectionResetError:
            closed = True
        self.assertTrue(closed)
        self.assertLess(time.time() - t0, 4)  # header timeout 1 s, swept every 250 ms
        slow.close()

    def test_client_that_never_reads_is_dropped_and_others_are_served(self):
        # Pipeline many big answers and never read them: the server stops
        # reading this client past 4 MiB unsent, keeps serving others, and
        # closes it once no write has completed for the idle timeout (5 s).
        hog = socket.socket()
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.connect(("127.0.0.1", self.srv.port))
        req = b"GET /v1/prematch HTTP/1.1\r\nHost: x\r\nX-API-Key: " + FULL.encode() + b"\r\n\r\n"
        hog.setblocking(False)
        sent = 0
        try:
            for _ in range(20000):
                sent += hog.send(req)
        except BlockingIOError:
            pass
        self.assertGreater(sent, 0)
        t0 = time.time()
        conns = lambda: self.get_json("/v1/status")["http"]["connections"]
        self.assertEqual(conns(), 2)  # the hog is held (and this request)
        for _ in range(10):
            self.get_json("/v1/sports")
        self.assertLess(time.time() - t0, 2)
        while time.time() - t0 < 12 and conns() > 1:
            time.sleep(0.25)
        dropped_after = time.time() - t0
        hog.close()
        self.assertGreater(dropped_after, 3.5)  # not before the 5 s idle timeout...
        self.assertLess(dropped_after, 8)       # ...and soon after it

    def test_curl(self):
        out = subprocess.run(["curl", "-s", "--compressed", "-H", "X-API-Key: " + FULL,
                              f"http://127.0.0.1:{self.srv.port}/v1/live?sport=1"],
                             capture_output=True, text=True, timeout=30).stdout
        self.assertIn("s7-101.5001", json.loads(out)["data"])


if __name__ == "__main__":
    h.main()
