"""The simulator feed through the real binary: the progress line, and what
it applied equals what it captured and journaled (same state digest), also
after a restart from the journal."""
import os
import shutil
import signal
import tempfile
import unittest

import harness as h


class SimCapture(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="oddsrelay-e2e-")

    def tearDown(self):
        shutil.rmtree(self.dir)

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
        want_cap = h.file_digest(cap)
        self.assertEqual(h.stopped_digest(log), want_cap)
        self.assertEqual(h.file_digest(os.path.join(data, "journal.jsonl")), want_cap)
        empty = os.path.join(self.dir, "empty.jsonl")
        open(empty, "w").close()
        rc, _, err = h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--data-dir", data,
                            "--feed", f"replay:{empty}", "--exit-after-replay", "--progress", "0"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(h.stopped_digest(err), want_cap)

    def test_stop_prints_the_live_state_digest_matching_the_capture(self):
        cap = os.path.join(self.dir, "cap.jsonl")
        with h.Server("--feed", "sim:seed=8,events=100,rate=500", "--capture", cap, "--progress", "0.5") as s:
            s.wait_for(r"progress: applied=[1-9]")
            rc, log = s.stop(signal.SIGINT)  # as Ctrl-C
        self.assertEqual(rc, 0, log)
        self.assertEqual(h.stopped_digest(log), h.file_digest(cap))


if __name__ == "__main__":
    h.main()
