"""Replay, the journal and restarts, through the real binary: a replayed file
and a restart from the journal give the state of the file itself; a torn
journal tail is cut, never half-applied; gzip replays like plain; bad lines
are skipped and reported with their numbers; a paced replay waits for each
record's `at`. Every "same state" is checked twice: by the state digest,
and by what the REST API answers (lists, odds, scores, settlements and
status counters of every event the feed names), which the digest does not
compute."""
import gzip
import json
import os
import re
import shutil
import unittest

import harness as h

KEY = "replay-journal-key-0123456789"


def relay(*extra, timeout=120):
    return h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--progress", "0",
                  "--exit-after-replay", *extra], timeout=timeout)


def event_numbers(path):
    """Every event number a feed file names, sorted."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return sorted({int(re.search(r"(\d+)$", json.loads(l)["id"]).group(1))
                       for l in f if l.strip() and '"op":"header"' not in l})


def paced_feed(directory, name):
    """small.jsonl's first three records (0.0, 0.5 and 1.0 s of `at`), then
    its last one an hour later: at speed=1 the first three come in about a
    second and the fourth not while a test runs. Returns the path and the
    records (lines) it was made from."""
    with open(h.fixture("small.jsonl")) as f:
        header, *recs = [l for l in f if l.strip()]
    last = json.loads(recs[3])
    last["at"] = json.loads(recs[0])["at"] + 3_600_000
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(header + "".join(recs[:3]) + json.dumps(last) + "\n")
    return path, recs


def get(port, path):
    r, body = h.request(port, path, KEY)
    assert r.status == 200, (path, r.status, body[:300])
    return json.loads(body)


def answers(port, numbers, applied):
    """What the REST API serves once `applied` records are in: the lists, and
    odds, scores and settlements of every event in `numbers`."""
    for _ in range(5):
        st = h.wait_status(port, KEY, lambda s: s["feed"]["done"] and s["feed"]["records_applied"] >= applied,
                           "the replay")
        out = {"status": {k: st[k] for k in ("live_events", "prematch_events", "last_update")},
               "feed": {k: st["feed"][k] for k in ("records_applied", "records_skipped", "malformed")}}
        for p in ("/v1/sports", "/v1/live", "/v1/prematch"):
            out[p] = get(port, p)
        for p in ("/v1/odds", "/v1/scores", "/v1/settlements"):
            for i in range(0, len(numbers), 100):
                out[f"{p} {i}"] = get(port, f"{p}?ids=" + ",".join(map(str, numbers[i:i + 100])))
        # A batch is published just after its records count as applied: if
        # the last one landed while we read, read again.
        if get(port, "/v1/status")["seq"] == st["seq"]:
            return out
    raise AssertionError("the state kept changing after the feed was done")


def first_difference(a, b, path=""):
    """Where two JSON values first differ, or None."""
    if type(a) is not type(b) or not isinstance(a, (dict, list)):
        return None if a == b else f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"
    if isinstance(a, dict) and a.keys() != b.keys():
        return f"{path}: keys {sorted(a.keys() ^ b.keys())[:10]} in one only"
    if isinstance(a, list) and len(a) != len(b):
        return f"{path}: {len(a)} != {len(b)} items"
    for k in (a if isinstance(a, dict) else range(len(a))):
        d = first_difference(a[k], b[k], f"{path}/{k}")
        if d:
            return d
    return None


class ReplayJournal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("e2e")
        cls.keys = h.write_keys(cls.dir, {"keys": [{"key": KEY, "name": "t", "sandbox": True,
                                         "permissions": ["live", "prematch", "odds", "scores"]}]})
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        h.gen_feed(cls.feed, 30000, "seed=5,events=300,rate=500,minute=200")
        cls.numbers = event_numbers(cls.feed)
        cls.empty = os.path.join(cls.dir, "empty.jsonl")
        with open(cls.empty, "w") as f:
            f.write('{"op":"header","format":"oddsfeed","version":1,"provider":"s7"}\n')
        cls.want = h.file_digest(cls.feed)
        # One record less: the digest must tell it from the whole file.
        short = os.path.join(cls.dir, "short.jsonl")
        with open(cls.feed, "rb") as src, open(short, "wb") as dst:
            dst.write(b"".join(src.readlines()[:-1]))
        cls.short_digest = h.file_digest(short)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def serve(self, *extra, applied):
        """Runs the server until `applied` records are in; returns (REST
        answers, stopped digest, log)."""
        with h.Server("--keys", self.keys, "--progress", "0", *extra) as s:
            s.wait_for(r"serving http://")
            a = answers(s.port, self.numbers, applied)
            rc, log = s.stop()
        self.assertEqual(rc, 0, log)
        return a, h.stopped_digest(log), log

    def assert_same_answers(self, a, b):
        self.assertEqual(sorted(a), sorted(b))
        d = first_difference(a, b)
        self.assertIsNone(d, d)

    def assert_substantial(self, a):
        """The compared answers hold a real state, not empty lists."""
        odds = sum(len(v["data"]) for k, v in a.items() if k.startswith("/v1/odds"))
        ended = sum(1 for k, v in a.items() if k.startswith("/v1/settlements")
                    for e in v["data"].values() if e["status"] == "ended")
        self.assertGreater(a["status"]["live_events"], 0)
        self.assertGreater(a["status"]["prematch_events"], 0)
        self.assertGreater(odds, 100)
        self.assertGreater(ended, 0)

    def test_digest_tells_one_record(self):
        self.assertNotEqual(self.want, self.short_digest)

    def test_replay_then_restart_from_journal(self):
        data = os.path.join(self.dir, "data1")
        before, digest, log = self.serve("--feed", f"replay:{self.feed},speed=max", "--data-dir", data,
                                         "--snapshot-journal", "0", applied=30000)
        self.assertIn("30000 records, 0 malformed", log)
        self.assertEqual(digest, self.want)
        self.assertEqual(before["feed"]["records_applied"], 30000)
        self.assert_substantial(before)
        # Restart on the same data dir with no new input: the journal alone
        # brings the state back.
        after, digest, log = self.serve("--feed", f"replay:{self.empty}", "--data-dir", data, applied=30000)
        # No snapshot yet (one comes every 50,000 records, the journal-share
        # trigger is off): the journal alone.
        self.assertRegex(log, r"snapshot at seq 0 \(0 events\), 30000 journal records replayed, 0 bad; seq=30000 ")
        self.assert_same_answers(after, before)
        self.assertEqual(digest, self.want)
        self.assertNotEqual(digest, self.short_digest)

    def test_torn_journal_tail_is_cut_and_never_half_applied(self):
        data = os.path.join(self.dir, "data2")
        rc, _, err = relay("--feed", f"replay:{self.feed},speed=max", "--data-dir", data, "--snapshot-journal", "0")
        self.assertEqual(rc, 0, err)
        journal = os.path.join(data, "journal-%020d.jsonl" % 1)  # the one segment: no snapshot yet
        full = h.file_digest(journal)
        with open(journal, "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        self.assertEqual(len(lines), 30001)  # header + records
        intact = os.path.join(self.dir, "intact.jsonl")
        with open(intact, "wb") as f:
            f.write(b"\n".join(lines[:-1]) + b"\n")
        want = h.file_digest(intact)
        self.assertNotEqual(want, full)
        # Cut the last record in the middle, as a crash mid-write would.
        size = os.path.getsize(journal)
        os.truncate(journal, size - len(lines[-1]) // 2 - 1)
        restarted, digest, log = self.serve("--feed", f"replay:{self.empty}", "--data-dir", data, applied=29999)
        self.assertIn("torn last line", log)
        self.assertRegex(log, r"torn tail cut: \d+ bytes")
        self.assertRegex(log, r", 29999 journal records replayed, 1 bad, torn tail cut: \d+ bytes; seq=29999 ")
        self.assertEqual(digest, want)
        self.assertEqual(os.path.getsize(journal), os.path.getsize(intact))
        # The same answers as a replay of the intact records alone.
        replayed, digest, _ = self.serve("--feed", f"replay:{intact},speed=max", applied=29999)
        self.assertEqual(digest, want)
        self.assertEqual(restarted["feed"]["records_applied"], 29999)
        self.assert_substantial(restarted)
        self.assert_same_answers(restarted, replayed)

    def test_journal_keeps_each_line_as_read(self):
        """With a data dir, the journal holds each record's line as the feed
        wrote it (spacing and field order kept), with its checksum: the
        record is not encoded again (engine/core/pipeline.h, record text)."""
        spaced = os.path.join(self.dir, "spaced.jsonl")
        with open(self.feed) as src:
            lines = [l for l in src.read().splitlines()[:400] if '"op":"header"' not in l]
        # Python's default separators: ", " and ": ", which the feed writer never uses.
        lines = [json.dumps(dict(reversed(list(json.loads(l).items())))) for l in lines]
        with open(spaced, "w") as f:
            f.write("\n".join(lines) + "\n")
        data = os.path.join(self.dir, "data-spaced")
        rc, _, err = relay("--feed", f"replay:{spaced},speed=max", "--data-dir", data, "--snapshot-journal", "0")
        self.assertEqual(rc, 0, err)
        self.assertEqual(h.stopped_digest(err), h.file_digest(spaced))
        with open(os.path.join(data, "journal-%020d.jsonl" % 1)) as f:
            journaled = [re.sub(r',"xxh":"[0-9a-f]{16}"}$', "}", l) for l in f.read().splitlines()[1:]]
        self.assertEqual(len(journaled), len(lines))
        self.assertEqual(journaled, lines)

    def test_lines_with_whitespace_or_junk_around_them(self):
        """Tabs and CRs around a line are whitespace: the record applies and
        comes back from the journal after a restart (a tab after the object
        once made its journal line corrupt, and the restart lost it). Text
        after the object makes the line malformed, reported with its number."""
        padded = os.path.join(self.dir, "padded.jsonl")
        with open(self.feed) as src:
            lines = [l for l in src.read().splitlines()[:600] if '"op":"header"' not in l]
        out = []
        for i, l in enumerate(lines):
            out.append(["\t" + l, l + "\t", " \t" + l + "\t \r", l][i % 4])
        junk = [lines[10] + " x", lines[20] + lines[21]]
        out[100:100] = junk  # lines 101 and 102 of the file
        with open(padded, "w") as f:
            f.write("\n".join(out) + "\n")
        data = os.path.join(self.dir, "data-padded")
        rc, _, err = relay("--feed", f"replay:{padded},speed=max", "--data-dir", data, "--snapshot-journal", "0")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{len(lines)} records, 2 malformed", err)
        self.assertIn("line 101 skipped: invalid JSON", err)
        self.assertIn("line 102 skipped: invalid JSON", err)
        want = h.stopped_digest(err)
        self.assertEqual(want, h.file_digest(padded))
        restarted, digest, log = self.serve("--feed", f"replay:{self.empty}", "--data-dir", data,
                                            applied=len(lines))
        self.assertRegex(log, rf"{len(lines)} journal records replayed, 0 bad; seq={len(lines)} ")
        self.assertEqual(digest, want)

    def test_gzip_replay_matches_plain(self):
        gz = os.path.join(self.dir, "feed.jsonl.gz")
        with open(self.feed, "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        from_gz, digest, _ = self.serve("--feed", f"replay:{gz},speed=max", applied=30000)
        self.assertEqual(digest, self.want)
        from_plain, digest, _ = self.serve("--feed", f"replay:{self.feed},speed=max", applied=30000)
        self.assertEqual(digest, self.want)
        self.assert_substantial(from_gz)
        self.assert_same_answers(from_gz, from_plain)

    def test_malformed_lines_are_reported_and_skipped(self):
        rc, _, err = relay("--feed", "replay:" + h.fixture("malformed.jsonl") + ",speed=max")
        self.assertEqual(rc, 0, err)
        self.assertIn("line 4 skipped: invalid JSON", err)
        self.assertIn("line 7 skipped: 'at' missing or not an integer", err)
        self.assertIn("6 records, 2 malformed, 1 unknown ops", err)
        self.assertRegex(err, r"applied=6 .*markets=3")
        self.assertEqual(h.stopped_digest(err), h.file_digest(h.fixture("malformed.jsonl")))

    def test_paced_replay_waits_for_each_records_at(self):
        paced, recs = paced_feed(self.dir, "paced.jsonl")
        with h.Server("--keys", self.keys, "--progress", "0", "--feed", f"replay:{paced},speed=1") as s:
            s.wait_for(r"serving http://")
            # records_applied is the engine's counter, bumped before the
            # snapshot REST answers from is published: wait for both.
            st = h.wait_status(s.port, KEY, lambda st: st["feed"]["records_applied"] >= 3 and st["seq"] >= 3,
                               "three records")
            # The first three in order, the fourth held back for its `at`.
            self.assertEqual(st["feed"]["records_applied"], 3)
            self.assertFalse(st["feed"]["done"])
            self.assertEqual(st["last_update"], json.loads(recs[2])["at"])
            odds = get(s.port, "/v1/odds?ids=5001")["data"]
            self.assertEqual(odds["s7-101.5001"]["1001"]["s"]["2001"][0], 185)  # the first market, not the last
            score = get(s.port, "/v1/scores?ids=5001")["data"]
            self.assertEqual(len(score), 1)
            self.assertNotIn("replay of", s.log())
            rc, log = s.stop()
        self.assertEqual(rc, 0, log)


    def test_threads_are_named_for_their_stage_and_the_compactor_yields(self):
        """Each thread of the data path carries its stage's name (for top -H
        and perf's --sort comm), and the compactor alone runs 10 nice levels
        below the rest: the paced replay keeps every thread alive."""
        paced, _ = paced_feed(self.dir, "paced-threads.jsonl")
        data = os.path.join(self.dir, "data-threads")
        with h.Server("--keys", self.keys, "--progress", "0", "--feed", f"replay:{paced},speed=1",
                      "--data-dir", data) as s:
            s.wait_for(r"serving http://")
            h.wait_status(s.port, KEY, lambda st: st["feed"]["records_applied"] >= 3, "three records")
            threads = {}
            task = f"/proc/{s.proc.pid}/task"
            for t in os.listdir(task):
                try:
                    with open(f"{task}/{t}/comm") as f:
                        name = f.read().strip()
                    with open(f"{task}/{t}/stat") as f:
                        nice = int(f.read().rsplit(")", 1)[1].split()[16])  # field 19 (proc(5))
                except FileNotFoundError:  # a thread that ended meanwhile
                    continue
                threads.setdefault(name, []).append(nice)
            for stage in ("replay", "engine", "delivery", "reclaim", "compactor", "relay-0"):
                self.assertEqual(len(threads.get(stage, [])), 1, (stage, threads))
            base = threads["engine"][0]
            self.assertEqual(threads["compactor"], [min(19, base + 10)], threads)
            self.assertEqual({n for name, ns in threads.items() if name != "compactor" for n in ns}, {base}, threads)
            rc, log = s.stop()
        self.assertEqual(rc, 0, log)

if __name__ == "__main__":
    h.main()
