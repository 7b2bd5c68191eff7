"""Settlement covers every line an event ever priced (docs/settlement.md
"Which lines"), through the real binary: a replayed fixture in which the
pre-match markets (1004, 1005, 1007) are removed at kick-off, ladder rungs
are withdrawn open (total 1.5) and suspended (total 0.5), an Asian handicap
side is flagged when its line goes, and the book is suspended and removed
after full time. The final 2-1 is then corrected to 2-2 by a second feed on
the same --data-dir (revision 2), which also proves the withdrawn lines come
back from the journal; a third start with nothing new answers byte for byte
the same, and the state digest of each run equals a replay of its journal.
The same correction arriving while one server runs replaces the answer it
already computed and cached (CorrectionWhileServing)."""
import json
import os
import shutil
import tempfile
import time
import unittest

import harness as h
from scripted_feed import ScriptedFeed

KEY = "trust-settle-key"
KEYS = {"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds", "scores"]}]}
EID = "s7-101.7001"
T0 = 1767225600000

# (market, line) -> (withdrawn, last_read offset or None, {outcome: result or (result, reason)})
AT_2_1 = {
    ("1001", "s"): (False, None, {"2001": "win", "2002": "lose", "2003": "lose"}),
    ("1019", "s"): (False, None, {"2018": "win", "2019": "lose"}),
    # Pre-match markets removed at kick-off: settled from the final score.
    ("1007", "s2.5"): (True, 200, {"2008": "win", "2009": "lose"}),
    ("1007", "s3.5"): (True, 200, {"2008": "lose", "2009": "win"}),
    ("1005", "s-0.5"): (True, 300, {"2006": "win", "2007": "lose"}),
    ("1005", "s-1"): (True, 300, {"2006": ("void", "push"), "2007": ("void", "push")}),
    ("1004", "s1:0"): (True, 400, {"2004": "lose"}),
    ("1004", "s2:1"): (True, 400, {"2004": "win"}),
    ("1004", "s2:2"): (True, 400, {"2004": "lose"}),
    ("1004", "s"): (True, 400, {"2005": "lose"}),
    # Rungs: 0.5 withdrawn while suspended (void), 1.5 withdrawn open (settles).
    ("1018", "s0.5"): (True, 2010, {"2016": ("void", "suspended at last read"),
                                    "2017": ("void", "suspended at last read")}),
    ("1018", "s1.5"): (True, 2500, {"2016": "win", "2017": "lose"}),
    ("1018", "s2.5"): (False, None, {"2016": "win", "2017": "lose"}),
    ("1018", "s3.5"): (False, None, {"2016": "lose", "2017": "win"}),
    ("1018", "s4.5"): (False, None, {"2016": "lose", "2017": "win"}),
    # AH -0.5 withdrawn with its home side flagged: that side void, the other settles.
    ("1011", "s-0.5"): (True, 2050, {"2012": ("void", "suspended at last read"), "2013": "lose"}),
    ("1011", "s0"): (False, None, {"2012": "win", "2013": "lose"}),
    ("1011", "s-1"): (False, None, {"2012": ("void", "push"), "2013": ("void", "push")}),
}

AT_2_2 = {
    ("1001", "s"): {"2001": "lose", "2002": "win", "2003": "lose"},
    ("1019", "s"): {"2018": "win", "2019": "lose"},
    ("1007", "s2.5"): {"2008": "win", "2009": "lose"},
    ("1007", "s3.5"): {"2008": "win", "2009": "lose"},
    ("1005", "s-0.5"): {"2006": "lose", "2007": "win"},
    ("1005", "s-1"): {"2006": "lose", "2007": "win"},
    ("1004", "s1:0"): {"2004": "lose"},
    ("1004", "s2:1"): {"2004": "lose"},
    ("1004", "s2:2"): {"2004": "win"},
    ("1004", "s"): {"2005": "lose"},
    ("1018", "s0.5"): {"2016": ("void", "suspended at last read"), "2017": ("void", "suspended at last read")},
    ("1018", "s1.5"): {"2016": "win", "2017": "lose"},
    ("1018", "s2.5"): {"2016": "win", "2017": "lose"},
    ("1018", "s3.5"): {"2016": "win", "2017": "lose"},
    ("1018", "s4.5"): {"2016": "lose", "2017": "win"},
    ("1011", "s-0.5"): {"2012": ("void", "suspended at last read"), "2013": "win"},
    ("1011", "s0"): {"2012": ("void", "push"), "2013": ("void", "push")},
    ("1011", "s-1"): {"2012": "lose", "2013": "win"},
}


def results(record):
    """(market, line) -> {outcome: result or (result, reason)}, and the line objects."""
    out, objs = {}, {}
    for m, market in record["markets"].items():
        for key, line in market["lines"].items():
            out[(m, key)] = {o: v["result"] if "reason" not in v else (v["result"], v["reason"])
                             for o, v in line["outcomes"].items()}
            objs[(m, key)] = line
    return out, objs


