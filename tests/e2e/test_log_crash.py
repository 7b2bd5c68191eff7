"""The log through the real binary: seq counts applied records, the epoch
names a data dir's log and survives restarts, compaction keeps the dir
small while a restart answers exactly as before, and SIGKILL at random
moments never loses what a client was shown: every restart comes back to
the digest of the log prefix it reports, snapshot writes included."""
import json
import os
import random
import re
import shutil
import signal
import time
import unittest

import harness as h

KEY = "log-key"
KEYS = {"keys": [{"key": KEY, "name": "log", "permissions": ["live", "prematch", "odds", "scores"]}]}


def answers(port, live_ids):
    """REST answers a client sees: the digest computes none of these bytes."""
    out = {}
    for path in ("/v1/live", "/v1/prematch", "/v1/scores?ids=" + ",".join(live_ids[:50]),
                 "/v1/odds?ids=" + ",".join(live_ids[:50])):
        r, body = h.request(port, path, KEY)
        assert r.status == 200, (path, body)
        d = json.loads(body)
        d.pop("ts", None)
        out[path] = d
    return out


def file_digest_at(path, seq):
    rc, out, err = h.run([h.binary("oddsfeed"), "digest", path, "--seq", str(seq)])
    assert rc == 0, err
    m = re.search(r"seq=(\d+) .*digest=([0-9a-f]{16})", out)
    return int(m.group(1)), m.group(2)


def stopped(log):
    m = re.search(r"stopped; state seq=(\d+) digest=([0-9a-f]{16}) epoch=(\S+)", log)
    assert m, "no final state line in:\n" + log[-2000:]
    return int(m.group(1)), m.group(2), m.group(3)


