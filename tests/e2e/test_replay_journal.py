"""Replay, the journal and restarts, through the real binary: a replayed file
and a restart from the journal give the state digest of the file itself; a
torn journal tail is cut, never half-applied; bad lines are skipped and
reported with their numbers."""
import gzip
import os
import shutil
import tempfile
import time
import unittest

import harness as h


def relay(*extra, timeout=120):
    return h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--progress", "0",
                  "--exit-after-replay", *extra], timeout=timeout)


class ReplayJournal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-e2e-")
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        rc, _, err = h.run([h.binary("oddsfeed"), "gen", "-o", cls.feed, "--records", "30000",
                            "--sim", "seed=5,events=300,rate=500,minute=200"])
        assert rc == 0, err
        cls.empty = os.path.join(cls.dir, "empty.jsonl")
        with open(cls.empty, "w") as f:
            f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_replay_then_restart_from_journal(self):
        want = h.file_digest(self.feed)
        data = os.path.join(self.dir, "data1")
        rc, _, err = relay("--feed", f"replay:{self.feed},speed=max", "--data-dir", data)
        self.assertEqual(rc, 0, err)
        self.assertIn("replay of", err)
        self.assertIn("30000 records, 0 malformed", err)
        self.assertEqual(h.stopped_digest(err), want)
        # Restart on the same data dir with no new input: the journal alone
        # brings the state back.
        rc, _, err = relay("--feed", f"replay:{self.empty}", "--data-dir", data)
        self.assertEqual(rc, 0, err)
        self.assertIn("journal replayed: 30000 records, 0 bad", err)
        self.assertEqual(h.stopped_digest(err), want)

    def test_torn_journal_tail_is_cut_and_never_half_applied(self):
        data = os.path.join(self.dir, "data2")
        rc, _, err = relay("--feed", f"replay:{self.feed},speed=max", "--data-dir", data)
        self.assertEqual(rc, 0, err)
        journal = os.path.join(data, "journal.jsonl")
        with open(journal, "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        intact = os.path.join(self.dir, "intact.jsonl")
        with open(intact, "wb") as f:
            f.write(b"\n".join(lines[:-1]) + b"\n")
        want = h.file_digest(intact)
        # Cut the last record in the middle, as a crash mid-write would.
        size = os.path.getsize(journal)
        os.truncate(journal, size - len(lines[-1]) // 2 - 1)
        rc, _, err = relay("--feed", f"replay:{self.empty}", "--data-dir", data)
        self.assertEqual(rc, 0, err)
        self.assertIn("torn last line", err)
        self.assertRegex(err, r"torn tail cut: \d+ bytes")
        self.assertIn("journal replayed: 29999 records", err)
        self.assertEqual(h.stopped_digest(err), want)
        self.assertEqual(os.path.getsize(journal), os.path.getsize(intact))

    def test_gzip_replay_matches_plain(self):
        gz = os.path.join(self.dir, "feed.jsonl.gz")
        with open(self.feed, "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        rc, _, err = relay("--feed", f"replay:{gz},speed=max")
        self.assertEqual(rc, 0, err)
        self.assertEqual(h.stopped_digest(err), h.file_digest(self.feed))

    def test_malformed_lines_are_reported_and_skipped(self):
        rc, _, err = relay("--feed", "replay:" + h.fixture("malformed.jsonl") + ",speed=max")
        self.assertEqual(rc, 0, err)
        self.assertIn("line 4 skipped: invalid JSON", err)
        self.assertIn("line 7 skipped: 'at' missing or not an integer", err)
        self.assertIn("6 records, 2 malformed, 1 unknown ops", err)
        self.assertRegex(err, r"applied=6 .*markets=3")
        self.assertEqual(h.stopped_digest(err), h.file_digest(h.fixture("malformed.jsonl")))

    def test_paced_replay_follows_at(self):
        # small.jsonl spans 2.0 s of `at`; at speed=2 it takes about 1 s.
        t0 = time.time()
        rc, _, err = relay("--feed", "replay:" + h.fixture("small.jsonl") + ",speed=2")
        elapsed = time.time() - t0
        self.assertEqual(rc, 0, err)
        self.assertGreaterEqual(elapsed, 0.95)
        self.assertIn("4 records, 0 malformed", err)


if __name__ == "__main__":
    h.main()
