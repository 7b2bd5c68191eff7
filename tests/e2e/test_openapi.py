"""docs/openapi.yaml against the real server: the document is valid OpenAPI
3.1 for an independent validator (swagger-parser from npm, run by
tests/e2e/node/openapi_lint.js), and every answer of every route, for every
status this test can provoke, matches it (tests/e2e/openapi_check.py): the
simulator's live data, a replayed fixture with an ended match and withdrawn
lines, refusals of every kind, conditional requests, rate limits, stream
handshakes, protocol errors and the 503 of a server still replaying its
journal. Tampered answers (a field renamed, retyped, added; a required header
dropped) and undocumented routes or statuses must fail the check."""
import copy
import gzip
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import harness as h
import openapi_check as oc

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")
DOC = os.path.join(HERE, "..", "..", "docs", "openapi.yaml")

FULL = "openapi-full-key"
LIMITED = "openapi-limited-key"
STREAMER = "openapi-streamer-key"
KEYS = {
    "keys": [
        {"key": FULL, "name": "full", "sandbox": True,
         "permissions": ["live", "prematch", "odds", "scores", "widget", "stream"],
         "widget": {"theme": "light", "accent": "#e5484d", "show": {"stats": True}}},
        {"key": LIMITED, "name": "limited", "rate_limit": 4,
         "permissions": ["live", "prematch", "odds", "scores", "widget", "stream"]},
        # One stream slot and --handshake-rate 1: the second handshake is a 429.
        {"key": STREAMER, "name": "streamer", "ws_connections": 1, "permissions": ["live"]},
        {"key": "openapi-none-key", "name": "none", "permissions": []},
        {"key": "openapi-off-key", "name": "off", "enabled": False, "permissions": ["live"]},
        {"key": "openapi-ip-key", "name": "ip", "allow_ips": ["10.0.0.0/8"], "permissions": ["live"]},
        {"key": "openapi-origin-key", "name": "origin", "allow_origins": ["https://desk.example.com"],
         "permissions": ["live"]},
    ]
}
WS_HEADERS = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}

# Every operation of the document, as a request that passes the route's own
# parameter checks: (method, path and query, body). Stream handshakes are
# plain GETs here (refused before the upgrade, or 426 after it); /pt-sse,
# which a plain GET opens, has a bad conflate_ms= so that it is refused
# after every other check (400) instead of opening an endless stream.
KEYED = [("GET", "/v1/sports", None), ("GET", "/v1/live", None), ("GET", "/v1/prematch", None),
         ("GET", "/v1/event?id=1", None), ("GET", "/v1/odds?ids=1", None), ("GET", "/v1/odds/history?id=1", None),
         ("POST", "/v1/odds", '{"market": 1001, "events": ["1"]}'), ("GET", "/v1/scores", None),
         ("GET", "/v1/settlements?ids=1", None), ("GET", "/v1/markets", None), ("GET", "/v1/market-groups", None),
         ("GET", "/v1/status", None), ("GET", "/metrics", None), ("GET", "/v1/stream?id=1", None),
         ("POST", "/rdstn", "[]"), ("GET", "/widget-events", None), ("GET", "/widget-data?event_id=1", None),
         ("GET", "/widget?event_id=1", None), ("GET", "/ws", None), ("GET", "/pt-ws", None),
         ("GET", "/pt-sse?conflate_ms=x", None)]
STREAMS = ("/ws", "/pt-ws", "/pt-sse")
PUBLIC = [("GET", "/stream/play", None), ("GET", "/docs/explore?event=1", None), ("GET", "/docs/settlement", None),
          ("HEAD", "/docs/settlement", None), ("GET", "/healthz", None), ("GET", "/openapi.json", None),
          ("HEAD", "/openapi.json", None), ("GET", "/js/oddsclient.mjs", None), ("HEAD", "/js/oddsclient.mjs", None)]

# (label of the route as openapi_check names it, status) of every answer checked.
SEEN = set()


def checked(method, path, status, headers, body):
    """openapi_check.check, remembering which route and status it covered."""
    oc.check(method, path, status, headers, body, DOC)
    label, _ = oc.load(DOC).response_for(method, path, status)
    SEEN.add((label, status))


def call(port, path, key=FULL, method="GET", headers=None, body=None, status=None):
    """One request, its answer checked against the document; returns
    (status, headers, parsed JSON or the raw body)."""
    r, data = h.request(port, path, key, method, headers, body)
    hdrs = r.getheaders()
    checked(method, path, r.status, hdrs, data)
    if status is not None:
        assert r.status == status, f"{method} {path}: {r.status} (wanted {status}): {data[:300]!r}"
    ctype = r.getheader("Content-Type") or ""
    if data and "gzip" in (r.getheader("Content-Encoding") or ""):
        data = gzip.decompress(data)
    return r.status, dict(hdrs), (json.loads(data) if data and ctype.startswith("application/json") else data)


def raw(port, data, timeout=5):
    """Sends bytes as they are; returns (status, [(name, value)], body) of
    the first answer (its head and Content-Length body; a 101 has none)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in out and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        head, _, body = out.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = [tuple(l.split(": ", 1)) for l in lines[1:]]
        n = int({k.lower(): v for k, v in hdrs}.get("content-length", "0"))
        while len(body) < n and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return status, hdrs, body[:n]
    finally:
        s.close()


def sse_open(port, data, until=b"", timeout=5):
    """Sends a /pt-sse request; returns (status, [(name, value)], the bytes
    of the stream read after the head, at least up to `until` and the end
    of its event when given). The stream never ends: the socket is closed."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head, sep, body = out.partition(b"\r\n\r\n")
            if sep and (not until or (until in body and b"\n\n" in body[body.index(until):])):
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        head, _, body = out.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        return int(lines[0].split()[1]), [tuple(l.split(": ", 1)) for l in lines[1:]], body
    finally:
        s.close()


def raw_checked(port, data, method, path, status):
    st, hdrs, body = raw(port, data)
    assert st == status, f"{method} {path}: {st} (wanted {status}): {body[:300]!r}"
    checked(method, path, st, hdrs, body)
    return hdrs, body