class Log(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("log")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        h.gen_feed(cls.feed, 20000, "seed=9,events=120,rate=500,minute=100")
        with open(cls.feed) as f:
            cls.lines = f.read().splitlines()
        assert cls.lines[0].startswith('{"op":"header"'), cls.lines[0]
        cls.records = cls.lines[1:]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def server(self, *extra):
        return h.Server("--keys", self.keys, "--progress", "0", *extra)

    def test_seq_counts_applied_records_and_skips_the_rest(self):
        # Three records, a malformed line, a header, a remove of an unknown
        # event (skipped by the engine): seq counts the three.
        path = os.path.join(self.dir, "small.jsonl")
        with open(path, "w") as f:
            f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')
            f.write(self.records[0] + "\n")
            f.write("{not json\n")
            f.write('{"at":1767225600001,"op":"remove","id":"s7-1.999999"}\n')
            f.write(self.records[1] + "\n" + self.records[2] + "\n")
        with self.server("--feed", f"replay:{path},speed=max") as srv:
            srv.wait_for(r"serving http://")
            st = h.wait_done(srv.port, KEY)
            self.assertEqual(st["seq"], 3)
            self.assertEqual(st["feed"]["records_applied"], 3)
            self.assertEqual(st["feed"]["records_skipped"], 1)
            self.assertEqual(st["feed"]["malformed"], 1)
            self.assertRegex(st["epoch"], r"^[0-9a-f]{12}$")
            epoch1 = st["epoch"]
        # Without a data dir, every start is a new log.
        with self.server("--feed", f"replay:{path},speed=max") as srv:
            srv.wait_for(r"serving http://")
            self.assertNotEqual(h.wait_done(srv.port, KEY)["epoch"], epoch1)

    def test_restart_keeps_epoch_seq_and_answers_with_a_compacted_dir(self):
        data = os.path.join(self.dir, "data-restart")
        # Paced (about 4 s) so that snapshot writes keep up on a loaded machine.
        with self.server("--feed", f"replay:{self.feed},speed=10", "--data-dir", data,
                         "--snapshot-every", "1000") as srv:
            srv.wait_for(r"serving http://")
            st = h.wait_done(srv.port, KEY)
            self.assertEqual(st["seq"], len(self.records))
            epoch = st["epoch"]
            live_ids = sorted(json.loads(h.request(srv.port, "/v1/live", KEY)[1])["data"].get("1", {}).keys())
            before = answers(srv.port, live_ids)
            self.assertGreater(st["log"]["snapshots"], 0, st["log"])
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
        seq, digest, epoch_line = stopped(log)
        self.assertEqual((seq, epoch_line), (len(self.records), epoch))
        self.assertEqual(file_digest_at(self.feed, seq), (seq, digest))
        names = sorted(os.listdir(data))
        self.assertLessEqual(len([n for n in names if n.startswith("snapshot-")]), 2, names)
        self.assertTrue(all(not n.endswith(".tmp") for n in names), names)
        # The log is compacted: far smaller than the feed it holds. The odds
        # history's files beside it hold every point (till the retention
        # horizon), in a fraction of the feed's bytes.
        # Under ASan beside other tests the compactor falls behind and puts
        # snapshots off (up to 6,000 records apart, not 1,000), so the two
        # kept journals are longer: there the dir must only be smaller than
        # the feed.
        size = sum(os.path.getsize(os.path.join(data, n)) for n in names if not n.startswith("history-"))
        self.assertLess(size, os.path.getsize(self.feed) * (1 if h.sanitized() else 0.5), names)
        history = sum(os.path.getsize(os.path.join(data, n)) for n in names if n.startswith("history-"))
        self.assertLess(history, os.path.getsize(self.feed) / 8, names)
        # oddsfeed reads the dir without changing it.
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", data])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"epoch={epoch} seq={seq} ", out)
        self.assertIn(f"digest={digest}", out)
        self.assertEqual(sorted(os.listdir(data)), names)

        with self.server("--feed", "none", "--data-dir", data) as srv:
            m = srv.wait_for(r"log (\w+): snapshot at seq (\d+) .*, (\d+) journal records replayed.*seq=(\d+)")
            self.assertEqual((m.group(1), int(m.group(4))), (epoch, seq))
            newest = max(int(n[len("snapshot-"):-len(".jsonl")]) for n in names if n.startswith("snapshot-"))
            # A restart loads the newest snapshot and replays only the tail after it.
            self.assertEqual(int(m.group(2)), newest)
            self.assertEqual(int(m.group(3)), seq - newest)
            srv.wait_for(r"serving http://")
            st = h.status(srv.port, KEY)
            self.assertEqual((st["epoch"], st["seq"]), (epoch, seq))
            self.assertEqual(answers(srv.port, live_ids), before)
            rc, log = srv.stop()
        self.assertEqual(stopped(log), (seq, digest, epoch))

    def test_sigkill_at_random_moments_loses_nothing_served(self):
        data = os.path.join(self.dir, "data-kill")
        rng = random.Random(12)
        log_records = []  # what the log holds, as far as the restarts say
        # Under ASan a trial's two starts take about 11 s on a slow machine,
        # where 20 did not fit in the time allowed; six kill points there
        # check the recovery's memory, the Release build's twenty its logic.
        want = 6 if h.sanitized() else 20
        trials, deadline = 0, time.time() + 200
        while trials < want and time.time() < deadline:
            trials += 1
            # Each run replays the feed from its start on top of what the
            # dir holds, so the log is a concatenation of feed prefixes.
            base = len(log_records)
            served = base
            with self.server("--feed", f"replay:{self.feed},speed=max", "--data-dir", data,
                             "--snapshot-every", str(rng.choice([500, 2000, 5000]))) as srv:
                srv.wait_for(r"serving http://")
                until = time.time() + rng.uniform(0.0, 1.2)
                while time.time() < until:
                    try:
                        served = max(served, h.status(srv.port, KEY)["seq"])
                    except OSError:
                        pass
                srv.proc.send_signal(signal.SIGKILL)
                srv.proc.wait()
            with self.server("--feed", "none", "--data-dir", data) as srv:
                srv.wait_for(r"serving http://")
                st = h.status(srv.port, KEY)
                rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
            seq, digest, _ = stopped(log)
            self.assertEqual(st["seq"], seq)
            self.assertGreaterEqual(seq, served, f"trial {trials}: a client saw seq {served}, the restart has {seq}")
            self.assertLessEqual(seq - base, len(self.records))
            log_records += self.records[:seq - base]
            prefix = os.path.join(self.dir, "prefix.jsonl")
            with open(prefix, "w") as f:
                f.write(self.lines[0] + "\n" + "\n".join(log_records) + "\n")
            self.assertEqual(file_digest_at(prefix, seq), (seq, digest), f"trial {trials}")
        self.assertGreaterEqual(trials, want, "not enough trials in the time allowed")


if __name__ == "__main__":
    h.main()
