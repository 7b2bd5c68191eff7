"""Webhooks through the real binary and real local HTTP receivers.

The feed is a named pipe the test writes to, phase by phase, so the test
decides what each engine batch holds and when it happens; receivers record
every attempt and can hold a request until the test releases it. Nothing
here depends on how fast anything runs: the tests wait for events (with
deadlines that only fail when the event never comes) and then assert
counts, order and content. The only timing assertions are the retry
backoff's lower bounds, which follow from causality (attempt n+1 is sent at
least the backoff after the answer to attempt n).

Proved here: signing, the sandbox flag and per-key event filters; every
field of event_ended / settlement_changed against the feed; coalescing of
odds_update behind a receiver that is blocked; the retry schedule (order,
count, 250 ms doubling lower bounds) and the attempt cap of each callback
type; the per-endpoint queue bound (the oldest non-critical callbacks
dropped, counted, while older critical ones stay); keys-file reload (SIGHUP)
adding, removing and changing endpoints."""
import hashlib
import hmac
import http.server
import json
import os
import select
import shutil
import signal
import socket
import tempfile
import threading
import time
import unittest

import harness as h

T0 = 1767225600000
BLOCK = "block"
PROBE = "probe"  # a key without permissions: /v1/status only
WAIT = 60  # seconds; a deadline only for things that must happen


def until(pred, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {timeout}s")


class Receiver:
    """A local HTTP receiver recording every attempt as (arrival, headers,
    body). `answer(n)` gives the status of the n-th attempt (1-based), or
    BLOCK: the request is held until release(), then answered 204."""

    def __init__(self, answer=lambda n: 204):
        self.calls, self.cond, self.gate = [], threading.Condition(), threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                t = time.monotonic()  # before answering: the lower bound of the next attempt
                with outer.cond:
                    code = answer(len(outer.calls) + 1)
                    outer.calls.append((t, dict(self.headers), body))
                    outer.cond.notify_all()
                if code == BLOCK:
                    outer.gate.wait(2 * WAIT)
                    code = 204
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/hook"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def wait(self, n, what=""):
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.calls) >= n, WAIT):
                raise AssertionError(f"{what}: {len(self.calls)} of {n} callbacks within {WAIT}s: {self.kinds()}")

    def events(self):
        with self.cond:
            return [json.loads(b) for _, _, b in self.calls]

    def kinds(self):
        return [e["event"] for e in self.events()]

    def release(self):
        self.gate.set()

    def close(self):
        self.gate.set()
        self.srv.shutdown()
        self.srv.server_close()


