"""oddsclient without a server: the apply of every frame kind and the digest
kept as frames are applied (against the documented worked example and a
from-scratch sum), each resync reason and the stale state through a scripted
connection, and the backoff's bounds. Run by ctest (python_client_unit)."""
import asyncio
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import websockets.exceptions  # noqa: E402

from oddsclient import State, backoff, hex16, market_sum, event_term, number_of, odds_digest  # noqa: E402
from oddsclient.replica import BadFrame  # noqa: E402
from oddsclient.stream import Replica  # noqa: E402

SEP = "\x1f"
EV = "s7-101.10000001"
M1001 = {"s": {"2001": [185, 0, None, 5], "2002": [340, 0, None, 5], "ls": 5, "s": 0}, "s0.5": {"ls": 5}}


def frame(t, ch, body):
    return f"{t}{SEP}{ch}{SEP}{json.dumps(body)}"


def scratch_digest(st):
    """The documented sum, from nothing: e| per listed event, every outcome held."""
    total = sum(event_term(number_of(k)) for k in st.events)
    total += sum(market_sum(n, m, mk) for n, book in st.odds.items() for m, mk in book.items())
    return hex16(total)


class Apply(unittest.TestCase):
    def test_the_worked_example_of_docs_api(self):
        st = State()
        ev, mk = set(), set()
        st.apply("evt:1", {EV: {"live": True, "sport": 1}}, ev, mk)
        st.apply("odds:1:10000001", {"1001": M1001}, ev, mk)
        self.assertEqual(st.hex(), "bff4c9f29b75694d")  # docs/api.md "State digest"
        self.assertEqual(hex16(odds_digest(st.data(), number_of)), "c8c606b19ac6016c")
        self.assertEqual(ev, {EV})
        self.assertEqual(mk, {(10000001, "1001")})

    def test_every_frame_kind_keeps_the_digest_equal_to_a_fresh_sum(self):
        st = State()
        steps = [
            ("evt:1", {EV: {"live": True, "sport": 1}, "s7-101.5": {"live": False, "sport": 1}}),
            ("odds:1:10000001", {"1001": M1001, "1007": {"s2.5": {"2005": [190, 1, "2.5", 5], "ls": 5, "s": 1}}}),
            ("odds:1:10000001", {"1001": {"s": {"2001": [190, 0, None, 6], "ls": 6, "s": 0}}}),  # a market replaced
            ("odds:1:10000001", {"1007": None}),  # a market removed
            ("evt:1", {EV: {"live": True, "sport": 1, "h": "changed"}}),  # an event changed
            ("evt:1", {"s7-101.5": None}),  # an event removed
            ("odds:1:10000001", {"1004": {"s0.5": {"ls": 7}}}),  # only an empty rung: adds nothing
        ]
        for ch, body in steps:
            st.apply(ch, body, set(), set())
            self.assertEqual(st.hex(), scratch_digest(st), (ch, body))
        self.assertEqual(set(st.odds[10000001]), {"1001", "1004"})
        self.assertEqual(st.data()[EV]["1001"]["s"]["2001"][0], 190)
        # An event leaving the lists takes its odds with it.
        st.apply("evt:1", {EV: None}, set(), set())
        self.assertEqual((st.events, st.odds, st.hex()), ({}, {}, hex16(0)))

    def test_frames_that_cannot_be_applied_are_bad(self):
        for ch, body in (("nope:1", {}), ("odds:1", {}), ("evt:1", []), ("odds:1:5", {"1001": 3}),
                         ("odds:1:5", {"1001": {"s": {"2001": 5, "s": 0}}}), ("evt:1", {"x.y": {}})):
            with self.assertRaises(BadFrame, msg=(ch, body)):
                State().apply(ch, body, set(), set())


class FakeWs:
    """One scripted connection: its messages, then a cut (or silence)."""

    def __init__(self, msgs, hang=False):
        self.msgs, self.hang = list(msgs), hang
        self.last_frame = 0.0
        self.transport = None

    async def recv(self):
        if self.msgs:
            return self.msgs.pop(0)
        if self.hang:
            await asyncio.sleep(3600)
        raise websockets.exceptions.ConnectionClosedError(None, None)

    async def close(self):
        pass


class Scripted(Replica):
    def __init__(self, scripts, **kw):
        self.events = []
        super().__init__("http://127.0.0.1:1", "k", verify=True, on_event=self.events.append, **kw)
        self.scripts, self.urls = list(scripts), []

    async def _connect(self):
        import time
        if not self.scripts:
            self.stop()
            return False
        url = self.url + (f"&resume={self.epoch}:{self.seq}" if self._resume and self.seq is not None else "")
        self.urls.append(url)
        self._ws = FakeWs(*self.scripts.pop(0))
        self._ws.last_frame = time.monotonic()
        self._need_ready = True
        return True


def ready(seq, **kw):
    return frame("INFO", "PUB", dict(ready=True, protocol="v2", epoch="E", seq=seq, **kw))


def info(frm, seq, digest=None):
    body = {"seq": seq, "from": frm, "at": 1}
    if digest:
        body["digest"] = digest
    return frame("INFO", "PUB", body)