def lint(path):
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "@apidevtools", "swagger-parser")):
        raise AssertionError("swagger-parser is not installed: run scripts/install-deps.sh (npm ci in tests/e2e/node)")
    return subprocess.run(["node", os.path.join(NODE_DIR, "openapi_lint.js"), path], capture_output=True, text=True,
                          timeout=120)


class Document(unittest.TestCase):
    def test_document_is_valid_openapi_3_1(self):
        p = lint(DOC)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"^openapi: ok oddsrelay v1, \d+ paths")

    def test_validator_refuses_a_broken_document(self):
        with open(DOC) as f:
            text = f.read()
        tmp = tempfile.mkdtemp(prefix="oddsrelay-openapi-")
        try:
            broken = {
                # a response without its required description
                "no-description": text.replace("description: the sports held, by id\n", "", 1),
                # a $ref to nothing
                "dangling-ref": text.replace("$ref: '#/components/schemas/EventObject'}",
                                             "$ref: '#/components/schemas/NoSuchThing'}", 1),
                # not YAML
                "bad-yaml": text.replace("paths:\n", "paths:\n  - [\n", 1),
            }
            for name, doc in broken.items():
                self.assertNotEqual(doc, text, name)
                path = os.path.join(tmp, name + ".yaml")
                with open(path, "w") as f:
                    f.write(doc)
                p = lint(path)
                self.assertEqual(p.returncode, 1, f"{name}: {p.stdout}{p.stderr}")
                self.assertIn("is not valid", p.stdout, name)
        finally:
            shutil.rmtree(tmp)

    def test_every_router_route_is_in_the_document(self):
        with open(os.path.join(HERE, "..", "..", "rest", "router.cc")) as f:
            router = f.read()
        routes = re.findall(r'^\s*\{"(/[^"]*)", "([A-Z, ]+)"', router, re.M)
        self.assertGreater(len(routes), 20)
        paths = oc.load(DOC).doc["paths"]
        for path, methods in routes:
            self.assertIn(path, paths, f"{path} of rest/router.cc is not in docs/openapi.yaml")
            for m in methods.split(", "):
                if m != "OPTIONS":  # the preflight, x-oddsrelay-any-path
                    self.assertIn(m.lower(), paths[path], f"{m} {path}")
        self.assertEqual(sorted(paths), sorted(p for p, _ in routes), "a path the router does not have")