class TrustSettlement(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-trust-settle-")
        cls.data = os.path.join(cls.dir, "data")
        os.mkdir(cls.data)
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.empty = os.path.join(cls.dir, "empty.jsonl")
        with open(cls.empty, "w") as f:
            f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def run_feed(self, feed, revision):
        """Starts on the shared data dir with `feed`, waits for the settlement
        of `revision`, returns (raw JSON text, record, final digest)."""
        with h.Server("--feed", f"replay:{feed},speed=max", "--data-dir", self.data, "--keys", self.keys,
                      "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            deadline, record = time.time() + 60, None
            while time.time() < deadline:
                r, raw = h.request(srv.port, f"/v1/settlements?ids={EID}", KEY)
                self.assertEqual(r.status, 200, raw)
                record = json.loads(raw)["data"].get(EID)
                if record and record["status"] == "ended" and record["revision"] == revision:
                    break
                time.sleep(0.1)
            self.assertEqual(record["revision"], revision, record)
            # The event is gone from the lists and from /v1/odds: settlement still answers.
            self.assertEqual(json.loads(h.request(srv.port, f"/v1/odds?ids={EID}", KEY)[1])["data"], {})
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
        return raw, record, h.stopped_digest(log)

    def check(self, record, expected):
        got, lines = results(record)
        self.assertEqual(sorted(got), sorted(expected))  # every line priced before full time, once
        for k, want in expected.items():
            self.assertEqual(got[k], want, k)

    def test_withdrawn_lines_settle_and_a_correction_is_revision_2(self):
        journal = os.path.join(self.data, "journal-%020d.jsonl" % 1)  # one segment: no snapshot below 50,000 records
        # Run 1: the match, its full time 2-1.
        raw1, rec1, digest1 = self.run_feed(h.fixture("withdrawn_lines.jsonl"), 1)
        self.assertEqual(rec1["score"], {"home": 2, "away": 1})
        self.check(rec1, {k: v[2] for k, v in AT_2_1.items()})
        _, lines = results(rec1)
        for k, (withdrawn, last_read, _) in AT_2_1.items():
            if withdrawn:
                self.assertEqual((lines[k]["withdrawn"], lines[k]["last_read"]), (True, T0 + last_read), k)
            else:
                self.assertNotIn("withdrawn", lines[k], k)
                self.assertNotIn("last_read", lines[k], k)
        self.assertEqual(rec1["coverage"], {"covered": 26, "void": 7, "pending": 0, "markets": 7})
        self.assertEqual(digest1, h.file_digest(journal))  # the history is rebuilt from the records

        # Run 2: the journal comes back, then upstream corrects the final to 2-2.
        raw2, rec2, digest2 = self.run_feed(h.fixture("withdrawn_lines_correction.jsonl"), 2)
        self.assertEqual(rec2["score"], {"home": 2, "away": 2})
        self.assertEqual(rec2["settled_at"], T0 + 600000)
        self.check(rec2, AT_2_2)
        self.assertNotEqual(digest2, digest1)
        self.assertEqual(digest2, h.file_digest(journal))

        # Run 3: nothing new; the answer is the same bytes, still revision 2.
        raw3, rec3, digest3 = self.run_feed(self.empty, 2)
        self.assertEqual(raw3, raw2)
        self.assertEqual(digest3, digest2)


class CorrectionWhileServing(unittest.TestCase):
    """/v1/settlements caches an ended event's answer until its final score
    changes: a correction applied while the server runs must be served at
    once, as revision 2, and then reused like revision 1 was."""

    def setUp(self):
        self.dir = h.scratch("trust-settle-live")
        self.keys = h.write_keys(self.dir, KEYS)

    def tearDown(self):
        shutil.rmtree(self.dir)

    @staticmethod
    def records(name):
        with open(h.fixture(name)) as f:
            return [r for r in map(json.loads, f) if r["op"] != "header"]

    def test_a_correction_replaces_the_cached_answer(self):
        fifo = ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        self.addCleanup(fifo.close)
        with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            fifo.open()

            def write_as_recorded(records):
                """Each record keeps its own `at` (settled_at and last_read are checked against it)."""
                for r in records:
                    fifo.at = r["at"] - 10  # write() stamps at + 10
                    self.assertEqual(fifo.write({k: v for k, v in r.items() if k != "at"}), r["at"])
                return records[-1]["at"]

            def settlement():
                r, raw = h.request(srv.port, f"/v1/settlements?ids={EID}", KEY)
                self.assertEqual(r.status, 200, raw)
                return json.loads(raw)["data"][EID]

            last = write_as_recorded(self.records("withdrawn_lines.jsonl"))
            h.wait_until(lambda: h.status(srv.port, KEY)["last_update"] == last, 60, "the match applied")
            rec1 = settlement()
            self.assertEqual((rec1["status"], rec1["revision"], rec1["score"]), ("ended", 1, {"home": 2, "away": 1}))
            TrustSettlement.check(self, rec1, {k: v[2] for k, v in AT_2_1.items()})
            # Asked again: the cached answer, not computed again.
            computed = h.status(srv.port, KEY)["settlements"]["computed"]
            self.assertEqual(settlement(), rec1)
            self.assertEqual(h.status(srv.port, KEY)["settlements"]["computed"], computed)

            # Upstream corrects the final to 2-2 while the server runs.
            at = write_as_recorded(self.records("withdrawn_lines_correction.jsonl"))
            h.wait_until(lambda: h.status(srv.port, KEY)["last_update"] == at, 60, "the correction applied")
            rec2 = settlement()
            self.assertEqual((rec2["status"], rec2["revision"], rec2["score"]), ("ended", 2, {"home": 2, "away": 2}))
            self.assertEqual(rec2["settled_at"], at)
            TrustSettlement.check(self, rec2, AT_2_2)
            # The same 33 lines, re-run: two pushes at 2-1 settle at 2-2, one line pushes.
            self.assertEqual(rec2["coverage"], {"covered": 28, "void": 5, "pending": 0, "markets": 7})
            self.assertEqual(h.status(srv.port, KEY)["settlements"]["computed"], computed + 1)
            self.assertEqual(settlement(), rec2)
            self.assertEqual(h.status(srv.port, KEY)["settlements"]["computed"], computed + 1)
            fifo.close()
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log[-3000:])


if __name__ == "__main__":
    h.main()
