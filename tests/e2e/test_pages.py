"""The pages in headless Chromium: the explorer shows every call for a live
event with its live response and updates its odds as frames arrive; its
demo key is refused from anywhere else, read-only, held to 600 requests
per window and 100 streams; the widget renders two keys' settings and
follows its event on /pt-ws (with /js/oddsclient.mjs) when its key may.
Screenshots go to --screenshots (default: the build dir)."""
import base64
import http.client
import json
import os
import socket
import tempfile
import time
import unittest

import harness as h
from browser import Browser

SHOTS = os.environ.get("ODDSRELAY_SCREENSHOTS")
RATE_WINDOW_S = 10  # --rate-window: short, so the explorer key's limit test waits little for a fresh window
EXPLORER_LIMIT, EXPLORER_STREAMS = 600, 100  # docs/api.md
KEYS = {"keys": [
    {"key": "page-key", "permissions": ["live", "prematch", "odds", "scores", "widget"]},
    {"key": "w-dark", "permissions": ["widget"],
     "widget": {"theme": "dark", "accent": "#e5484d", "border_radius": 16, "font_family": "Georgia, serif",
                "show": {"stats": True, "timeline": True, "pitch": True, "corners": True}}},
    {"key": "w-light", "permissions": ["widget"],
     "widget": {"theme": "light", "accent": "#1f6feb", "border_radius": 2, "show": {"stats": False, "pitch": False}}},
    {"key": "no-widget", "permissions": ["live"]},
]}


