"""Webhooks through the real binary and real local HTTP receivers: signed
callbacks with the sandbox flag, per-key event filters, coalesced
odds_update to a slow receiver, retries with backoff to a receiver that
fails its first attempts (nothing critical lost), and a receiver that is
down (critical callbacks retried, then counted as dropped)."""
import hashlib
import hmac
import http.server
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import unittest

import harness as h

T0 = 1767225600000


class Receiver:
    """A local HTTP server that records every callback; `fail_first` answers 500 that many times."""

    def __init__(self, fail_first=0, delay=0.0):
        self.calls, self.attempts = [], 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.attempts += 1
                if delay:
                    time.sleep(delay)
                if outer.attempts <= fail_first:
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.calls.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def events(self):
        return [json.loads(b) for _, b in self.calls]

    def close(self):
        self.srv.shutdown()


def feed_file(path):
    lines = [json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"})]
    at = T0

    def rec(gap=20, **r):
        nonlocal at
        at += gap
        lines.append(json.dumps({"at": at, **r}))
    rec(op="event", id="s7-1.9", event={"c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 1,
                                        "ts": T0 // 1000, "h": "A", "a": "B", "co": 1, "map": {}, "s": 0,
                                        "live": True, "sport": 1})
    for i in range(30):  # a burst of price changes for one event
        rec(op="market", id="s7-1.9", market=1001,
            lines={"s": {"s": 0, "o": {"2001": [200 + i, 0], "2002": [300, 0], "2003": [400, 0]}}})
    # Scores a little apart, so that each is a batch of its own.
    rec(op="score", id="s7-1.9", home=1, away=0, status="live", clock="50:00", gap=300)
    rec(op="score", id="s7-1.9", home=1, away=0, status="ended", gap=300)
    rec(op="score", id="s7-1.9", home=1, away=1, status="ended", gap=300)  # a correction
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Webhooks(unittest.TestCase):
    def test_delivery_signing_filters_retries_and_drops(self):
        d = tempfile.mkdtemp(prefix="oddsrelay-hooks-")
        good, flaky = Receiver(delay=0.15), Receiver(fail_first=2)
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            down_port = s.getsockname()[1]
        keys = {"keys": [
            {"key": "hook-a", "sandbox": True, "permissions": ["live", "odds", "scores"],
             "webhook": {"url": f"http://127.0.0.1:{good.port}/hook", "secret": "sa"}},
            {"key": "hook-b", "permissions": ["live"],
             "webhook": {"url": f"http://127.0.0.1:{flaky.port}/cb", "secret": "sb",
                         "events": ["event_ended", "settlement_changed"]}},
            {"key": "hook-c", "permissions": ["live"],
             "webhook": {"url": f"http://127.0.0.1:{down_port}/x", "secret": "sc", "events": ["event_ended"]}},
        ]}
        kf, feed = os.path.join(d, "keys.json"), os.path.join(d, "feed.jsonl")
        with open(kf, "w") as f:
            json.dump(keys, f)
        feed_file(feed)
        try:
            with h.Server("--feed", f"replay:{feed},speed=1", "--keys", kf, "--progress", "0",
                          "--webhook-retries", "3", "--webhook-timeout", "1000") as srv:
                srv.wait_for(r"replay of .* finished")

                def status():
                    return json.loads(h.request(srv.port, "/v1/status", "hook-a")[1])["webhooks"]

                deadline = time.time() + 30
                while time.time() < deadline:
                    kinds_a = [e["event"] for e in good.events()]
                    kinds_b = [e["event"] for e in flaky.events()]
                    if ("settlement_changed" in kinds_a and kinds_b.count("settlement_changed") == 2
                            and status()["dropped"] >= 1):
                        break
                    time.sleep(0.2)
                st = status()
                rc, log = srv.stop()
                self.assertEqual(rc, 0, log)
        finally:
            good.close()
            flaky.close()
            shutil.rmtree(d)

        # Good receiver: every kind, signed, marked sandbox, odds coalesced.
        a = good.events()
        kinds = [e["event"] for e in a]
        for headers, body in good.calls:
            self.assertEqual(headers["X-Signature"], hmac.new(b"sa", body, hashlib.sha256).hexdigest())
            self.assertEqual(headers["X-Webhook-Event"], json.loads(body)["event"])
        self.assertTrue(all(e["sandbox"] is True and isinstance(e["ts"], int) for e in a))
        self.assertIn("score_update", kinds)
        self.assertEqual(kinds.count("event_ended"), 1, (kinds, st, [e["event"] for e in flaky.events()]))
        finals = [e["data"] for e in a if e["event"] == "settlement_changed"]
        self.assertEqual([f["final_version"] for f in finals], [1, 2])
        self.assertEqual(finals[-1]["score"], {"home": 1, "away": 1})
        odds = [e for e in a if e["event"] == "odds_update"]
        self.assertTrue(1 <= len(odds) < 30, len(odds))  # 30 changes, coalesced while the receiver was slow
        self.assertEqual(odds[-1]["data"]["markets"]["1001"]["s"]["2001"][0], 229)  # the newest price arrives
        self.assertGreater(st["coalesced"], 0)
        # Flaky receiver: its filter, no sandbox flag, nothing critical lost despite 2 failures.
        b = flaky.events()
        self.assertEqual(sorted(e["event"] for e in b), ["event_ended", "settlement_changed", "settlement_changed"])
        self.assertTrue(all("sandbox" not in e for e in b))
        self.assertGreaterEqual(flaky.attempts, 5)
        for headers, body in flaky.calls:
            self.assertEqual(headers["X-Signature"], hmac.new(b"sb", body, hashlib.sha256).hexdigest())
        # Down receiver: event_ended tried 3 times, then dropped and counted.
        self.assertGreaterEqual(st["dropped"], 1)
        self.assertGreaterEqual(st["failed_attempts"], 3 + 2)
        self.assertEqual(st["endpoints"], 3)


if __name__ == "__main__":
    h.main()