class Live(unittest.TestCase):
    """The simulator's live state through one server."""

    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("openapi")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "sim:seed=3,events=80", "--keys", cls.keys, "--handshake-rate", "1",
                           "--stream-ttl", "1", "--rate-window", "3600", "--progress", "0")
        cls.port = cls.srv.port
        cls.srv.wait_for(r"serving http://")

        def live_soccer():  # a live event with odds, a scoreboard and stats
            d = json.loads(h.request(cls.port, "/v1/live?sport=1", FULL)[1])["data"]
            for id_ in d:
                odds = json.loads(h.request(cls.port, "/v1/odds?ids=" + id_, FULL)[1])["data"]
                if odds.get(id_):
                    return id_
            return None
        cls.live = h.wait_until(live_soccer, 30, "a live soccer event with odds")
        pre = json.loads(h.request(cls.port, "/v1/prematch?sport=1", FULL)[1])["data"]
        cls.prematch = next(iter(pre))
        # A live event of a sport without stream coverage (--stream-sports 1,2,5).
        live_all = json.loads(h.request(cls.port, "/v1/live", FULL)[1])["data"]
        cls.uncovered = next(next(iter(evs)) for sp, evs in live_all.items() if sp not in ("1", "2", "5") and evs)

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def get(self, path, status=200, **kw):
        return call(self.port, path, status=status, **kw)[2]

    def test_success_answers_of_every_keyed_route(self):
        ev, pre = self.live, self.prematch
        self.assertTrue(self.get("/v1/sports")["data"])
        for path in ["/v1/live", "/v1/live?sport=1", "/v1/live?sport=999", "/v1/prematch", "/v1/prematch?sport=1&limit=2"]:
            self.assertTrue(self.get(path)["success"])
        self.assertTrue(self.get(f"/v1/event?id={ev}")["data"]["live"])
        self.assertFalse(self.get(f"/v1/event?id={pre}&sport=1")["data"]["live"])
        d = self.get(f"/v1/odds?ids={ev},{pre},bogus,424242")["data"]
        self.assertIn(ev, d)
        hist = self.get(f"/v1/odds/history?id={ev}")
        self.assertEqual(hist["id"], ev)
        self.assertTrue(self.get(f"/v1/odds/history?id={pre}&interval=1m&from=0")["success"])
        self.assertTrue(call(self.port, f"/v1/odds/history?id={ev}&format=csv", status=200))
        at = self.get(f"/v1/odds?ids={ev},{pre},bogus&at={hist['to']}")
        self.assertTrue(at["seq"] > 0 and at["epoch"])
        self.assertTrue(self.get(f"/v1/odds?ids={ev}", headers={"Accept-Encoding": "gzip"})["data"][ev])
        post = call(self.port, "/v1/odds", method="POST", status=200,
                    body=json.dumps({"sport": 1, "market": 1001, "events": [ev, pre]}))[2]
        self.assertIn(ev, post)
        self.get("/v1/scores")
        self.assertIn(ev, self.get(f"/v1/scores?ids={ev}&sport=1")["data"])
        s = self.get(f"/v1/settlements?ids={ev},{pre},bogus&include_inplay=1&lang=de")
        self.assertEqual(s["not_found"], ["bogus"])
        self.get(f"/v1/settlements?event_id={ev}")
        self.get(f"/v1/settlements?fixture_id={pre}")
        for q in ["", "?sport=1", "?sport=1&nested=1&lang=de", "?sport=5&groups=1", "?nested=1&lang=xx", "?sport=999"]:
            self.assertIn("markets", self.get("/v1/markets" + q, headers={"Accept-Encoding": "gzip"})["data"])
        for q in ["", "?sport=1", "?lang=fr", "?sport=2&lang=de", "?sport=999"]:
            self.get("/v1/market-groups" + q)
        st = self.get("/v1/status")
        self.assertIsNone(st["log"])
        self.assertIsNone(st["bus"])
        self.assertIn(b"oddsrelay_ready", self.get("/metrics"))
        self.assertTrue(self.get("/widget-events")["data"])
        wd = self.get(f"/widget-data?event_id={ev}")["data"]
        self.assertEqual(wd["settings"]["theme"], "light")
        self.assertIn(b"<!doctype html>", self.get(f"/widget?event_id={ev}&api_key={FULL}", key=None))
        rd = call(self.port, "/rdstn", method="POST", status=200, body=json.dumps(
            [["g", ["bm1_el1", "bm1_ep1", f"bm1_{ev}", "bm1_424242", "nonsense"]], ["gf", [f"bm1_{ev}"]],
             ["ga", ["bm1_el1", "bm1_ep1", f"bm1_{pre}"]], ["go", ["bm1_sl@0", f"bm1_{ev}@99999999999999", "bm1_el1"]],
             ["sl"], ["sp", []]]))[2]
        self.assertEqual(len(rd), 5 + 1 + 3 + 3 + 2)

    def test_public_routes(self):
        self.assertEqual(self.get("/healthz", key=None)["status"], "ok")
        self.assertIn(b"Settlement", self.get("/docs/settlement", key=None))
        call(self.port, "/docs/settlement", key=None, method="HEAD", status=200)
        # The contract it serves is docs/openapi.yaml, as JSON, needing no key.
        import yaml
        with open(DOC) as f:
            self.assertEqual(self.get("/openapi.json", key=None), yaml.safe_load(f))
        call(self.port, "/openapi.json", key=None, method="HEAD", status=200)
        # The pages' stream module: the file as built in, needing no key.
        with open(os.path.join(HERE, "..", "..", "rest", "pages", "oddsclient.mjs"), "rb") as f:
            self.assertEqual(self.get("/js/oddsclient.mjs", key=None), f.read())
        call(self.port, "/js/oddsclient.mjs", key=None, method="HEAD", status=200)
        page = self.get(f"/docs/explore?event={self.live}", key=None)
        self.assertIn(b"explorer-", page)
        self.assertEqual(self.get("/docs/explore", 400, key=None), {"error": "Missing event parameter"})
        # The explorer's demo key: from its own page, and from elsewhere (403).
        demo = re.search(rb"explorer-[0-9a-f]{32}", page).group(0).decode()
        origin = {"Origin": f"http://127.0.0.1:{self.port}"}
        self.get("/v1/sports", key=demo, headers=origin)
        self.assertEqual(self.get("/v1/sports", 403, key=demo)["error"],
                         "This demo key only works from the explorer page of this server")

    def test_stream_addon_signed_url(self):
        url = self.get(f"/v1/stream?id={self.live}")["data"]["url"]
        path = url[url.index("/stream/play"):]
        self.assertEqual(self.get(path, key=None)["event_id"], self.live)
        self.assertEqual(self.get(path + "0", 403, key=None), {"error": "Invalid stream signature"})
        self.assertEqual(self.get("/stream/play?event=x", 403, key=None), {"error": "Invalid stream signature"})
        time.sleep(2.2)  # --stream-ttl 1
        self.assertEqual(self.get(path, 403, key=None), {"error": "Stream URL expired"})
        self.assertEqual(self.get("/v1/stream", 400), {"error": "Missing id parameter"})
        self.assertEqual(self.get("/v1/stream?id=424242", 404), {"error": "Event not found"})
        self.assertEqual(self.get(f"/v1/stream?id={self.uncovered}", 404),
                         {"error": "No stream coverage for this event"})

    def test_parameter_errors(self):
        cases = {
            "/v1/live?sport=0": (400, "Invalid sport parameter: expected a sport id"),
            "/v1/prematch?limit=0": (400, "Invalid limit parameter: expected an integer from 1 to 10000"),
            "/v1/event": (400, "Missing id parameter"),
            "/v1/event?id=424242": (404, "Event not found"),
            f"/v1/event?id={self.live}&sport=2": (404, "Event not found"),
            "/v1/odds": (400, "Missing ids parameter"),
            "/v1/odds?ids=1&at=x": (400, "Invalid at parameter: expected unix ms"),
            "/v1/odds/history": (400, "Missing id parameter"),
            "/v1/odds/history?id=424242": (404, "Event not found"),
            f"/v1/odds/history?id={self.live}&interval=2m": (
                400, "Invalid interval parameter: expected raw, 1s, 10s, 1m, 5m, 15m or 1h"),
            "/v1/odds?ids=" + ",".join(str(i) for i in range(1, 102)): (400, "Too many ids: at most 100 per request"),
            "/v1/scores?sport=x": (400, "Invalid sport parameter: expected a sport id"),
            "/v1/settlements": (400, "Missing ids parameter"),
            "/v1/settlements?ids=1&include_inplay=2": (400, "Invalid include_inplay parameter: expected 0 or 1"),
            "/v1/markets?groups=1": (400, "groups=1 needs a sport parameter: groups are sport-scoped"),
            "/v1/markets?nested=x": (400, "Invalid nested parameter: expected 0 or 1"),
            "/v1/market-groups?sport=-1": (400, "Invalid sport parameter: expected a sport id"),
            "/widget-data": (400, "Missing event_id parameter"),
            "/widget-data?event_id=424242": (404, "Event not found"),
            "/widget": (400, "Missing event_id parameter"),
        }
        for path, (status, error) in cases.items():
            self.assertEqual(self.get(path, status), {"error": error}, path)
        bad_post = '{"sport": 1, "market": "x", "events": []}'
        self.assertTrue(self.get("/v1/odds", 400, method="POST", body=bad_post)["error"].startswith("Invalid body"))
        self.assertEqual(self.get("/v1/odds", 400, method="POST", body='{"market": 1001, "events": []}'),
                         {"error": "Missing ids parameter"})
        self.assertTrue(self.get("/rdstn", 400, method="POST", body="x")["error"].startswith("Invalid body"))
        self.assertTrue(self.get("/rdstn", 400, method="POST", body='[["zz", []]]')["error"].startswith("Invalid"))

    def test_refusals_401_403(self):
        for method, path, body in KEYED:
            self.assertEqual(self.get(path, 401, key=None, method=method, body=body),
                             {"error": "Invalid or disabled API key"}, path)
            self.assertEqual(self.get(path, 401, key="openapi-off-key", method=method, body=body),
                             {"error": "Invalid or disabled API key"}, path)
            self.assertEqual(self.get(path, 403, key="openapi-ip-key", method=method, body=body),
                             {"error": "Source address not allowed for this API key"}, path)
        self.assertEqual(self.get("/v1/live", 403, key="openapi-origin-key", headers={"Origin": "https://evil.test"}),
                         {"error": "Origin not allowed for this API key"})
        none = "openapi-none-key"
        for path, perm in [("/v1/live", "'live'"), ("/v1/prematch", "'prematch'"), ("/v1/event?id=1", "'live' or 'prematch'"),
                           ("/v1/odds?ids=1", "'odds'"), ("/v1/odds/history?id=1", "'odds'"), ("/v1/scores", "'scores'"), ("/v1/settlements?ids=1", "'scores'"),
                           ("/v1/markets", "'odds'"), ("/v1/market-groups", "'odds'"), ("/v1/stream?id=1", "'stream'"),
                           ("/widget-events", "'widget'"), ("/widget-data?event_id=1", "'widget'"),
                           ("/widget?event_id=1", "'widget'"), ("/ws", "'live'"),
                           ("/pt-ws", "'live' or 'prematch' or 'odds'"),
                           ("/pt-sse", "'live' or 'prematch' or 'odds'")]:
            self.assertEqual(self.get(path, 403, key=none), {"error": f"API key lacks the {perm} permission"}, path)
        self.assertEqual(self.get("/v1/odds", 403, key=none, method="POST", body="{}")["error"],
                         "API key lacks the 'odds' permission")
        self.assertEqual(self.get("/rdstn", 403, key=none, method="POST", body="[]")["error"],
                         "API key lacks the 'live' or 'prematch' permission")
        for path in ["/v1/sports", "/v1/status", "/metrics"]:  # counts only: any valid key
            self.get(path, key=none)

    def test_conditional_requests_304(self):
        for path in [f"/v1/odds?ids={self.live}", "/v1/markets?sport=1", "/v1/market-groups?sport=1"]:
            # The live event's odds move with the feed: a record between the
            # two requests changes the tag (a 200), so the pair is tried
            # again; an unchanged pair must answer 304.
            for _ in range(20):
                _, hdrs, _ = call(self.port, path, status=200)
                etag = {k.lower(): v for k, v in hdrs.items()}["etag"]
                st, hdrs, _ = call(self.port, path, headers={"If-None-Match": etag})
                if st == 304 or {k.lower(): v for k, v in hdrs.items()}.get("etag") == etag:
                    break
            self.assertEqual(st, 304, (path, etag, hdrs))
            call(self.port, path, headers={"If-None-Match": "*"}, status=304)
            call(self.port, path, headers={"If-None-Match": 'W/"0000000000000000"'}, status=200)

    def test_rate_limit_headers_and_429(self):
        """The limited key's window (--rate-window 3600, aligned to the clock)
        used up, then every REST route answers 429: done at least 5 s before
        the window ends, so that no route falls into a fresh one."""
        for _ in range(20):
            st, hdrs, body = call(self.port, "/v1/sports", key=LIMITED)
            low = {k.lower(): v for k, v in hdrs.items()}
            self.assertEqual(low["x-ratelimit-limit"], "4")
            if st != 429:
                continue
            self.assertEqual(body, {"error": "Rate limit exceeded", "limit": 4, "window": "3600s",
                                    "retry_after": int(low["retry-after"])})
            if int(low["retry-after"]) >= 5:
                break
            time.sleep(int(low["retry-after"]) + 0.5)  # the window is about to end: use the next one
        else:
            self.fail("no 429 after 20 requests of a key limited to 4")
        for method, path, body in KEYED:
            if path.split("?")[0] not in STREAMS:  # streams have their own bound (test_stream_handshakes)
                self.assertEqual(self.get(path, 429, key=LIMITED, method=method, body=body)["error"],
                                 "Rate limit exceeded", path)

    def test_any_path_preflight_404_405(self):
        self.assertEqual(self.get("/v1/nope", 404), {"error": "Not found"})
        self.assertEqual(self.get("/nope", 404, key=None, method="DELETE"), {"error": "Not found"})
        for path in ["/v1/odds", "/v1/sports", "/widget", "/nope"]:
            call(self.port, path, key=None, method="OPTIONS", status=204)
        for method, path in [("POST", "/v1/sports"), ("GET", "/rdstn"), ("DELETE", "/v1/odds"), ("POST", "/healthz"),
                             ("OPTIONS", "/ws"), ("OPTIONS", "/pt-ws"), ("OPTIONS", "/pt-sse"), ("POST", "/ws"),
                             ("POST", "/pt-sse"), ("PUT", "/docs/settlement")]:
            self.assertEqual(self.get(path, 405, method=method, body="" if method in ("POST", "PUT") else None),
                             {"error": "Method not allowed"}, f"{method} {path}")

    def test_stream_handshakes(self):
        def hs(path, key="api_key=" + FULL, extra=None, drop=()):
            hdrs = {k: v for k, v in {**WS_HEADERS, **(extra or {})}.items() if k not in drop}
            sep = "&" if "?" in path else "?"
            return ("GET " + path + (sep + key if key else "") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                    "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n").encode()
        def sse(path, key="api_key=" + FULL, extra=None):  # a plain GET, as curl -N or EventSource sends it
            sep = "&" if "?" in path else "?"
            return ("GET " + path + (sep + key if key else "") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                    "Accept: text/event-stream\r\n" + "".join(f"{k}: {v}\r\n" for k, v in (extra or {}).items()) +
                    "\r\n").encode()

        p = self.port
        for path in ["/ws", "/pt-ws", "/pt-ws?protocol=v2&sports=1,2",
                     f"/pt-ws?events={self.live},s7-101.424242&markets=1001,1002&conflate_ms=250",
                     "/pt-ws?sports=&events=&markets=&conflate_ms=0"]:
            hdrs, _ = raw_checked(p, hs(path), "GET", path, 101)
        bad = {"protocol=v1": "Unsupported protocol parameter: use protocol=v2",
               "sports=x": "Invalid sports parameter: expected sport ids separated by commas",
               "events=1,,2": "Invalid events parameter: expected at most 100 event ids separated by commas",
               "events=" + ",".join(str(i) for i in range(1, 102)):
                   "Invalid events parameter: expected at most 100 event ids separated by commas",
               "markets=0": "Invalid markets parameter: expected at most 64 market ids separated by commas",
               "markets=1001,x": "Invalid markets parameter: expected at most 64 market ids separated by commas",
               "conflate_ms=60001": "Invalid conflate_ms parameter: expected milliseconds from 0 to 60000",
               "conflate_ms=": "Invalid conflate_ms parameter: expected milliseconds from 0 to 60000",
               "conflate_ms=-1": "Invalid conflate_ms parameter: expected milliseconds from 0 to 60000"}
        for query, error in bad.items():
            for path, req in [("/pt-ws", hs), ("/pt-sse", sse)]:
                _, body = raw_checked(p, req(f"{path}?{query}"), "GET", path, 400)
                self.assertEqual(json.loads(body), {"error": error}, f"{path}?{query}")
        # The filters come after the upgrade headers on /pt-ws.
        raw_checked(p, hs("/pt-ws?conflate_ms=x", drop=("Upgrade",)), "GET", "/pt-ws", 426)

        # /pt-sse: a plain GET opens it; the 200 is checked from its head
        # (the body never ends), the stream's start read apart.
        for path in ["/pt-sse", "/pt-sse?protocol=v2&sports=1,2",
                     f"/pt-sse?events={self.live}&markets=1001&conflate_ms=250&resume=nope"]:
            st, hdrs, _ = sse_open(p, sse(path))
            self.assertEqual(st, 200, path)
            checked("GET", path, st, hdrs, b"")
            self.assertEqual(dict(hdrs)["Content-Type"], "text/event-stream", path)
        st, hdrs, body = sse_open(p, sse("/pt-sse", extra={"Last-Event-ID": "nope:1"}), until=b"data: INFO")
        checked("GET", "/pt-sse", st, hdrs, body)  # what was read of the stream: a string too
        self.assertEqual(st, 200)
        self.assertTrue(body.startswith(b"retry: 1000\n\n"), body[:200])
        m = re.search(rb"id: ([^\n]+):(\d+)\ndata: INFO\x1fPUB\x1f(\{[^\n]*\})\n\n", body)
        self.assertIsNotNone(m, body[:500])
        ready = json.loads(m.group(3))
        self.assertEqual((ready["ready"], ready["resumed"], ready["seq"]), (True, False, int(m.group(2))))
        # A WebSocket handshake sent to /pt-sse is no upgrade: the same 200.
        st, hdrs, _ = sse_open(p, hs("/pt-sse"))
        self.assertEqual(st, 200)
        checked("GET", "/pt-sse", st, hdrs, b"")
        _, body = raw_checked(p, sse("/pt-sse", key=None), "GET", "/pt-sse", 401)
        self.assertEqual(json.loads(body), {"error": "Invalid or disabled API key"})
        raw_checked(p, sse("/pt-sse", key="api_key=openapi-off-key"), "GET", "/pt-sse", 401)
        _, body = raw_checked(p, sse("/pt-sse", key="api_key=openapi-none-key"), "GET", "/pt-sse", 403)
        self.assertEqual(json.loads(body), {"error": "API key lacks the 'live' or 'prematch' or 'odds' permission"})
        raw_checked(p, sse("/pt-sse", key="api_key=openapi-ip-key"), "GET", "/pt-sse", 403)
        raw_checked(p, hs("/ws", extra={"Connection": "keep-alive"}), "GET", "/ws", 400)
        raw_checked(p, hs("/ws", extra={"Sec-WebSocket-Key": "short"}), "GET", "/ws", 400)
        raw_checked(p, hs("/ws", drop=("Upgrade",)), "GET", "/ws", 426)
        raw_checked(p, hs("/pt-ws", extra={"Sec-WebSocket-Version": "8"}), "GET", "/pt-ws", 426)
        raw_checked(p, hs("/ws", key=None), "GET", "/ws", 401)
        raw_checked(p, hs("/pt-ws", key="api_key=openapi-none-key"), "GET", "/pt-ws", 403)
        raw_checked(p, hs("/ws", key="api_key=openapi-none-key"), "GET", "/ws", 403)
        # One handshake a minute for one slot: the first passes the bucket
        # (and is refused for its missing Upgrade), the next is a 429.
        raw_checked(p, hs("/ws", key="api_key=" + STREAMER, drop=("Upgrade",)), "GET", "/ws", 426)
        for path in ["/pt-ws", "/ws"]:
            hdrs, body = raw_checked(p, hs(path, key="api_key=" + STREAMER), "GET", path, 429)
            self.assertEqual(json.loads(body)["error"], "Too many stream handshakes for this API key")
        # /pt-sse shares the bucket: refused before it would open.
        hdrs, body = raw_checked(p, sse("/pt-sse", key="api_key=" + STREAMER), "GET", "/pt-sse", 429)
        self.assertEqual(json.loads(body)["error"], "Too many stream handshakes for this API key")
        self.assertEqual(dict(hdrs)["Retry-After"], str(json.loads(body)["retry_after"]))

    def test_protocol_errors(self):
        p = self.port
        get = b"GET /v1/sports HTTP/1.1\r\nHost: x\r\nX-API-Key: " + FULL.encode() + b"\r\n"
        raw_checked(p, b"GET /v1/sports HTTP/2.0\r\nHost: x\r\n\r\n", "GET", "/v1/sports", 505)
        for method, path, _ in KEYED + PUBLIC:  # no Host header: 400 on any route
            raw_checked(p, f"{method} {path} HTTP/1.1\r\n\r\n".encode(), method, path, 400)
        raw_checked(p, get + b"bad header\r\n\r\n", "GET", "/v1/sports", 400)
        raw_checked(p, get + b"X-Big: " + b"a" * 17000 + b"\r\n\r\n", "GET", "/v1/sports", 431)
        raw_checked(p, get + b"".join(b"X-H%d: 1\r\n" % i for i in range(101)) + b"\r\n", "GET", "/v1/sports", 431)
        raw_checked(p, b"GET /v1/odds?ids=" + b"1," * 4500 + b" HTTP/1.1\r\nHost: x\r\n\r\n", "GET", "/v1/odds", 414)
        raw_checked(p, b"POST /v1/odds HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "POST", "/v1/odds",
                    411)
        raw_checked(p, b"POST /rdstn HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", "POST", "/rdstn", 413)
        raw_checked(p, b"PROXY TCP4 192.0.2.1 192.0.2.2 1 2\r\n" + get + b"\r\n", "GET", "/v1/sports", 400)
        # Before the route: the same on an unknown path and for a method the path does not take.
        raw_checked(p, b"GET /nope HTTP/2.0\r\nHost: x\r\n\r\n", "GET", "/nope", 505)
        raw_checked(p, b"DELETE /v1/sports HTTP/1.1\r\n\r\n", "DELETE", "/v1/sports", 400)
        raw_checked(p, b"PUT /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", "PUT", "/nope", 413)

    def test_tampered_answers_fail_the_check(self):
        ev = self.live
        _, hdrs, odds = call(self.port, f"/v1/odds?ids={ev}", status=200)
        market = next(iter(odds["data"][ev]))
        line = next(iter(odds["data"][ev][market]))
        outcome = next(k for k in odds["data"][ev][market][line] if k.isdigit())
        path = f"/v1/odds?ids={ev}"

        def fails(path, status, hdrs, body, pointer, method="GET"):
            data = json.dumps(body).encode() if not isinstance(body, bytes) else body
            with self.assertRaises(AssertionError) as cm:
                oc.check(method, path, status, hdrs, data, DOC)
            msg = str(cm.exception)
            self.assertIn(pointer, msg)
            self.assertIn(f"-> {status}", msg)
            return msg

        def tampered(doc, fn):
            d = copy.deepcopy(doc)
            fn(d)
            return d

        oc.check("GET", path, 200, hdrs, json.dumps(odds).encode(), DOC)  # untouched: passes
        at = f"/data/{ev}/{market}/{line}"
        msg = fails(path, 200, hdrs, tampered(odds, lambda d: d["data"][ev][market][line].update(
            last_seen=d["data"][ev][market][line].pop("ls"))), at)
        self.assertIn("GET /v1/odds", msg)
        fails(path, 200, hdrs, tampered(odds, lambda d: d["data"][ev][market][line][outcome].__setitem__(0, "1.85")),
              f"{at}/{outcome}/0")
        fails(path, 200, hdrs, tampered(odds, lambda d: d["data"][ev][market][line][outcome].append(0)),
              f"{at}/{outcome}")
        fails(path, 200, hdrs, tampered(odds, lambda d: d.update(count=1)), "body at /")
        fails(path, 200, hdrs, tampered(odds, lambda d: d["data"][ev][market][line].update(foo=1)), at)
        fails(path, 200, [(k, v) for k, v in hdrs.items() if k.lower() != "etag"], odds, "required header ETag")

        _, hdrs, st = call(self.port, "/v1/status", status=200)
        fails("/v1/status", 200, hdrs, tampered(st, lambda d: d["relay"].update(new_counter=1)), "/relay")
        fails("/v1/status", 200, hdrs, tampered(st, lambda d: d["events"].update(held=str(d["events"]["held"]))),
              "/events/held")
        fails("/v1/status", 200, hdrs, tampered(st, lambda d: d.update(uptime_s=d.pop("uptime"))), "body at /")

        _, hdrs, ev_ = call(self.port, f"/v1/event?id={ev}", status=200)
        fails("/v1/event", 200, hdrs, tampered(ev_, lambda d: d["data"].update(home=d["data"].pop("h"))), "/data")
        fails("/v1/event", 200, hdrs, tampered(ev_, lambda d: d["data"].update(live=1)), "/data/live")
        fails("/v1/event", 200, hdrs, tampered(ev_, lambda d: d["data"]["map"].update(bogus={"p": 0})), "/data/map")

        _, hdrs, sc = call(self.port, f"/v1/scores?ids={ev}", status=200)
        fails("/v1/scores", 200, hdrs, tampered(sc, lambda d: d["data"][ev].update(status="running")),
              f"/data/{ev}/status")
        fails("/v1/scores", 200, hdrs, tampered(sc, lambda d: d["data"].update({"not an id": d["data"][ev]})),
              "/data")

        _, hdrs, se = call(self.port, f"/v1/settlements?ids={ev}", status=200)
        m = next(iter(se["data"][ev]["markets"]))
        fails("/v1/settlements", 200, hdrs, tampered(se, lambda d: d["data"][ev]["coverage"].update(covered=-1)),
              f"/data/{ev}/coverage/covered")
        fails("/v1/settlements", 200, hdrs, tampered(se, lambda d: d["data"][ev]["markets"][m].update(
            title=d["data"][ev]["markets"][m].pop("name"))), f"/data/{ev}/markets/{m}")
        fails("/v1/settlements", 200, hdrs, tampered(se, lambda d: d.update(not_found="")), "/not_found")

        _, hdrs, wd = call(self.port, f"/widget-data?event_id={ev}", status=200)
        fails("/widget-data", 200, hdrs, tampered(wd, lambda d: d["data"]["stats"].update(possession=[50, 50])),
              "/data/stats")
        fails("/widget-data", 200, hdrs, tampered(wd, lambda d: d["data"].update(kickoff=str(d["data"]["kickoff"]))),
              "/data/kickoff")

        _, hdrs, err = call(self.port, "/v1/odds", status=400)
        fails("/v1/odds", 400, hdrs, {"error": "Missing ids parameter", "code": 400}, "body at /")
        fails("/v1/odds", 400, hdrs, {"message": "Missing ids parameter"}, "body at /")
        json_hdrs = {"Access-Control-Allow-Origin": "*", "Content-Type": "application/json"}
        fails("/v1/sports", 401, json_hdrs, {"error": "Unauthorized"}, "/error")
        # Undocumented: a status a route does not answer, a body where none is, JSON that is not JSON.
        fails("/v1/sports", 418, hdrs, err, "status not documented")
        fails("/v1/odds", 304, {"Access-Control-Allow-Origin": "*", "ETag": 'W/"0123456789abcdef"',
                                "Cache-Control": "no-cache"}, b"{}", "without a body")
        fails("/v1/sports", 200, {"Access-Control-Allow-Origin": "*", "Content-Type": "application/json"}, b"{nope",
              "not JSON")
        fails("/v1/sports", 200, {"Access-Control-Allow-Origin": "*", "Content-Type": "text/html"}, b"<p>",
              "Content-Type")
        fails("/v1/sports", 405, json_hdrs, {"error": "Method not allowed"},
              "required header Allow", method="DELETE")
        # /pt-sse's head: its headers are the contract (the body is read as it comes).
        sse = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
               "Connection": "close"}
        oc.check("GET", "/pt-sse", 200, sse, b"", DOC)
        oc.check("GET", "/pt-sse", 200, sse, b"retry: 1000\n\n", DOC)
        fails("/pt-sse", 200, {k: v for k, v in sse.items() if k != "X-Accel-Buffering"}, b"",
              "required header X-Accel-Buffering")
        fails("/pt-sse", 200, {**sse, "X-Accel-Buffering": "yes"}, b"", "header X-Accel-Buffering")
        fails("/pt-sse", 200, {**sse, "Content-Type": "application/json"}, b"", "Content-Type")
        fails("/pt-sse", 426, json_hdrs, {"error": "WebSocket upgrade required: send Upgrade: websocket"},
              "status not documented")


