"""The pages' stream module (rest/pages/oddsclient.mjs, served at
/js/oddsclient.mjs) in node, without a server: its XXH64 against Python's
xxhash for every length around the 4-, 8- and 32-byte steps and non-ASCII
text, its replica's digest and data against tests/e2e/state_digest.py (written
from docs/api.md, independently) frame by frame, the backoff bounds, and the
state machine against a scripted fake WebSocket (each resync reason, resume
after a cut, stale, a refused key given up). The browser tests are in
test_page_module_browser.py."""
import json
import os
import random
import subprocess
import unittest

import xxhash

import harness as h
import state_digest as sd

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "node", "oddsclient_unit.mjs")
EV = "s1-101.10000001"


def node(job):
    p = subprocess.run(["node", SCRIPT], input=json.dumps(job), capture_output=True, text=True, timeout=60)
    if p.returncode:
        raise AssertionError(p.stderr)
    return json.loads(p.stdout)


def market(price, s=0, extra=None):
    line = {"2001": [price, 0, 0, 1], "2002": [340, 1, 0, 1], "s": s, "ls": 5}
    return {"s": line, **(extra or {})}


class Module(unittest.TestCase):
    def test_xxh64_equals_python_xxhash(self):
        rng = random.Random(7)
        texts = ["", "a", "e|10000001", "10000001|1001|s|2001|185|0|0", "10000001|1004|s-0.75|2010|1100|0|1",
                 "é|ü|€|𝄞", "x" * 1000]
        texts += ["".join(rng.choice("0123456789|s.:-e") for _ in range(n)) for n in range(0, 100)]
        got = node({"hash": texts})["hash"]
        want = [f"{xxhash.xxh64_intdigest(t.encode(), 0):016x}" for t in texts]
        self.assertEqual(got, want)
        # docs/api.md's worked example.
        self.assertEqual(got[3], "54dd77cc753b9da7")

    def test_replica_digest_and_data_frame_by_frame(self):
        frames = [
            ["evt:1", {EV: {"live": True, "sport": 1}, "s1-101.10000002": {"live": False, "sport": 1}}],
            ["odds:1:10000001", {"1001": market(185), "1007": {"s2.5": {"2005": [190, 1, 0, 1], "s": 1, "ls": 3}}}],
            ["odds:1:10000001", {"1001": market(190)}],  # a market replaced whole
            ["odds:1:10000001", {"1004": {"s2:1": {"s": 0, "ls": 9}}}],  # an empty rung: no term
            ["odds:1:10000001", {"1007": None}],  # a market removed
            ["evt:1", {"s1-101.10000002": None}],  # an event removed
            ["odds:1:10000003", {"1001": market(300)}],  # odds of an event the lists do not hold
            ["evt:1", {EV: {"live": False, "sport": 1}}],  # not live any more: its odds go
            ["bogus:1", {}],
            ["odds:1:10000001", [1, 2]],
        ]
        got = node({"replica": frames})["replica"]
        events, odds = {}, {}
        for (ch, body), shown in zip(frames[:8], got):
            if ch.startswith("evt:"):
                for k, v in body.items():
                    n = int(k.rsplit(".", 1)[1])
                    if v is None:
                        events.pop(n, None)
                    else:
                        events[n] = k
                    if v is None or not v["live"]:
                        odds.pop(n, None)
            else:
                book = odds.setdefault(int(ch.split(":")[2]), {})
                for m, mk in body.items():
                    if mk is None:
                        book.pop(m, None)
                    else:
                        book[m] = mk
            self.assertEqual(shown["digest"], sd.hex16(sd.view_digest(events, odds)), (ch, body))
        self.assertEqual(got[1]["data"], {EV: frames[1][1]})
        self.assertEqual(got[4]["data"][EV], {"1001": market(190), "1004": {"s2:1": {"s": 0, "ls": 9}}})
        self.assertEqual(got[6]["data"], {EV: got[4]["data"][EV], "10000003": {"1001": market(300)}})
        self.assertEqual(got[7]["data"], {"10000003": {"1001": market(300)}})
        self.assertEqual(got[8:], [{"error": "BadFrame"}] * 2)

    def test_backoff_is_full_jitter_from_half_a_second_to_30(self):
        rows = node({"backoff": 300})["backoff"]
        for r in rows:
            ceiling = min(30.0, 0.5 * 2 ** r["n"])
            self.assertEqual((r["low"], r["high"]), (0, ceiling), r)
            self.assertTrue(0 <= r["min"] and r["max"] <= ceiling, r)
            self.assertLess(r["min"], ceiling / 4, r)  # spread over the range, not a fixed delay
            self.assertGreater(r["max"], ceiling * 3 / 4, r)
        self.assertEqual(rows[-1]["high"], 30)

    def test_state_machine(self):
        out = node({"machine": True})
        m = out["machine"]
        base = f"ws://127.0.0.1:1/pt-ws?protocol=v2&events={EV},2&verify=1&api_key=k"
        # Frames are held until their INFO: mid-group, the view is the last INFO's.
        self.assertEqual((out["midGroupSeq"], out["midGroupPrice"]), (10, 185))
        g = m["gap"]
        self.assertEqual(g["log"], ["state:syncing", "state:live", "group:10:verified:snapshot", "group:12:verified",
                                    "state:connecting", "state:live", "group:14", "resync:gap", "state:resyncing",
                                    "state:syncing", "state:live", "group:30:verified:snapshot", "state:closed"])
        self.assertEqual(g["urls"], [base, base + "&resume=E:12", base])  # resumed after the cut, not after the gap
        self.assertEqual((g["seq"], g["view"][EV]["1001"]["s"]["2001"][0]), (30, 200))
        r = m["refused"]
        self.assertEqual(r["resyncs"], ["resume_refused:too_old"])
        self.assertEqual(r["log"][3:8], ["state:connecting", "resync:resume_refused:too_old", "state:resyncing",
                                         "state:syncing", "state:live"])
        self.assertEqual((r["urls"], r["seq"]), ([base, base + "&resume=E:10"], 40))
        b = m["bad"]
        self.assertEqual(b["resyncs"], ["bad_frame", "digest_mismatch"])
        self.assertEqual(b["urls"], [base] * 3)  # each resync: a fresh snapshot, no resume
        self.assertEqual((b["seq"], b["view"][EV]["1001"]["s"]["2001"][0]), (12, 190))
        s = m["stale"]
        self.assertEqual(s["log"], ["state:syncing", "state:live", "group:10:verified:snapshot", "state:stale",
                                    "state:live", "state:closed"])
        self.assertEqual(s["urls"], [base, base + "&resume=E:10"])
        c = m["counted"]
        self.assertEqual(c["log"], ["state:syncing", "state:live", "group:10:verified:snapshot", "state:connecting",
                                    "resync:resume_refused:too_old", "state:resyncing", "state:syncing", "state:live",
                                    "group:20:verified:snapshot", "state:closed"])
        self.assertEqual((c["seq"], c["view"]), (20, {}))
        k = m["refusedKey"]
        self.assertEqual((len(k["urls"]), k["log"]), (3, ["state:closed"]))


if __name__ == "__main__":
    h.main()