class FifoFeed:
    """The server's replay source reads a named pipe, each line as soon as
    it is written; send() returns once the engine has applied all of a
    phase's records, so the next phase can only land in a later batch."""

    def __init__(self, path):
        self.path, self.fd, self.at, self.sent, self.srv = path, None, T0, 0, None
        os.mkfifo(path)

    def attach(self, srv):
        self.srv = srv

        def opened():
            try:
                return os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO until the server opens it for reading
                return None
        self.fd = until(opened, "server opening the feed pipe")
        self._write(json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"}) + "\n")

    def rec(self, **r):
        """A record stamped 10 ms after the previous one."""
        self.at += 10
        return {"at": self.at, **r}

    def send(self, *records):
        self._write("".join(json.dumps(r) + "\n" for r in records))
        self.sent += len(records)
        until(lambda: status(self.srv)["feed"]["records_applied"] >= self.sent, f"{self.sent} records applied")
        self.assert_applied()

    def assert_applied(self):
        feed = status(self.srv)["feed"]
        assert (feed["records_applied"], feed["malformed"], feed["records_skipped"]) == (self.sent, 0, 0), feed

    def _write(self, text):
        data, deadline = memoryview(text.encode()), time.monotonic() + WAIT
        while data:
            assert time.monotonic() < deadline, "the server stopped reading its feed"
            if select.select([], [self.fd], [], 0.1)[1]:
                try:
                    data = data[os.write(self.fd, data):]
                except BlockingIOError:
                    pass

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def status(srv, key=PROBE):
    return h.status(srv.port, key)


def hooks(srv):
    return status(srv)["webhooks"]


def hooks_reach(srv, expected):
    """Waits until the webhook counters equal `expected`: a receiver sees a
    callback before the server counts it. They only grow, so one past its
    expected value fails at once."""
    seen = {}

    def check():
        seen.update(hooks(srv))
        assert all(seen[k] <= v for k, v in expected.items()), f"webhook counters {seen}, expected {expected}"
        return seen == expected
    try:
        until(check, "webhook counters")
    except AssertionError as e:
        if "expected" in str(e):
            raise
        raise AssertionError(f"webhook counters {seen}, expected {expected}, not within {WAIT}s") from None


def event_rec(feed, n, sport=1):
    return feed.rec(op="event", id=f"s7-{sport}.{n}", event={
        "c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 1, "ts": T0 // 1000,
        "h": f"Home {n}", "a": f"Away {n}", "co": 1, "map": {}, "s": 0, "live": True, "sport": sport})


def odds_rec(feed, n, price):
    return feed.rec(op="market", id=f"s7-1.{n}", market=1001,
                    lines={"s": {"s": 0, "o": {"2001": [price, 0], "2002": [300, 0], "2003": [400, 0]}}})


def score_rec(feed, n, home, away, st="live", **extra):
    return feed.rec(op="score", id=f"s7-1.{n}", status=st, **({"home": home, "away": away} if home is not None else {}),
                    **extra)


def key(name, recv, secret, events=None, sandbox=False, **extra):
    hook = {"url": recv.url, "secret": secret}
    if events is not None:
        hook["events"] = events
    return {"key": name, "sandbox": sandbox, "permissions": ["live", "odds", "scores"], "webhook": hook, **extra}


class Hooked:
    """A server on a FIFO feed with the given keys (plus the probe key). A
    POST's time limit is far beyond any wait here: a loaded machine's slow
    answer must not count as a failed attempt."""

    def __init__(self, keys, *flags):
        self.dir = tempfile.mkdtemp(prefix="oddsrelay-hooks-")
        self.keys_file = os.path.join(self.dir, "keys.json")
        self.write_keys(keys)
        self.feed = FifoFeed(os.path.join(self.dir, "feed.jsonl"))
        self.srv = h.Server("--feed", f"replay:{self.feed.path},speed=max", "--keys", self.keys_file,
                            "--progress", "0", "--webhook-timeout", str(4 * WAIT * 1000), *flags)
        self.feed.attach(self.srv)

    def write_keys(self, keys, *probes):
        # Whole or not at all: the server may read it at any moment (SIGHUP).
        tmp = h.write_keys(self.dir, {"keys": [{"key": p, "permissions": []} for p in (PROBE, *probes)] + keys},
                           "keys.json.tmp")
        os.replace(tmp, self.keys_file)

    def reload(self, keys, probe):
        """Rewrites the keys file, sends SIGHUP and waits until the new key
        set is published (the new probe key is accepted)."""
        self.write_keys(keys, probe)
        self.srv.proc.send_signal(signal.SIGHUP)
        until(lambda: h.request(self.srv.port, "/v1/status", probe)[0].status == 200, "keys reloaded")

    def stop(self):
        self.feed.close()
        rc, log = self.srv.stop()
        assert rc == 0, log[-3000:]
        return log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.feed.close()
        self.srv.__exit__(*exc)
        shutil.rmtree(self.dir)


def signed(test, recv, secret):
    for _, headers, body in recv.calls:
        test.assertEqual(headers["X-Signature"], hmac.new(secret, body, hashlib.sha256).hexdigest())
        test.assertEqual(headers["X-Webhook-Event"], json.loads(body)["event"])
        test.assertEqual(headers["Content-Type"], "application/json")


class Webhooks(unittest.TestCase):
    def setUp(self):
        self.receivers = []

    def tearDown(self):
        for r in self.receivers:
            r.close()

    def receiver(self, answer=lambda n: 204):
        r = Receiver(answer)
        self.receivers.append(r)
        return r

    def test_event_ended_and_settlement_payloads_signing_and_filters(self):
        all_, ends = self.receiver(), self.receiver()
        keys = [key("hook-a", all_, "sa", sandbox=True),
                key("hook-b", ends, "sb", ["event_ended", "settlement_changed"])]
        t_start = int(time.time() * 1000)
        with Hooked(keys) as s:
            f = s.feed
            f.send(event_rec(f, 9), odds_rec(f, 9, 200))
            all_.wait(1, "odds_update")
            f.send(score_rec(f, 9, 1, 0, clock="50:00"))
            ended = score_rec(f, 9, 2, 1, "ended")
            f.send(ended)
            corrected = score_rec(f, 9, 2, 2, "ended", result="abandoned")
            f.send(corrected)
            f.send(score_rec(f, 9, 2, 2, "ended", result="abandoned"))  # the same final again: no settlement change
            f.send(event_rec(f, 10), score_rec(f, 10, None, None, "ended", result="cancelled"))
            all_.wait(11, "every callback")
            ends.wait(5, "event_ended and settlement_changed")
            hooks_reach(s.srv, {"endpoints": 2, "delivered": 16, "failed_attempts": 0, "dropped": 0, "coalesced": 0})
            r, body = h.request(s.srv.port, "/v1/scores?ids=s7-1.9", "hook-a")
            self.assertEqual(r.status, 200, body)
            scores = json.loads(body)["data"]
            s.stop()
        t_end = int(time.time() * 1000)

        a = all_.events()
        self.assertEqual([(e["event"], e["data"]["event_id"]) for e in a], [
            ("odds_update", "s7-1.9"), ("score_update", "s7-1.9"),
            ("score_update", "s7-1.9"), ("event_ended", "s7-1.9"), ("settlement_changed", "s7-1.9"),
            ("score_update", "s7-1.9"), ("settlement_changed", "s7-1.9"),
            ("score_update", "s7-1.9"),
            ("score_update", "s7-1.10"), ("event_ended", "s7-1.10"), ("settlement_changed", "s7-1.10")])
        signed(self, all_, b"sa")
        for e in a:
            self.assertEqual(set(e), {"event", "sandbox", "ts", "at", "data"})
            self.assertIs(e["sandbox"], True)
            self.assertTrue(t_start <= e["ts"] <= t_end, (t_start, e["ts"], t_end))  # unix ms of the call
            self.assertEqual(e["data"]["sport"], 1)
        final1 = {"event_id": "s7-1.9", "sport": 1, "score": {"home": 2, "away": 1}, "result": "completed",
                  "final_version": 1, "settled_at": ended["at"]}
        final2 = {"event_id": "s7-1.9", "sport": 1, "score": {"home": 2, "away": 2}, "result": "abandoned",
                  "final_version": 2, "settled_at": corrected["at"]}
        self.assertEqual(a[3]["data"], final1)
        self.assertEqual(a[3]["at"], ended["at"])
        self.assertEqual(a[4]["data"], final1)
        self.assertEqual(a[6]["data"], final2)
        self.assertEqual(a[6]["at"], corrected["at"])
        no_score = {"event_id": "s7-1.10", "sport": 1, "score": None, "result": "cancelled", "final_version": 1,
                    "settled_at": f.at}
        self.assertEqual(a[9]["data"], no_score)
        self.assertEqual(a[10]["data"], no_score)
        self.assertEqual(a[0]["data"]["markets"]["1001"]["s"]["2001"][0], 200)
        self.assertEqual((a[1]["data"]["score"]["home"], a[1]["data"]["score"]["away"]), (1, 0))
        self.assertEqual(a[1]["data"]["score"]["clock"], "50:00")
        self.assertEqual(a[7]["data"]["score"], scores["s7-1.9"])  # the /v1/scores record, as documented

        # The filtered key: only its two kinds, in order, no sandbox flag, its own secret.
        b = ends.events()
        self.assertEqual([(e["event"], e["data"]) for e in b], [
            ("event_ended", final1), ("settlement_changed", final1), ("settlement_changed", final2),
            ("event_ended", no_score), ("settlement_changed", no_score)])
        self.assertTrue(all(set(e) == {"event", "ts", "at", "data"} for e in b))
        signed(self, ends, b"sb")

    def test_odds_coalesced_behind_a_blocked_receiver(self):
        blocked = self.receiver(lambda n: BLOCK if n == 1 else 204)
        marker = self.receiver()
        keys = [key("hook-odds", blocked, "so", ["odds_update"]),
                key("hook-marker", marker, "sm", ["score_update"])]
        with Hooked(keys) as s:
            f = s.feed
            f.send(event_rec(f, 9), odds_rec(f, 9, 200))
            blocked.wait(1, "first odds_update")  # now held: the endpoint cannot send anything else
            changes = 1
            for group in range(3):  # three batches at least, each a callback queued behind the held one
                f.send(*[odds_rec(f, 9, 201 + 10 * group + i) for i in range(10)])
                changes += 10
            f.send(score_rec(f, 9, 0, 0))
            marker.wait(1, "marker")  # the dispatcher has queued every odds change before it
            coalesced = hooks(s.srv)["coalesced"]
            blocked.release()
            blocked.wait(2, "the coalesced odds_update")
            f.send(odds_rec(f, 9, 999))  # a later change is the next callback: nothing else was queued
            blocked.wait(3, "a later odds_update")
            hooks_reach(s.srv, {"endpoints": 2, "delivered": 4, "failed_attempts": 0, "dropped": 0,
                                "coalesced": coalesced})
            s.stop()
        prices = [e["data"]["markets"]["1001"]["s"]["2001"][0] for e in blocked.events()]
        self.assertEqual(prices, [200, 230, 999])
        self.assertLess(len(prices) - 1, changes)
        self.assertGreaterEqual(coalesced, 2)  # three batches or more into one queued callback
        self.assertEqual(marker.kinds(), ["score_update"])
        signed(self, blocked, b"so")

    def test_retry_schedule_and_attempt_caps(self):
        failing, failing_sc = self.receiver(lambda n: 500), self.receiver(lambda n: 500)
        flaky = self.receiver(lambda n: 503 if n <= 2 else 200)
        with socket.socket() as sk:  # a port nobody listens on
            sk.bind(("127.0.0.1", 0))
            down = f"http://127.0.0.1:{sk.getsockname()[1]}/x"
        keys = [key("hook-fail", failing, "sf", ["odds_update", "score_update", "event_ended"]),
                key("hook-fail-sc", failing_sc, "sc", ["settlement_changed"]),
                key("hook-flaky", flaky, "sk", ["settlement_changed"]),
                {"key": "hook-down", "permissions": [],
                 "webhook": {"url": down, "secret": "x", "events": ["event_ended"]}}]
        retries = 6
        with Hooked(keys, "--webhook-retries", str(retries)) as s:
            f = s.feed
            f.send(event_rec(f, 9), odds_rec(f, 9, 200))
            failing.wait(1, "first odds_update attempt")
            f.send(score_rec(f, 9, 1, 0, "ended"))
            failing.wait(3 + 3 + retries, "every attempt")
            failing_sc.wait(retries, "every settlement_changed attempt")
            flaky.wait(3, "settlement_changed delivered on the third attempt")
            # Counted: the failed attempts at the receivers and the refused connections; dropped:
            # odds_update, score_update, event_ended at the failing receiver, settlement_changed at
            # the other, event_ended at the down one.
            hooks_reach(s.srv, {"endpoints": 4, "delivered": 1,
                                "failed_attempts": (3 + 3 + retries) + retries + 2 + retries,
                                "dropped": 5, "coalesced": 0})
            s.stop()

        # Order and count: odds_update and score_update 3 attempts each, event_ended --webhook-retries.
        kinds = failing.kinds()
        self.assertEqual(kinds, ["odds_update"] * 3 + ["score_update"] * 3 + ["event_ended"] * retries)
        ev = failing.events()
        t = [c[0] for c in failing.calls]
        for first, n in ((0, 3), (3, 3), (6, retries)):
            self.assertEqual(len({json.dumps(e["data"], sort_keys=True) for e in ev[first:first + n]}), 1)
            for i in range(1, n):  # 250 ms doubling: each gap at least the schedule's
                self.assertGreaterEqual(t[first + i] - t[first + i - 1], 0.25 * 2 ** (i - 1), (kinds[first], i))
        signed(self, failing, b"sf")
        # settlement_changed: --webhook-retries attempts too, on the same schedule.
        self.assertEqual(failing_sc.kinds(), ["settlement_changed"] * retries)
        t = [c[0] for c in failing_sc.calls]
        for i in range(1, retries):
            self.assertGreaterEqual(t[i] - t[i - 1], 0.25 * 2 ** (i - 1), ("settlement_changed", i))
        self.assertEqual(flaky.kinds(), ["settlement_changed"] * 3)
        self.assertGreaterEqual(flaky.calls[1][0] - flaky.calls[0][0], 0.25)
        self.assertGreaterEqual(flaky.calls[2][0] - flaky.calls[1][0], 0.5)

    def test_queue_bound_drops_oldest_non_critical_and_keeps_critical(self):
        blocked = self.receiver(lambda n: BLOCK if n == 1 else 204)
        marker = self.receiver()
        keys = [key("hook-scores", blocked, "ss", ["score_update", "event_ended", "settlement_changed"]),
                key("hook-marker", marker, "sm", ["odds_update"])]
        bound, extra = 10_000, 7
        with Hooked(keys) as s:
            f = s.feed
            f.send(event_rec(f, 1), score_rec(f, 1, 0, 0))
            blocked.wait(1, "first score_update")  # held: everything else queues
            # The oldest queued: event 2 ends (its score_update, then the
            # critical event_ended and settlement_changed).
            f.send(event_rec(f, 2), score_rec(f, 2, 2, 1, "ended"))
            n = bound - 3 + extra  # score_updates of events 3 ..: `extra` past the bound
            f.send(*[event_rec(f, 3 + i) for i in range(n)])
            f.send(*[score_rec(f, 3 + i, 1, 0) for i in range(n)], odds_rec(f, 3, 150))
            marker.wait(1, "marker")  # every score_update was queued before it
            hooks_reach(s.srv, {"endpoints": 2, "delivered": 1, "failed_attempts": 0, "dropped": extra, "coalesced": 0})
            blocked.release()
            blocked.wait(8, "callbacks after the release")
            head = [(e["event"], e["data"]["event_id"]) for e in blocked.events()[:8]]
            s.stop()
        # The held one, then event 2's critical callbacks, older than every
        # score_update that gave way (event 2's and those of events
        # 3 .. 3+extra-2), then the oldest surviving score_update.
        self.assertEqual(head, [("score_update", "s7-1.1"), ("event_ended", "s7-1.2"), ("settlement_changed", "s7-1.2")]
                         + [("score_update", f"s7-1.{3 + extra - 1 + i}") for i in range(5)])

    def test_keys_reload_adds_removes_and_changes_endpoints(self):
        gone = self.receiver(lambda n: BLOCK if n == 1 else 204)
        moved_old, moved_new, rekeyed, added = (self.receiver() for _ in range(4))
        v1 = [key("hook-gone", gone, "g1", ["odds_update"]),
              key("hook-moved", moved_old, "m1", ["odds_update"]),
              key("hook-rekeyed", rekeyed, "r1", ["odds_update"])]
        v2 = [key("hook-moved", moved_new, "m2", ["odds_update"]),
              key("hook-rekeyed", rekeyed, "r2", ["odds_update", "score_update"]),
              key("hook-added", added, "a2", ["odds_update"])]
        with Hooked(v1) as s:
            f = s.feed
            f.send(event_rec(f, 9), odds_rec(f, 9, 200))
            for r in (gone, moved_old, rekeyed):
                r.wait(1, "odds_update before the reload")  # gone's is held
            f.send(odds_rec(f, 9, 201))  # queued at gone behind the held one
            moved_old.wait(2, "second odds_update before the reload")
            rekeyed.wait(2, "second odds_update before the reload")
            self.assertEqual(hooks(s.srv)["endpoints"], 3)
            s.reload(v2, "probe-2")
            f.send(odds_rec(f, 9, 202))
            # Delivered while the removed endpoint still holds its POST: a reload waits for no receiver.
            rekeyed.wait(3, "odds_update after the reload")
            moved_new.wait(1, "odds_update at the new url")
            added.wait(1, "odds_update at the added endpoint")
            f.send(score_rec(f, 9, 1, 0))  # after: a queued score_update goes before a queued odds_update
            rekeyed.wait(4, "score_update, now in its filter")
            # The current configuration, not every one seen; gone's queued callback counted as dropped.
            hooks_reach(s.srv, {"endpoints": 3, "delivered": 8, "failed_attempts": 0, "dropped": 1, "coalesced": 0})
            gone.release()
            until(lambda: hooks(s.srv)["delivered"] == 9, "the held POST answered")
            s.stop()

        price = lambda e: e["data"]["markets"]["1001"]["s"]["2001"][0]
        self.assertEqual([price(e) for e in gone.events()], [200])  # removed: its queued 201 dropped
        self.assertEqual([price(e) for e in moved_old.events()], [200, 201])
        self.assertEqual([price(e) for e in moved_new.events()], [202])
        self.assertEqual([price(e) for e in added.events()], [202])
        self.assertEqual(rekeyed.kinds(), ["odds_update"] * 3 + ["score_update"])
        self.assertEqual([price(e) for e in rekeyed.events()[:3]], [200, 201, 202])
        signed(self, moved_old, b"m1")
        signed(self, moved_new, b"m2")
        signed(self, added, b"a2")
        # The rekeyed endpoint: the old secret before the reload, the new one after.
        sigs = [(hd["X-Signature"], b) for _, hd, b in rekeyed.calls]
        for sig, body in sigs[:2]:
            self.assertEqual(sig, hmac.new(b"r1", body, hashlib.sha256).hexdigest())
        for sig, body in sigs[2:]:
            self.assertEqual(sig, hmac.new(b"r2", body, hashlib.sha256).hexdigest())

if __name__ == "__main__":
    h.main()