class ReplayedFixtures(unittest.TestCase):
    """Fixtures whose contents are known: an ended match with withdrawn
    lines (settlements with a result; /v1/status with the data dir's log)
    and the REST fixture (empty rungs, suspended lines, scorelines, every
    id form, a removed event)."""

    def serve(self, fixture, *extra):
        srv = h.Server("--feed", f"replay:{h.fixture(fixture)},speed=max", "--keys", self.keys, "--progress", "0",
                       *extra)
        srv.wait_for(r"serving http://")
        srv.wait_for(r"replay of .* finished")
        h.wait_until(lambda: json.loads(h.request(srv.port, "/v1/status", FULL)[1])["feed"]["done"], 30,
                     "the replay applied")
        return srv

    def setUp(self):
        self.dir = h.scratch("openapi")
        self.keys = h.write_keys(self.dir, KEYS)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_ended_match_with_withdrawn_lines(self):
        with self.serve("withdrawn_lines.jsonl", "--data-dir", os.path.join(self.dir, "data")) as srv:
            st = call(srv.port, "/v1/status", status=200)[2]
            self.assertEqual(st["log"]["data_dir"], os.path.join(self.dir, "data"))
            s = call(srv.port, "/v1/settlements?ids=s7-101.7001,7001,s7_l101.7001,9", status=200)[2]
            rec = s["data"]["s7-101.7001"]
            self.assertEqual((rec["status"], rec["result"]), ("ended", "completed"))
            lines = [l for m in rec["markets"].values() for l in m["lines"].values()]
            self.assertTrue(any(l.get("withdrawn") for l in lines))
            self.assertEqual(s["not_found"], ["9"])
            call(srv.port, "/v1/settlements?ids=7001&include_inplay=1&lang=it", status=200)
            for path in ["/v1/scores", "/v1/scores?ids=7001", "/v1/odds?ids=7001", "/v1/live", "/v1/prematch",
                         "/v1/sports", "/widget-events"]:
                call(srv.port, path, status=200)
            call(srv.port, "/widget-data?event_id=7001", status=404)  # ended and removed: not listed
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)

    def test_rest_fixture(self):
        with self.serve("rest.jsonl", "--metrics-listen", f"127.0.0.1:{h.free_port()}") as srv:
            # /metrics lives on its own listener: the main one answers 404.
            self.assertEqual(call(srv.port, "/metrics", status=404)[2], {"error": "Not found"})
            odds = call(srv.port, "/v1/odds?ids=5001,s7-6001,s7_l101.5001,s7_p999.5001,424242", status=200)[2]
            self.assertEqual(odds["data"]["s7-101.5001"]["1007"]["s3.5"], {"ls": 1767225600200})  # empty rung
            self.assertEqual(odds["data"]["s7-101.5001"]["1007"]["s2.5"]["s"], 1)
            call(srv.port, "/v1/odds", method="POST", status=200,
                 body=json.dumps({"sport": 1, "market": 1004, "events": ["5001", "s7-6001"]}))
            call(srv.port, "/v1/odds", method="POST", status=200, body=json.dumps({"market": 1080, "events": ["6001"]}))
            for path in ["/v1/scores", "/v1/scores?ids=5001,5009,s7-6001", "/v1/event?id=5001", "/v1/event?id=s7-6001",
                         "/v1/live", "/v1/prematch?sport=1&limit=1", "/v1/settlements?ids=5001,5009,6001",
                         "/widget-events", "/widget-data?event_id=s7-6001", "/v1/sports"]:
                call(srv.port, path, status=200)
            call(srv.port, "/v1/event?id=5009", status=404)  # removed
            call(srv.port, "/rdstn", method="POST", status=200, body=json.dumps(
                [["ga", ["bm1_el1", "bm1_el2", "bm1_5009", "bm1_s7-6001"]], ["g", ["bm1_ep1", "bm1_5009"]], ["sl"], ["sp"]]))


