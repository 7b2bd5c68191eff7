"""The REST API through the real binary on loopback: every endpoint's shape,
every id form, every error status, keys (permissions, source addresses,
disabled keys, SIGHUP reload, a bad file on reload), rate limits and their
reset, gzip, CORS, pipelining, a slow-loris client and an idle or stalled
one closed while others are served, and POST /v1/odds filters on a feed
where the sport filter alone decides."""
import gzip
import hashlib
import http.client
import json
import os
import signal
import socket
import subprocess
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
        {"key": "near-key", "name": "near", "allow_ips": ["10.0.0.0/8", "127.0.0.1/32"], "permissions": ["live"]},
        {"key": "loopback-net-key", "name": "lo-net", "allow_ips": ["127.0.0.0/8"], "permissions": ["live"]},
        {"key": "v6-only-key", "name": "v6", "allow_ips": ["::1"], "permissions": ["live"]},
    ]
}
HEADER_TIMEOUT_S = 3  # --header-timeout: long enough that a request from another client fits in it
IDLE_TIMEOUT_S = 5    # --idle-timeout
RATE_WINDOW_S = 3     # --rate-window


class Rest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("rest")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "replay:" + h.fixture("rest.jsonl") + ",speed=max", "--keys", cls.keys,
                           "--rate-window", str(RATE_WINDOW_S), "--header-timeout", str(HEADER_TIMEOUT_S * 1000),
                           "--idle-timeout", str(IDLE_TIMEOUT_S * 1000),
                           "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"replay of .* finished")
        h.wait_until(lambda: h.status(cls.srv.port, FULL)["last_update"] == 1767225601504, 30,
                     "the last record served")

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    # -- helpers
    def req(self, path, key=FULL, method="GET", body=None, headers=None):
        return h.request(self.srv.port, path, key, method, headers, body)

    def get_json(self, path, status=200, **kw):
        r, data = self.req(path, **kw)
        self.assertEqual(r.status, status, data)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        return json.loads(data)

    def reload_keys(self, content):
        """Writes the keys file, sends SIGHUP and returns the server's line
        about that reload (ok or failed)."""
        before = self.srv.count(r"keys reload")
        with open(self.keys, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        self.srv.proc.send_signal(signal.SIGHUP)
        return self.srv.wait_for_more(r"keys reload", before)

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
        self.assertEqual(ev["1007"]["s2.5"]["2009"], [195, 4, "2.5", 1767225600200])
        self.assertEqual(ev["1007"]["s2.5"]["s"], 1)
        self.assertEqual(ev["1007"]["s3.5"], {"ls": 1767225600200})  # empty rung
        self.assertEqual(ev["1004"]["s1:0"]["2004"], [650, 0, "1:0", 1767225600300])
        self.assertEqual(self.get_json("/v1/odds", status=400), {"error": "Missing ids parameter"})
        self.assertEqual(self.get_json("/v1/odds?ids=,", status=400), {"error": "Missing ids parameter"})
        many = ",".join(str(i) for i in range(1, 102))
        self.assertEqual(self.get_json("/v1/odds?ids=" + many, status=400)["error"],
                         "Too many ids: at most 100 per request")
        self.get_json("/v1/odds?ids=" + ",".join(str(i) for i in range(1, 101)))

    def test_odds_post_has_five_element_outcomes(self):
        body = json.dumps({"market": 1001, "events": ["s7_l101.5001", "s7-6001"]})
        r, data = self.req("/v1/odds", method="POST", body=body, headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, data)
        d = json.loads(data)
        self.assertEqual(list(d), ["s7-101.5001"])  # a bare object; 6001 has no market 1001
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
        self.assertEqual(self.get_json("/v1/live", status=403, key="hashed-key"),
                         {"error": "API key lacks the 'live' permission"})

    def test_allow_ips_lets_listed_addresses_through(self):
        # The test connects from 127.0.0.1: a list that holds it, alone or in
        # a network, lets it through; one that does not refuses it.
        for key in ("near-key", "loopback-net-key"):
            self.assertEqual(sorted(self.get_json("/v1/live?sport=1", key=key)["data"]), ["s7-101.5001"], key)
        for key in ("far-away-key", "v6-only-key"):
            self.assertEqual(self.get_json("/v1/live", status=403, key=key),
                             {"error": "Source address not allowed for this API key"}, key)
        # The address is checked before the permission (docs/api.md order).
        self.assertEqual(self.get_json("/v1/odds?ids=5001", status=403, key="far-away-key"),
                         {"error": "Source address not allowed for this API key"})
        self.assertEqual(self.get_json("/v1/odds?ids=5001", status=403, key="near-key"),
                         {"error": "API key lacks the 'odds' permission"})

    def test_unknown_path_and_wrong_method(self):
        self.assertEqual(self.get_json("/v1/nothing", status=404), {"error": "Not found"})
        self.assertEqual(self.get_json("/v1/nothing", status=404, key=None), {"error": "Not found"})
        r, data = self.req("/v1/live", method="DELETE")
        self.assertEqual(r.status, 405)
        self.assertEqual(json.loads(data), {"error": "Method not allowed"})
        self.assertEqual(r.getheader("Allow"), "GET, OPTIONS")

    def test_rate_limit_body_header_and_reset(self):
        # Windows are clock-aligned buckets (unix s / window) on the clock this
        # test reads too. An attempt counts only if its first request was sent
        # and its refusal received in one bucket; one that straddled a
        # boundary is repeated from a bucket the key has not used. Only this
        # test uses limited-key.
        window, limit = RATE_WINDOW_S, 3
        bucket = lambda t: int(t // window)
        used = None
        for _ in range(10):
            if used is not None:
                h.wait_until(lambda: bucket(time.time()) > used, 3 * window, "the next rate window")
            first = time.time()
            statuses = []
            while len(statuses) <= limit:
                sent = time.time()
                r, data = self.req("/v1/live", key="limited-key")
                received = time.time()
                statuses.append(r.status)
                if r.status != 200:
                    break
            used = bucket(received)
            if bucket(first) == used:
                break
        else:
            self.fail("no attempt fitted in one rate window")
        self.assertEqual(statuses, [200] * limit + [429], data)
        d = json.loads(data)
        self.assertEqual(d, {"error": "Rate limit exceeded", "limit": limit, "window": f"{window}s",
                             "retry_after": d["retry_after"]})
        # retry_after: the seconds from the server's clock second to the end of this bucket.
        end = (used + 1) * window
        self.assertTrue(end - int(received) <= d["retry_after"] <= end - int(sent), (d, sent, received))
        self.assertEqual(r.getheader("Retry-After"), str(d["retry_after"]))
        h.wait_until(lambda: bucket(time.time()) > used, 3 * window, "the rate window reset")
        self.assertEqual(self.get_json("/v1/live?sport=2", key="limited-key")["sport"], 2)  # the window reset

    def test_sighup_reload_keeps_connections_and_applies_at_once(self):
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        c.request("GET", "/v1/sports", headers={"X-API-Key": "no-odds-key"})
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertTrue(json.loads(r.read())["success"])
        self.assertEqual(self.get_json("/v1/live", status=401, key="new-key"), {"error": "Invalid or disabled API key"})
        changed = json.loads(json.dumps(KEYS))
        changed["keys"][1]["enabled"] = False
        changed["keys"].append({"key": "new-key", "permissions": ["live"]})
        try:
            self.assertIn(f"keys reloaded: {len(changed['keys'])} keys", self.reload_keys(changed))
            c.request("GET", "/v1/sports", headers={"X-API-Key": "no-odds-key"})  # same connection
            r = c.getresponse()
            self.assertEqual(r.status, 401)
            self.assertEqual(json.loads(r.read()), {"error": "Invalid or disabled API key"})
            c.request("GET", "/v1/live?sport=1", headers={"X-API-Key": "new-key"})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(list(json.loads(r.read())["data"]), ["s7-101.5001"])
            c.close()
        finally:
            self.assertIn(f"keys reloaded: {len(KEYS['keys'])} keys", self.reload_keys(KEYS))
        self.assertEqual(self.get_json("/v1/sports", key="no-odds-key")["success"], True)
        self.get_json("/v1/live", status=401, key="new-key")

    def test_bad_keys_file_on_sighup_keeps_the_old_keys(self):
        bad = json.loads(json.dumps(KEYS))
        bad["keys"][1]["enabled"] = False
        bad["keys"].append({"key": "bad-file-key", "permissions": ["live"]})
        bad["keys"].append({"key": "broken", "rate_limit": -1})
        n = len(bad["keys"]) - 1
        try:
            for content, why in ((bad, f"keys[{n}].rate_limit is not a positive integer"),
                                 ('{"keys": [{"key": "bad-file-key"', "keys file is not valid JSON")):
                line = self.reload_keys(content)
                self.assertIn("keys reload failed, keeping the old keys: " + why, line)
                for key in ("no-odds-key", FULL):  # the old keys, unchanged (no-odds-key still enabled)
                    self.assertEqual(list(self.get_json("/v1/live?sport=1", key=key)["data"]), ["s7-101.5001"], key)
                self.assertEqual(self.get_json("/v1/live", status=401, key="bad-file-key"),
                                 {"error": "Invalid or disabled API key"})
                self.assertEqual(self.get_json("/v1/live", status=401, key="disabled-key"),
                                 {"error": "Invalid or disabled API key"})
        finally:
            self.assertIn(f"keys reloaded: {len(KEYS['keys'])} keys", self.reload_keys(KEYS))

    # -- HTTP
    def test_gzip_for_big_bodies(self):
        r, data = self.req("/v1/prematch", headers={"Accept-Encoding": "gzip"})
        self.assertEqual((r.status, r.getheader("Content-Encoding")), (200, "gzip"))
        plain = json.loads(gzip.decompress(data))
        r2, data2 = self.req("/v1/prematch")
        self.assertEqual(r2.status, 200)
        self.assertGreater(len(data2), 1024)
        self.assertIsNone(r2.getheader("Content-Encoding"))
        self.assertEqual(plain["data"], json.loads(data2)["data"])
        r3, data3 = self.req("/v1/event?id=5001", headers={"Accept-Encoding": "gzip"})  # small: not worth it
        self.assertEqual(r3.status, 200)
        self.assertIsNone(r3.getheader("Content-Encoding"))
        self.assertEqual(json.loads(data3)["data"]["h"], "Leeds United")

    def test_cors(self):
        r, data = self.req("/v1/odds", key=None, method="OPTIONS",
                           headers={"Origin": "http://example.test", "Access-Control-Request-Method": "GET",
                                    "Access-Control-Request-Headers": "x-api-key"})
        self.assertEqual((r.status, data), (204, b""))
        self.assertEqual(r.getheader("Access-Control-Allow-Origin"), "*")
        self.assertEqual(r.getheader("Access-Control-Allow-Methods"), "GET, POST, OPTIONS")
        self.assertIn("X-API-Key", r.getheader("Access-Control-Allow-Headers"))
        r, _ = self.req("/v1/sports")
        self.assertEqual(r.status, 200)
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

    @staticmethod
    def closed(sock):
        """True once the server has closed `sock` (EOF or reset), False while
        it is open with nothing to read; fails on an answer."""
        sock.setblocking(False)
        try:
            data = sock.recv(100)
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True
        finally:
            sock.setblocking(True)
        assert data == b"", data
        return True

    def test_slow_loris_is_closed_while_others_are_served(self):
        slow = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
        started = time.monotonic()  # before the first byte: the server's clock starts later
        slow.sendall(b"GET /v1/live HTTP/1.1\r\nHost: x\r\n")
        # Others are answered while the slow request is open and incomplete
        # (one local request fits in the header timeout even on a loaded machine).
        self.assertEqual(self.get_json("/v1/sports")["success"], True)
        self.assertFalse(self.closed(slow), "the slow request was closed before another client was answered")
        # Dripping header lines does not extend the deadline: closed without an answer.
        deadline = started + 5 * HEADER_TIMEOUT_S
        while not self.closed(slow) and time.monotonic() < deadline + 5:
            try:
                slow.sendall(b"X-Drip: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.1)
        took = time.monotonic() - started
        slow.close()
        self.assertGreaterEqual(took, HEADER_TIMEOUT_S)
        self.assertLessEqual(took, 5 * HEADER_TIMEOUT_S)
        self.assertEqual(self.get_json("/v1/sports")["success"], True)

    def test_idle_keep_alive_connection_is_closed(self):
        idle = socket.create_connection(("127.0.0.1", self.srv.port), timeout=10)
        started = time.monotonic()  # before the request: the server's last activity is later
        idle.sendall(b"GET /v1/sports HTTP/1.1\r\nHost: x\r\nX-API-Key: " + FULL.encode() + b"\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = idle.recv(65536)
            self.assertTrue(chunk, "closed before the answer")
            head += chunk
        self.assertTrue(head.startswith(b"HTTP/1.1 200 OK"), head[:100])
        self.assertNotIn(b"Connection: close", head)
        idle.settimeout(5 * IDLE_TIMEOUT_S + 5)
        try:
            while idle.recv(65536):  # the rest of the body, then EOF
                pass
        except ConnectionResetError:
            pass
        took = time.monotonic() - started
        idle.close()
        self.assertGreaterEqual(took, IDLE_TIMEOUT_S)
        self.assertLessEqual(took, 5 * IDLE_TIMEOUT_S)

    def test_client_that_never_reads_is_dropped_and_others_are_served(self):
        # Pipeline many big answers and never read them: the server stops
        # reading this client past 4 MiB unsent, keeps serving others, and
        # closes it once no write has completed for the idle timeout.
        answer = len(self.req("/v1/prematch")[1])
        conns = lambda: self.get_json("/v1/status")["http"]["connections"]
        h.wait_until(lambda: conns() == 1, 30, "earlier connections closed")
        hog = socket.socket()
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        started = time.monotonic()  # before any write to the hog can complete
        hog.connect(("127.0.0.1", self.srv.port))
        req = b"GET /v1/prematch HTTP/1.1\r\nHost: x\r\nX-API-Key: " + FULL.encode() + b"\r\n\r\n"
        hog.setblocking(False)
        sent = 0
        try:
            for _ in range(20000):
                sent += hog.send(req)
        except BlockingIOError:
            pass
        self.assertGreater(sent // len(req) * answer, 4 << 20)  # more answers asked for than the server holds
        self.assertEqual(conns(), 2)  # the hog is held (and this request)
        for _ in range(10):
            self.assertEqual(len(self.get_json("/v1/sports")["data"]), 3)
        self.assertEqual(conns(), 2, "the hog was dropped before others were served")
        h.wait_until(lambda: conns() == 1, 5 * IDLE_TIMEOUT_S + 10, "the hog dropped")
        took = time.monotonic() - started
        hog.close()
        self.assertGreaterEqual(took, IDLE_TIMEOUT_S)  # not before the idle timeout...
        self.assertLessEqual(took, 5 * IDLE_TIMEOUT_S)  # ...and not long after it

    def test_curl(self):
        out = subprocess.run(["curl", "-s", "--compressed", "-H", "X-API-Key: " + FULL,
                              f"http://127.0.0.1:{self.srv.port}/v1/live?sport=1"],
                             capture_output=True, text=True, timeout=30).stdout
        self.assertIn("s7-101.5001", json.loads(out)["data"])


class StatusCounts(unittest.TestCase):
    """rest.jsonl up to 5009's final score, before its removal: a live match
    that ended is still in the feed's lists. /v1/status counts it once, in
    events.ended; live_events equals events.live (it used to count the
    ended match as live beside events.live), while el_events still counts
    what /rdstn's el lists (every listed live event)."""

    def test_an_ended_listed_match_is_not_counted_live(self):
        d = h.scratch("rest-status-counts")
        feed = os.path.join(d, "ended_listed.jsonl")
        with open(h.fixture("rest.jsonl")) as f, open(feed, "w") as out:
            for line in f:
                out.write(line)
                if '"status":"ended"' in line:
                    break
        srv = h.Server("--feed", "replay:" + feed + ",speed=max", "--progress", "0")
        try:
            key = srv.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]{32})").group(1)
            srv.wait_for(r"replay of .* finished")
            st = h.wait_status(srv.port, key, lambda s: s["feed"]["done"] and s["last_update"] == 1767225601300,
                               "the ended score applied")
            self.assertEqual(st["events"]["ended"], 1, st)
            self.assertEqual((st["live_events"], st["prematch_events"]), (2, 3), st)
            self.assertEqual((st["live_events"], st["prematch_events"]), (st["events"]["live"], st["events"]["prematch"]))
            self.assertEqual(st["el_events"], 3, st)
        finally:
            h.shut_down(srv, d)


class OddsPost(unittest.TestCase):
    """POST /v1/odds and duplicate ids on odds_sports.jsonl, where every
    event but 8004 has market 1001: the sport filter alone decides whether
    another sport's event is in the answer."""

    @classmethod
    def setUpClass(cls):
        cls.srv = h.Server("--feed", "replay:" + h.fixture("odds_sports.jsonl") + ",speed=max", "--progress", "0")
        cls.key = cls.srv.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]{32})").group(1)
        cls.srv.wait_for(r"replay of .* finished: 9 records")
        h.wait_status(cls.srv.port, cls.key, lambda st: st["feed"]["records_applied"] == 9 and st["seq"] == 9,
                      "9 records applied and published to REST")

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        assert rc == 0, log

    def post(self, body):
        r, data = h.request(self.srv.port, "/v1/odds", self.key, "POST", {"Content-Type": "application/json"},
                            json.dumps(body))
        self.assertEqual(r.status, 200, data)
        return data

    def test_sport_filter_decides(self):
        every = ["8001", "s7-201.8002", "s7_p101.8003", "8004", "424242"]
        both = json.loads(self.post({"market": 1001, "events": every}))
        self.assertEqual(list(both), ["s7-101.8001", "s7-201.8002", "s7-101.8003"])  # without a filter: both sports
        self.assertEqual(both["s7-201.8002"], {"1001": {"s": {"2001": [150, 0, None, 150, 1767225700400],
                                                              "2003": [250, 0, None, 250, 1767225700400],
                                                              "s": 0, "ls": 1767225700400}}})
        self.assertEqual(both["s7-101.8001"]["1001"]["s"]["2001"], [175, 0, None, 185, 1767225700200])
        soccer = json.loads(self.post({"sport": 1, "market": 1001, "events": every}))
        self.assertEqual(soccer, {k: both[k] for k in ("s7-101.8001", "s7-101.8003")})
        basketball = json.loads(self.post({"sport": 2, "market": 1001, "events": every}))
        self.assertEqual(basketball, {"s7-201.8002": both["s7-201.8002"]})
        self.assertEqual(json.loads(self.post({"sport": 5, "market": 1001, "events": every})), {})
        self.assertEqual(json.loads(self.post({"sport": 2, "market": 1080, "events": every})),
                         {"s7-201.8004": {"1080": {"s215.5": {"2022": [190, 0, "215.5", 190, 1767225700800],
                                                              "2023": [190, 0, "215.5", 190, 1767225700800],
                                                              "s": 0, "ls": 1767225700800}}}})

    def test_duplicate_ids_answer_each_event_once(self):
        # docs/api.md: "duplicates counted once". The same event named again,
        # in the same or another id form, is one entry (checked in the raw
        # bytes: a JSON parser would silently merge a repeated key).
        forms = ["8001", "8001", "s7-101.8001", "s7_l101.8001", "s7-8001", "8002"]
        r, raw = h.request(self.srv.port, "/v1/odds?ids=" + ",".join(forms), self.key)
        self.assertEqual(r.status, 200, raw)
        self.assertEqual(raw.count(b'"s7-101.8001":'), 1, raw)
        self.assertEqual(sorted(json.loads(raw)["data"]), ["s7-101.8001", "s7-201.8002"])
        raw = self.post({"market": 1001, "events": forms})
        self.assertEqual(raw.count(b'"s7-101.8001":'), 1, raw)
        self.assertEqual(sorted(json.loads(raw)), ["s7-101.8001", "s7-201.8002"])
        # The same id string repeated past the 100-id bound counts once, on
        # GET and on POST alike.
        r, raw = h.request(self.srv.port, "/v1/odds?ids=" + ",".join(["8003"] * 150), self.key)
        self.assertEqual(r.status, 200, raw)
        self.assertEqual(list(json.loads(raw)["data"]), ["s7-101.8003"])
        raw = self.post({"market": 1001, "events": ["8003"] * 150})
        self.assertEqual(list(json.loads(raw)), ["s7-101.8003"])
        # 101 distinct ids are still too many.
        r, raw = h.request(self.srv.port, "/v1/odds", self.key, method="POST",
                           body=json.dumps({"market": 1001, "events": [str(9000 + i) for i in range(101)]}),
                           headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 400, raw)


if __name__ == "__main__":
    h.main()