def good_snapshot(seq):
    st = State()
    st.apply("evt:1", {EV: {"live": True, "sport": 1}}, set(), set())
    st.apply("odds:1:10000001", {"1001": M1001}, set(), set())
    return [ready(seq), frame("P", "evt:1", {EV: {"live": True, "sport": 1}}),
            frame("P", "odds:1:10000001", {"1001": M1001}), info(seq + 1, seq + 1, st.hex())], st.hex()


def run(scripts, **kw):
    r = Scripted(scripts, **kw)

    async def go():
        groups = []
        async for g in r:
            groups.append(g)
        return groups
    return r, asyncio.run(asyncio.wait_for(go(), 10))


class Resyncs(unittest.TestCase):
    def test_a_clean_stream_goes_live_verified_and_resumes_after_a_cut(self):
        snap, d = good_snapshot(10)
        r, groups = run([(snap,), ([ready(11, resumed=True), info(12, 12, d)],)])
        self.assertEqual([g["seq"] for g in groups], [11, 12])
        self.assertTrue(all(g["verified"] for g in groups))
        self.assertTrue(r.urls[1].endswith("&resume=E:11"), r.urls)
        states = [e["state"] for e in r.events if "state" in e]
        self.assertEqual(states[:2], ["syncing", "live"])
        self.assertIn("connecting", states)
        self.assertEqual(r.resyncs, [])

    def check_reason(self, second, reason, seq=11):
        snap, d = good_snapshot(10)
        r, groups = run([(snap + second,), (good_snapshot(20)[0],)])
        self.assertEqual(r.resyncs, [reason])
        self.assertIn({"resync": reason, "seq": seq}, r.events)
        self.assertEqual(groups[-1]["resync"], reason)  # the first group after it says why
        self.assertNotIn("resume=", r.urls[1])  # a fresh snapshot, not a resume
        self.assertIn("resyncing", [e.get("state") for e in r.events])
        self.assertEqual((r.seq, r.digest()), (21, d))

    def test_a_gap_resyncs(self):
        self.check_reason([info(14, 15)], "gap")

    def test_a_bad_frame_resyncs(self):
        self.check_reason(["garbage"], "bad_frame")

    def test_a_digest_mismatch_resyncs_naming_the_infos_seq(self):
        self.check_reason([frame("P", "odds:1:10000001", {"1001": None}), info(12, 12, "0" * 16)], "digest_mismatch", 12)

    def test_a_refused_resume_resyncs_with_its_reason(self):
        snap, d = good_snapshot(10)
        refused = good_snapshot(30)[0]
        refused[0] = ready(30, resumed=False, reason="too_old")
        r, groups = run([(snap,), (refused,)])
        self.assertEqual(r.resyncs, ["resume_refused:too_old"])
        self.assertEqual(groups[-1]["resync"], "resume_refused:too_old")
        self.assertEqual(r.seq, 31)

    def test_silence_for_two_ping_intervals_is_stale_and_reconnects(self):
        snap, d = good_snapshot(10)
        r, groups = run([(snap, True), ([ready(11, resumed=True), info(12, 12, d)],)], ping_interval=0.05)
        states = [e["state"] for e in r.events if "state" in e]
        self.assertIn("stale", states)
        self.assertEqual(states[states.index("stale") + 1], "live")
        self.assertEqual(groups[-1]["seq"], 12)

    def test_a_counted_snapshot_is_live_at_its_last_frame_and_an_empty_one_at_once(self):
        snap, d = good_snapshot(10)
        counted = [ready(10, frames=2, digest=d)] + snap[1:3]  # no INFO after it
        r, groups = run([(counted + [info(11, 12, d)],)])
        self.assertEqual([(g["seq"], g["verified"]) for g in groups], [(10, True), (12, True)])
        r, groups = run([([ready(5, frames=0, digest="0" * 16)],)])
        self.assertEqual([(g["seq"], g["verified"]) for g in groups], [(5, True)])
        self.assertEqual(r.resyncs, [])
        wrong = [ready(10, frames=2, digest="0" * 16)] + snap[1:3]
        r, groups = run([(wrong,), (good_snapshot(20)[0],)])
        self.assertEqual(r.resyncs, ["digest_mismatch"])


class Backoff(unittest.TestCase):
    def test_full_jitter_between_zero_and_the_capped_exponential(self):
        self.assertEqual([backoff.ceiling(n) for n in range(8)], [0.5, 1, 2, 4, 8, 16, 30, 30])
        self.assertEqual(backoff.ceiling(10 ** 6), 30)
        for n in range(12):
            self.assertEqual(backoff.delay(n, rng=lambda: 0.0), 0.0)
            self.assertEqual(backoff.delay(n, rng=lambda: 1.0), backoff.ceiling(n))
        import random
        rng = random.Random(7)
        draws = [backoff.delay(9, rng.random) for _ in range(2000)]
        self.assertTrue(all(0 <= x <= 30 for x in draws))
        self.assertGreater(max(draws), 27)  # the whole range is used: full jitter
        self.assertLess(min(draws), 3)


if __name__ == "__main__":
    unittest.main()