class ConnectionLimits(unittest.TestCase):
    """The connection limits' 429s (docs/api.md "Limits"): with one
    connection per address held on a keyless route, every keyless route
    refuses the next connection's request; with a key's one slot held,
    its next connection is refused."""

    def test_429_past_the_address_and_key_limits(self):
        tmp = tempfile.mkdtemp(prefix="oddsrelay-openapi-")
        try:
            keys = h.write_keys(tmp, {"keys": [{"key": FULL, "name": "one", "http_connections": 1,
                                                 "permissions": ["live"]}]})
            with h.Server("--keys", keys, "--progress", "0", "--http-connections-per-address", "1") as srv:
                srv.wait_for(r"serving http://")
                held = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
                held.request("GET", "/healthz")
                r = held.getresponse()
                r.read()
                self.assertEqual(r.status, 200)
                for method, path, body in PUBLIC:
                    call(srv.port, path, key=None, method=method, body=body, status=429)
                held.request("GET", "/v1/sports", headers={"X-API-Key": FULL})  # moves its slot to the key
                r = held.getresponse()
                r.read()
                self.assertEqual(r.status, 200)
                self.assertEqual(call(srv.port, "/v1/sports", status=429)[2],
                                 {"error": "Too many HTTP connections for this API key"})
                held.close()
                rc, log = srv.stop()
                self.assertEqual(rc, 0, log)
        finally:
            shutil.rmtree(tmp)


