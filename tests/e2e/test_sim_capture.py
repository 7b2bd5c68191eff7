"""The simulator feed through the real binary: the progress line, and what
it applied equals what it captured and journaled, also after a restart from
the journal. "Equals" is checked by the state digest and, apart from it, by
the counts of the final progress line and by what the REST API answers."""
import gzip
import os
import re
import shutil
import signal
import tempfile
import unittest

import harness as h
# REST snapshot helpers shared with the replay tests.
from test_replay_journal import KEY, answers, event_numbers, first_difference

FINAL = re.compile(r"progress: applied=(\d+) \(\d+/s\) skipped=\d+ malformed=\d+ events live=(\d+) prematch=(\d+) "
                   r"markets=(\d+) outcomes=(\d+) seq=\d+")


def final_counts(log):
    """applied, live, prematch, markets and outcomes of the last progress
    line: the one printed after the engine stopped."""
    found = FINAL.findall(log)
    assert found, "no progress line in:\n" + log[-2000:]
    return dict(zip(("applied", "live", "prematch", "markets", "outcomes"), map(int, found[-1])))


def records_and_prefix(cap, prefix):
    """The number of records in a capture; writes all but its last to `prefix`."""
    opener = gzip.open if cap.endswith(".gz") else open
    with opener(cap, "rb") as f:
        lines = [l for l in f.read().split(b"\n") if l]
    with open(prefix, "wb") as f:
        f.write(b"\n".join(lines[:-1]) + b"\n")
    return len(lines) - 1  # the header


class SimCapture(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="oddsrelay-e2e-")
        self.keys = h.write_keys(self.dir, {"keys": [{"key": KEY, "name": "t", "sandbox": True,
                                                      "permissions": ["live", "prematch", "odds", "scores"]}]})

    def tearDown(self):
        shutil.rmtree(self.dir)

    def serve(self, *extra, numbers, applied):
        """A server on `extra` until `applied` records are in: (REST answers, log)."""
        with h.Server("--keys", self.keys, "--progress", "0", *extra) as s:
            s.wait_for(r"serving http://")
            a = answers(s.port, numbers, applied)
            rc, log = s.stop()
        self.assertEqual(rc, 0, log)
        return a, log

    def test_capture_and_journal_equal_live_state(self):
        cap = os.path.join(self.dir, "cap.jsonl.gz")
        data = os.path.join(self.dir, "data")
        with h.Server("--feed", "sim:seed=3,events=200,rate=800,minute=100", "--capture", cap,
                      "--data-dir", data, "--progress", "0.5") as s:
            m = s.wait_for(r"progress: applied=(\d+) \((\d+)/s\) skipped=\d+ malformed=0 events live=(\d+) "
                           r"prematch=(\d+) markets=(\d+)")
            s.wait_for(r"progress: applied=[1-9]\d{3,}")
            rc, log = s.stop()
        self.assertEqual(rc, 0, log)
        self.assertGreater(int(m.group(3)), 0)  # live events
        self.assertGreater(int(m.group(4)), 0)  # pre-match events
        self.assertGreater(int(m.group(5)), 0)  # markets
        live = final_counts(log)
        want_cap = h.file_digest(cap)
        self.assertEqual(h.stopped_digest(log), want_cap)
        # oddsfeed reads the data dir (snapshot and journal) as a restart would.
        self.assertEqual(h.file_digest(data), want_cap)
        # Every applied record is in the capture, and the digest tells one less.
        prefix = os.path.join(self.dir, "prefix.jsonl")
        self.assertEqual(records_and_prefix(cap, prefix), live["applied"])
        self.assertNotEqual(h.file_digest(prefix), want_cap)

        numbers = event_numbers(cap)
        empty = os.path.join(self.dir, "empty.jsonl")
        open(empty, "w").close()
        restarted, log = self.serve("--data-dir", data, "--feed", f"replay:{empty}", numbers=numbers,
                                    applied=live["applied"])
        self.assertEqual(h.stopped_digest(log), want_cap)
        self.assertEqual(final_counts(log), live)
        self.assertEqual(restarted["status"]["live_events"], live["live"])
        self.assertEqual(restarted["status"]["prematch_events"], live["prematch"])
        self.assertGreater(sum(len(v["data"]) for k, v in restarted.items() if k.startswith("/v1/odds")), 0)
        # The journal and the capture answer alike.
        replayed, log = self.serve("--feed", f"replay:{cap},speed=max", numbers=numbers, applied=live["applied"])
        self.assertEqual(h.stopped_digest(log), want_cap)
        self.assertEqual(final_counts(log), live)
        d = first_difference(restarted, replayed)
        self.assertIsNone(d, d)

    def test_stop_prints_the_live_state_digest_matching_the_capture(self):
        cap = os.path.join(self.dir, "cap.jsonl")
        with h.Server("--feed", "sim:seed=8,events=100,rate=500", "--capture", cap, "--progress", "0.5") as s:
            s.wait_for(r"progress: applied=[1-9]")
            rc, log = s.stop(signal.SIGINT)  # as Ctrl-C
        self.assertEqual(rc, 0, log)
        live = final_counts(log)
        self.assertEqual(h.stopped_digest(log), h.file_digest(cap))
        prefix = os.path.join(self.dir, "prefix.jsonl")
        self.assertEqual(records_and_prefix(cap, prefix), live["applied"])
        self.assertNotEqual(h.file_digest(prefix), h.file_digest(cap))
        # A replay of the capture ends with the same counts as the live run.
        rc, _, err = h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--feed",
                            f"replay:{cap},speed=max", "--exit-after-replay", "--progress", "0"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(final_counts(err), live)
        self.assertEqual(h.stopped_digest(err), h.file_digest(cap))


if __name__ == "__main__":
    h.main()
