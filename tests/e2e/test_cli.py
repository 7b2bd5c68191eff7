"""The command lines of oddsrelay, oddsfeed and the benchmarks: help, bad flags, bad files."""
import json
import os
import re
import subprocess
import tempfile
import unittest

import harness as h


class Cli(unittest.TestCase):
    def test_help_lists_every_flag(self):
        rc, out, _ = h.run([h.binary("oddsrelay"), "--help"])
        self.assertEqual(rc, 0)
        listed = set(re.findall(r"^  (--[a-z-]+)", out, re.M))
        core = ["--listen", "--feed", "--capture", "--data-dir", "--keys", "--catalog", "--progress",
                "--exit-after-replay", "--header-timeout", "--idle-timeout", "--rate-window", "--ws-update",
                "--ws-ping", "--max-queue-bytes", "--stream-sports", "--stream-ttl", "--webhook-retries",
                "--webhook-timeout", "--retain-ended", "--help"]
        for flag in core:
            self.assertIn(flag, listed)
        for spec in ["sim[:seed=N,events=N,rate=N,minute=MS,tick=MS,correct=N]", "replay:FILE[,speed=X]"]:
            self.assertIn(spec, out)
        # Every flag the help names is one the parser knows: given with an
        # empty inline value and an unknown option after it, the parser stops
        # at the flag (bad value) or at the unknown option, never calling the
        # listed flag unknown. (Nothing starts: the command line is refused.)
        for flag in sorted(listed):
            rc, _, err = h.run([h.binary("oddsrelay"), flag + "=", "--frobnicate"], timeout=30)
            self.assertEqual(rc, 2, (flag, err))
            self.assertNotIn(f"unknown option '{flag}'", err)
        rc, out, _ = h.run([h.binary("oddsfeed"), "--help"])
        self.assertEqual(rc, 0)
        for cmd in ["gen", "inspect", "digest", "history"]:
            self.assertIn(cmd, out)
        # After a command too: help, not a file or an option named --help.
        for cmd in ["gen", "inspect", "digest", "publish", "history"]:
            rc, sub, err = h.run([h.binary("oddsfeed"), cmd, "--help"])
            self.assertEqual((rc, sub), (0, out), err)

    def test_every_benchmark_answers_help(self):
        # --help prints the usage and measures nothing; a wrong command line
        # is refused with the usage (or the bad argument) and status 2.
        perf = os.path.join(h.args().build_dir, "perf")
        if not os.path.isdir(perf):
            self.skipTest("this build has no benchmarks (ODDSRELAY_PERF off)")
        for name in ["bench_history", "bench_line_history", "bench_memory"]:
            rc, out, err = h.run([os.path.join(perf, name), "--help"], timeout=30)
            self.assertEqual((rc, err), (0, ""), name)
            self.assertTrue(out.startswith("usage: " + name), (name, out))
            self.assertNotIn("command:", out)  # bench_line_history ran instead
        for cmd, words in [(["bench_history"], "usage: bench_history"),
                           (["bench_history", "/nonexistent/feed.jsonl"], "cannot read /nonexistent/feed.jsonl"),
                           (["bench_history", "/dev/null", "12x"], "bad batch '12x'"),
                           (["bench_line_history", "1", "300"], "usage: bench_line_history"),
                           (["bench_line_history", "1", "300", "200", "4000", "-5"], "bad virtual_minutes '-5'"),
                           (["bench_memory", "10", "4"], "usage: bench_memory"),
                           (["bench_memory", "10", "4", "2", "0"], "bad outcomes '0'")]:
            rc, out, err = h.run([os.path.join(perf, cmd[0])] + cmd[1:], timeout=30)
            self.assertNotEqual(rc, 0, cmd)
            self.assertIn(words, err.splitlines()[0], cmd)
            self.assertEqual(out, "", cmd)
        for name in ["bench_apply", "bench_parse", "bench_log"]:  # Google Benchmark's own flags
            rc, out, _ = h.run([os.path.join(perf, name), "--help"], timeout=30)
            self.assertEqual(rc, 0, name)
            self.assertIn("--benchmark_filter", out, name)

    def test_reading_a_capture_says_how_far_it_is(self):
        # inspect, digest and history print "oddsfeed: N records" on stderr
        # every million records (every ODDSFEED_PROGRESS_EVERY here); stdout,
        # which scripts read, is the same with it or without it.
        with tempfile.TemporaryDirectory() as d:
            feed = os.path.join(d, "feed.jsonl")
            rc, _, err = h.run([h.binary("oddsfeed"), "gen", "-o", feed, "--records", "2500"])
            self.assertEqual(rc, 0, err)
            with open(feed) as f:
                event = next(json.loads(l)["id"] for l in f if '"op":"event"' in l)
            for cmd in [["inspect", feed], ["digest", feed], ["history", feed, "--id", event]]:
                quiet = subprocess.run([h.binary("oddsfeed")] + cmd, capture_output=True, text=True, timeout=120,
                                       env={k: v for k, v in os.environ.items() if k != "ODDSFEED_PROGRESS_EVERY"})
                told = subprocess.run([h.binary("oddsfeed")] + cmd, capture_output=True, text=True, timeout=120,
                                      env=dict(os.environ, ODDSFEED_PROGRESS_EVERY="1000"))
                self.assertEqual((quiet.returncode, told.returncode), (0, 0), (cmd, quiet.stderr, told.stderr))
                progress = r"^oddsfeed: (\d+) records$"
                self.assertEqual(re.findall(progress, told.stderr, re.M), ["1000", "2000"], cmd)
                self.assertEqual(re.findall(progress, quiet.stderr, re.M), [], cmd)
                self.assertEqual(quiet.stdout, told.stdout, cmd)

    def assert_refused(self, cmd, words):
        rc, out, err = h.run(cmd, timeout=30)
        self.assertNotEqual(rc, 0, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(words, lines[0])

    def test_bad_flags_exit_non_zero_with_one_line(self):
        self.assert_refused([h.binary("oddsrelay"), "--frobnicate"], "unknown option '--frobnicate'")
        self.assert_refused([h.binary("oddsrelay"), "--listen", "nope"], "bad --listen")
        self.assert_refused([h.binary("oddsrelay"), "--feed", "sim:rate=-1"], "bad --feed sim option")
        self.assert_refused([h.binary("oddsrelay"), "--feed", "replay:/nonexistent/f.jsonl"], "cannot read replay file")
        self.assert_refused([h.binary("oddsrelay"), "--keys", "/nonexistent/keys.json"], "cannot read keys file")
        self.assert_refused([h.binary("oddsrelay"), "--catalog", "/nonexistent/catalog.json"], "catalog: cannot read")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
            bad.write('{"version": 3}')
            bad.flush()
            self.assert_refused([h.binary("oddsrelay"), "--catalog", bad.name], "version is not a string")
        self.assert_refused([h.binary("oddsfeed"), "frobnicate"], "unknown command")
        self.assert_refused([h.binary("oddsfeed"), "inspect", "/nonexistent"], "cannot open")

    def test_unusable_data_dir_is_refused(self):
        with tempfile.NamedTemporaryFile() as f:  # a file where a directory should be
            rc, _, err = h.run([h.binary("oddsrelay"), "--data-dir", os.path.join(f.name, "sub"),
                                "--feed", "replay:" + h.fixture("small.jsonl"), "--exit-after-replay"])
            self.assertNotEqual(rc, 0)
            self.assertIn("cannot create data dir", err)

    def test_unsupported_feed_version_stops_the_replay(self):
        rc, _, err = h.run([h.binary("oddsrelay"), "--feed", "replay:" + h.fixture("version2.jsonl") + ",speed=max",
                            "--exit-after-replay", "--listen", f"127.0.0.1:{h.free_port()}"])
        self.assertEqual(rc, 1, err)
        self.assertIn("unsupported feed format version 2", err)

    def test_inspect_counts(self):
        rc, out, err = h.run([h.binary("oddsfeed"), "inspect", h.fixture("malformed.jsonl")])
        self.assertEqual(rc, 0, err)
        self.assertIn("records: 6", out)
        self.assertIn("malformed: 2", out)
        self.assertIn("unknown_ops: 1", out)
        self.assertIn("line 4:", out)
        self.assertRegex(out, r"market\s+3")


if __name__ == "__main__":
    h.main()