class Starting(unittest.TestCase):
    def test_503_while_the_journal_is_replayed(self):
        """A data dir with a long journal (a generated feed applied with
        snapshots off) restarted with --feed none: the listener answers
        before the replay ends, /healthz 503 {"status":"starting"} and every
        other route 503 with Retry-After."""
        tmp = tempfile.mkdtemp(prefix="oddsrelay-openapi-")
        try:
            feed, data = os.path.join(tmp, "feed.jsonl"), os.path.join(tmp, "data")
            at = 1767225600000
            with open(feed, "w") as f:
                f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')
                f.write(json.dumps({"at": at, "op": "event", "id": "s7-101.9001", "event": {
                    "g": 11, "ts": 1767225601, "h": "A", "a": "B", "co": 101, "map": {"s7_l101.9001": {"p": 0}},
                    "s": 0, "live": True, "sport": 1}}) + "\n")
                for i in range(300000):
                    f.write('{"at":%d,"op":"market","id":"s7-101.9001","market":1001,"lines":{"s":{"s":0,"o":'
                            '{"2001":[%d,0],"2002":[330,0],"2003":[360,0]}}}}\n' % (at + 1 + i, 150 + i % 50))
            no_snapshots = ["--snapshot-every", "1000000000", "--snapshot-interval", "1000000", "--snapshot-journal", "0"]
            rc, _, err = h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--progress", "0",
                                "--feed", f"replay:{feed},speed=max", "--data-dir", data, "--exit-after-replay",
                                *no_snapshots], timeout=120)
            self.assertEqual(rc, 0, err)
            os.unlink(feed)
            keys = h.write_keys(tmp, KEYS)
            with h.Server("--feed", "none", "--data-dir", data, "--keys", keys, "--progress", "0",
                          *no_snapshots) as srv:
                seen = set()
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    try:
                        for method, path, body in [("GET", "/healthz", None), ("GET", "/v1/sports", None)] + KEYED + PUBLIC:
                            st = call(srv.port, path, key=FULL, method=method, body=body)[0]
                            seen.add((path, st))
                    except (ConnectionError, OSError):
                        time.sleep(0.005)  # not listening yet
                        continue
                    if ("/v1/sports", 200) in seen:
                        break
                self.assertIn(("/healthz", 503), seen, "no 503 seen while the journal was replayed")
                self.assertIn(("/v1/sports", 503), seen)
                self.assertIn(("/v1/sports", 200), seen)
                rc, log = srv.stop()
                self.assertEqual(rc, 0, log)
        finally:
            shutil.rmtree(tmp)