class Pages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-pages-")
        cls.shots = SHOTS or os.path.join(h.args().build_dir, "screenshots")
        os.makedirs(cls.shots, exist_ok=True)
        keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "sim:seed=6,events=80,rate=600", "--keys", keys, "--progress", "0",
                           "--rate-window", str(RATE_WINDOW_S))
        cls.srv.wait_for(r"serving http://")
        events = lambda: json.loads(h.request(cls.srv.port, "/widget-events", "page-key")[1])["data"]
        h.wait_until(lambda: any(e["sport"] == 1 for e in events()), 60, "a live soccer event")

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def get(self, path, key="page-key", headers=None):
        r, body = h.request(self.srv.port, path, key, headers=headers)
        return r.status, body

    def live_soccer(self):
        st, body = self.get("/widget-events")
        self.assertEqual(st, 200)
        return [e for e in json.loads(body)["data"] if e["sport"] == 1][0]["event_id"]

    def test_widget_json(self):
        eid = self.live_soccer()
        st, body = self.get(f"/widget-data?event_id={eid}", key="w-dark")
        self.assertEqual(st, 200, body)
        d = json.loads(body)["data"]
        self.assertEqual(d["event_id"], eid)
        for k in ("home", "away", "score", "clock", "period", "match_length", "timeline", "stats", "settings"):
            self.assertIn(k, d)
        self.assertEqual(d["settings"]["theme"], "dark")
        self.assertEqual(self.get(f"/widget-data?event_id={eid}", key="no-widget")[0], 403)
        self.assertEqual(self.get("/widget-data", key="w-dark")[0], 400)
        self.assertEqual(self.get("/widget-data?event_id=987654321", key="w-dark")[0], 404)

    def explorer_key(self):
        st, page = self.get("/docs/explore?event=1", key=None)
        self.assertEqual(st, 200)
        demo = page.decode().split('const KEY = "', 1)[1].split('"', 1)[0]
        self.assertRegex(demo, r"^explorer-[0-9a-f]{32}$")
        return demo, f"http://127.0.0.1:{self.srv.port}"

    def test_explorer_key_is_locked_to_the_page(self):
        demo, own = self.explorer_key()
        locked = (403, {"error": "This demo key only works from the explorer page of this server"})
        ok = lambda st_body: (st_body[0], json.loads(st_body[1])["success"])
        self.assertEqual(ok(self.get("/v1/live", key=demo, headers={"Origin": own})), (200, True))
        self.assertEqual(ok(self.get("/v1/live", key=demo, headers={"Referer": own + "/docs/explore?event=1"})),
                         (200, True))
        other_port = f"http://127.0.0.1:{h.free_port()}"
        for headers in ({}, {"Origin": "http://evil.example"}, {"Origin": other_port},  # no Origin/Referer, others
                        {"Referer": "http://evil.example/docs/explore?event=1"}, {"Origin": "127.0.0.1"},
                        {"Origin": "http://evil.example", "Referer": own + "/docs/explore"}):  # Origin decides
            st, body = self.get("/v1/live", key=demo, headers=headers)
            self.assertEqual((st, json.loads(body)), locked, headers)
        self.assertEqual(self.get("/docs/explore", key=None)[0], 400)

    def test_explorer_key_is_read_only(self):
        demo, own = self.explorer_key()
        eid = self.live_soccer()
        for path in ("/v1/sports", "/v1/live", "/v1/prematch", f"/v1/event?id={eid}", f"/v1/odds?ids={eid}",
                     "/v1/scores", f"/v1/settlements?ids={eid}", "/v1/markets?sport=1", "/v1/status"):
            st, body = self.get(path, key=demo, headers={"Origin": own})
            self.assertEqual(st, 200, (path, body[:200]))
        for path, perm in (("/widget-events", "widget"), (f"/widget-data?event_id={eid}", "widget"),
                           (f"/v1/stream?id={eid}", "stream")):
            st, body = self.get(path, key=demo, headers={"Origin": own})
            self.assertEqual((st, json.loads(body)), (403, {"error": f"API key lacks the '{perm}' permission"}), path)

    def test_explorer_key_holds_100_streams(self):
        demo, own = self.explorer_key()
        relay = lambda: self.get_json("/v1/status")["relay"]
        h.wait_until(lambda: relay()["ws_connections"] + relay()["pt_ws_connections"] == 0, 30, "earlier streams closed")
        streams = []
        try:
            for _ in range(EXPLORER_STREAMS):
                streams.append(self.ws_handshake(demo, own))
                self.assertEqual(streams[-1][1], 101)
            h.wait_until(lambda: relay()["ws_connections"] == EXPLORER_STREAMS, 30, "100 streams open")
            extra, status = self.ws_handshake(demo, own)
            streams.append((extra, status))
            self.assertEqual(status, 101)
            # The refusal text, then a close frame with 1008.
            opcode, text = self.ws_frame(extra)
            self.assertEqual(opcode, 1)
            refusal = json.loads(text)
            self.assertIsInstance(refusal.pop("seq"), int)  # every /ws message carries the log position
            self.assertEqual(refusal, {"error": "Too many WebSocket connections for this API key"})
            opcode, close = self.ws_frame(extra)
            self.assertEqual((opcode, int.from_bytes(close[:2], "big")), (8, 1008))
        finally:
            for s, _ in streams:
                s.close()

    def test_explorer_key_rate_limit(self):
        # 600 requests per window: an attempt counts when it starts in a
        # window no one used yet (earlier tests used the key) and ends in it.
        demo, own = self.explorer_key()
        bucket = lambda t: int(t // RATE_WINDOW_S)
        for _ in range(5):
            now = bucket(time.time())
            h.wait_until(lambda: bucket(time.time()) > now, 3 * RATE_WINDOW_S, "a fresh rate window")
            first = time.time()
            c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
            ok = 0
            while ok <= EXPLORER_LIMIT:
                sent = time.time()
                c.request("GET", "/v1/sports", headers={"X-API-Key": demo, "Origin": own})
                r = c.getresponse()
                body = r.read()
                received = time.time()
                if r.status != 200:
                    break
                ok += 1
            c.close()
            if bucket(first) == bucket(received):
                break
        else:
            self.fail("no attempt fitted in one rate window")
        d = json.loads(body)
        self.assertEqual((ok, r.status), (EXPLORER_LIMIT, 429), d)
        self.assertEqual(d, {"error": "Rate limit exceeded", "limit": EXPLORER_LIMIT, "window": f"{RATE_WINDOW_S}s",
                             "retry_after": d["retry_after"]})
        end = (bucket(received) + 1) * RATE_WINDOW_S
        self.assertTrue(end - int(received) <= d["retry_after"] <= end - int(sent), d)
        self.assertEqual(self.get("/v1/sports", key="page-key")[0], 200)  # other keys are not limited by it

    def get_json(self, path, key="page-key"):
        st, body = self.get(path, key=key)
        self.assertEqual(st, 200, body[:200])
        return json.loads(body)

    @staticmethod
    def ws_frame(sock):
        """One unmasked server frame: (opcode, payload)."""
        def exactly(n):
            data = b""
            while len(data) < n:
                chunk = sock.recv(n - len(data))
                if not chunk:
                    raise AssertionError("stream closed mid-frame")
                data += chunk
            return data
        b0, b1 = exactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(exactly(2), "big")
        elif n == 127:
            n = int.from_bytes(exactly(8), "big")
        return b0 & 0x0F, exactly(n)

    def ws_handshake(self, key, origin):
        """A /ws handshake with an Origin; returns (socket, status). The
        socket is left unread: /ws sends little (a snapshot, then at most
        one update a second)."""
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=30)
        wskey = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /ws?api_key={key} HTTP/1.1\r\nHost: 127.0.0.1:{self.srv.port}\r\nOrigin: {origin}\r\n"
                   f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {wskey}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                raise AssertionError("closed during the handshake: %r" % head)
            head += chunk
        return s, int(head.split(b" ")[1])

    def test_explorer_in_chromium(self):
        eid = self.live_soccer()
        number = eid.rsplit(".", 1)[-1].rsplit("-", 1)[-1]
        url = f"http://127.0.0.1:{self.srv.port}/docs/explore?event={number}"

        async def go(s):
            await s.goto(url)
            await s.wait_for("document.body.dataset.calls === '5'")
            statuses = await s.eval("[...document.querySelectorAll('.call .status')].map(e => e.textContent)")
            calls = await s.eval("[...document.querySelectorAll('.call code, .stream code')].map(e => e.textContent)")
            rows = await s.eval("document.querySelectorAll('#odds tbody tr').length")
            await s.wait_for("Number(document.body.dataset.oddsUpdates) >= 2", timeout=30)
            shot = await s.screenshot(os.path.join(self.shots, "explorer.png"))
            first_price = await s.eval("document.querySelector('#odds tbody tr td.price').textContent.replace(/^[▲▼] /, '')")
            state = await s.eval("document.getElementById('ptws-state').textContent")
            return statuses, calls, rows, shot, first_price, state

        with Browser() as b:
            statuses, calls, rows, shot, price, state = b.run(go)
        self.assertEqual(statuses, ["200"] * 5)
        self.assertTrue(any("/v1/odds?ids=" in c for c in calls))
        self.assertTrue(all("explorer-" not in c for c in calls))  # shown as <API_KEY>
        self.assertTrue(any("/pt-ws?protocol=v2" in c for c in calls))
        self.assertGreater(rows, 0)
        self.assertEqual(state, "connected")
        self.assertRegex(price, r"^\d+\.\d\d$")
        self.assertGreater(os.path.getsize(shot), 10_000)

    def test_widget_two_keys_in_chromium(self):
        eid = self.live_soccer()
        results = {}
        for key in ("w-dark", "w-light"):
            url = f"http://127.0.0.1:{self.srv.port}/widget?event_id={eid}&api_key={key}"

            async def go(s, key=key):
                await s.goto(url)
                await s.wait_for("document.body.dataset.ready === '1'")
                return {
                    "theme": await s.eval("document.body.dataset.theme"),
                    "accent": await s.eval("getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()"),
                    "radius": await s.eval("getComputedStyle(document.getElementById('w')).borderTopLeftRadius"),
                    "stats_hidden": await s.eval("document.getElementById('stats').classList.contains('hidden')"),
                    "pitch_hidden": await s.eval("document.getElementById('pitch').classList.contains('hidden')"),
                    "score": await s.eval("document.getElementById('score').textContent"),
                    "shot": await s.screenshot(os.path.join(self.shots, f"widget-{key}.png")),
                }
            with Browser(420, 640) as b:
                results[key] = b.run(go)
        d, l = results["w-dark"], results["w-light"]
        self.assertEqual((d["theme"], d["accent"], d["radius"]), ("dark", "#e5484d", "16px"))
        self.assertEqual((l["theme"], l["accent"], l["radius"]), ("light", "#1f6feb", "2px"))
        self.assertFalse(d["stats_hidden"] or d["pitch_hidden"])
        self.assertTrue(l["stats_hidden"] and l["pitch_hidden"])
        self.assertRegex(d["score"], r"^\d+ : \d+$")
        def png(path):
            with open(path, "rb") as f:
                return f.read()
        self.assertNotEqual(png(d["shot"]), png(l["shot"]))
        st, body = self.get(f"/widget?event_id={eid}&api_key=no-widget", key=None)
        self.assertEqual((st, json.loads(body)), (403, {"error": "API key lacks the 'widget' permission"}))
        st, body = self.get(f"/widget?event_id={eid}&api_key=w-dark", key=None)
        self.assertEqual((st, body.count(b"<html")), (200, 1))


    def test_widget_follows_its_event_on_the_stream_when_the_key_may(self):
        """The widget's module: with a key that may stream, a change to the
        event object refreshes at once (between the 8 s polls); a widget-only
        key is refused at the handshake, the module gives up after three
        refusals and the polls go on."""
        eid = self.live_soccer()
        out = {}
        for key in ("page-key", "w-dark"):
            url = f"http://127.0.0.1:{self.srv.port}/widget?event_id={eid}&api_key={key}"

            async def go(s, key=key):
                await s.goto(url)
                await s.wait_for("document.body.dataset.ready === '1'")
                if key == "page-key":
                    await s.wait_for("document.body.dataset.stream === 'live'", timeout=30)
                    await s.wait_for("Number(document.body.dataset.pushed) >= 1 && "
                                     "Number(document.body.dataset.refreshes) >= 2", timeout=60)
                else:
                    await s.wait_for("document.body.dataset.stream === 'closed'", timeout=30)
                return await s.eval("({...document.body.dataset, error: document.getElementById('error').textContent})")
            with Browser(420, 640) as b:
                out[key] = b.run(go, timeout=90)
        self.assertEqual((out["page-key"]["stream"], out["page-key"]["error"]), ("live", ""))
        self.assertEqual((out["w-dark"]["stream"], out["w-dark"]["error"], out["w-dark"]["ready"]), ("closed", "", "1"))
        self.assertNotIn("pushed", out["w-dark"])

if __name__ == "__main__":
    h.main()
