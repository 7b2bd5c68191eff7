"""The push relay in a real browser: headless Chromium's own WebSocket on
/pt-ws (it offers permessage-deflate, so our deflate is checked against a
browser's inflater) and EventSource on /pt-sse, from a page
(tests/e2e/pages/stream_state.html) served on another loopback origin than
the server's. The page applies every frame to a state and shows it; once
the scripted feed has stopped, the state the page shows after its last INFO
is what REST serves at that seq, for every stream shape (unfiltered and
compressed, filtered, conflated; markets and events removed at the end).
EventSource from the other origin works
when the key's allow_origins lists it (the 200 carries
Access-Control-Allow-Origin) and is refused when it does not."""
import functools
import http.client
import http.server
import json
import os
import threading
import urllib.parse

import harness as h
import test_stream_filters as filters
from browser import Browser
from scripted_feed import market_removed
from test_relay_state import KEY, StreamState
from test_stream_sse import scripted_records, scripted_server

PAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pages")
ELSEWHERE = "elsewhere-key"
ANSWER = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
MARKETS = (1001, 1011)


class PageServer:
    """tests/e2e/pages over HTTP on a loopback port of its own: another origin."""

    def __init__(self):
        handler = functools.partial(Quiet, directory=PAGES)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class BrowserStreams(StreamState):
    assert_filtered_rest_state = filters.Filters.assert_filtered_rest_state

    def setUp(self):
        super().setUp()
        self.pages = PageServer()
        self.addCleanup(self.pages.close)
        self.origin = f"http://127.0.0.1:{self.pages.port}"
        perms = ["live", "prematch", "odds"]
        self.keys = h.write_keys(self.dir, {"keys": [
            {"key": KEY, "name": "state", "ws_connections": 20, "permissions": perms,
             "allow_origins": ["https://desk.example.com", self.origin]},
            {"key": ELSEWHERE, "name": "elsewhere", "ws_connections": 20, "permissions": perms,
             "allow_origins": ["https://desk.example.com"]}]})

    def page_url(self, port, key, streams):
        conf = {"server": f"127.0.0.1:{port}", "key": key, "streams": streams}
        # The key in the query too: a new document per key, not a same-page hash change.
        return f"{self.origin}/stream_state.html?{key}#" + urllib.parse.quote(json.dumps(conf))

    def test_chromium_websocket_and_eventsource_end_equal_to_rest(self):
        fifo, records, live, prematch = scripted_records(self, 12000)
        streams = [{"name": "ws", "kind": "ws", "query": ""},
                   {"name": "wsmarkets", "kind": "ws", "query": "markets=1001,1011&conflate_ms=250"},
                   {"name": "sse", "kind": "sse", "query": ""},
                   {"name": "ssemarkets", "kind": "sse", "query": "markets=1001,1011"},
                   {"name": "sseconflated", "kind": "sse", "query": "conflate_ms=250"}]
        names = [s["name"] for s in streams]
        # A third before the page connects (its connect snapshot), the rest after (its deltas).
        with scripted_server(self, fifo, records[:4000]) as srv:
            port = srv.port

            async def go(s):
                await s.goto(self.page_url(port, KEY, streams))
                await s.wait_for(" && ".join(f"streams.{n} && streams.{n}.ready" for n in names), timeout=30)
                for i in range(4000, len(records), 1000):
                    fifo.write(*records[i:i + 1000])
                # Removals: markets (one the filtered streams admit) and whole events.
                last = fifo.write(*(market_removed(k, m) for k in live[:3] for m in (1001, 1004)),
                                  *({"op": "remove", "id": k} for k in (live[3], prematch[0])))
                seq = h.wait_status(port, KEY, lambda st: st["last_update"] == last, "the last record")["seq"]
                # After the last INFO, and rendered: every stream at the engine's seq.
                await s.wait_for(" && ".join(f"document.getElementById('s-{n}').dataset.renderedAt === '{last}'"
                                             for n in names), timeout=60)
                out = {}
                for n in names:
                    out[n] = await s.eval(f"(() => {{ const e = document.getElementById('s-{n}'); return "
                                          f"{{seq: e.dataset.seq, errors: e.dataset.errors, infos: e.dataset.infos, "
                                          f"extensions: e.dataset.extensions, status: streams.{n}.status, "
                                          f"state: e.querySelector('pre').textContent}}; }})()")
                return seq, out

            with Browser() as b:
                seq, out = b.run(go, timeout=240)
            self.assertEqual(h.status(port, KEY)["seq"], seq, "the state moved after the last record")
            self.assertEqual(out["ws"]["extensions"], ANSWER, "Chromium did not negotiate permessage-deflate")
            self.assertEqual(out["wsmarkets"]["extensions"], ANSWER)
            anything = lambda _: True
            in_markets = lambda m: m in MARKETS
            for n in names:
                with self.subTest(stream=n):
                    shown = out[n]
                    self.assertEqual(shown["errors"], "")
                    self.assertEqual(shown["status"], "open")
                    self.assertEqual(int(shown["seq"]), seq)
                    # Deltas came after the ready INFO (the engine may batch a whole write into one group).
                    self.assertGreater(int(shown["infos"]), 1)
                    state = json.loads(shown["state"])
                    odds = {int(k): v for k, v in state["odds"].items()}
                    if "markets" in n:
                        for book in odds.values():
                            self.assertTrue(set(book) <= {str(m) for m in MARKETS}, book.keys())
                        self.assert_filtered_rest_state(port, state["events"], odds, anything, in_markets)
                    else:
                        self.assert_rest_state(port, state["events"], odds)

    def test_eventsource_from_another_origin_needs_the_key_to_allow_it(self):
        with h.Server("--feed", "sim:rate=50", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            streams = [{"name": "sse", "kind": "sse", "query": ""}]

            async def go(s):
                await s.goto(self.page_url(port, KEY, streams))
                await s.wait_for("streams.sse && streams.sse.ready && streams.sse.infos >= 3", timeout=30)
                allowed = await s.eval("streams.sse.status")
                await s.goto(self.page_url(port, ELSEWHERE, streams))
                await s.wait_for("streams.sse && streams.sse.status === 'failed'", timeout=30)
                refused = await s.eval("[streams.sse.frames, streams.sse.source.readyState]")
                return allowed, refused

            with Browser() as b:
                allowed, refused = b.run(go)
            self.assertEqual(allowed, "open")
            self.assertEqual(refused, [0, 2])  # nothing read, CLOSED: no retry after a refusal
            # What the browser was told: the head of each answer, with this origin.
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", f"/pt-sse?api_key={KEY}", headers={"Origin": self.origin})
            r = c.getresponse()
            self.assertEqual((r.status, r.getheader("Access-Control-Allow-Origin")), (200, "*"))
            c.close()
            r, body = h.request(port, f"/pt-sse?api_key={ELSEWHERE}", headers={"Origin": self.origin})
            self.assertEqual((r.status, json.loads(body)["error"]), (403, "Origin not allowed for this API key"))


if __name__ == "__main__":
    h.main()