class ZzCoverage(unittest.TestCase):
    """Runs last (unittest loads a module's classes in name order): every
    operation of the document answered its success status, and every
    status the document lists was provoked on at least one route."""

    def test_zz_every_operation_and_status_was_checked(self):
        if not SEEN:
            self.skipTest("run with the other tests of this file")
        doc = oc.load(DOC).doc
        missing = []
        for path, item in doc["paths"].items():
            for method in ("get", "post", "head"):
                op = item.get(method)
                if not op:
                    continue
                label = f"{method.upper()} {path}"
                for status in op["responses"]:
                    # Not provoked: a handler exception (500). The protocol
                    # errors are the same on every route: provoked on one each.
                    if status in ("500", "411", "413", "414", "431", "505"):
                        continue
                    if not any(l == label and str(s) == status for l, s in SEEN):
                        missing.append(f"{label} {status}")
        # The 503 of a route is seen only when the request fell inside the
        # replay's window (Starting): required on /healthz and /v1/sports,
        # taken where it comes on the others.
        real_gaps = [m for m in missing if not m.endswith(" 503")]
        self.assertEqual(real_gaps, [], "operations or statuses never checked")
        for status in ("200", "101", "204", "304", "400", "401", "403", "404", "405", "411", "413", "414", "426", "429",
                       "431", "503", "505"):
            self.assertTrue(any(str(s) == status for _, s in SEEN), f"no {status} checked")
        print("\n".join(sorted(missing)))
        print(f"\nopenapi coverage: {len(SEEN)} (route, status) pairs checked; "
              f"not provoked on every route: {len(missing)}", flush=True)


if __name__ == "__main__":
    h.main()
