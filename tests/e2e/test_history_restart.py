"""The odds history on disk through the real binary: a server replays a
simulator capture onto a --data-dir, then restarts on that dir, cleanly and
after SIGKILL mid-replay. After each restart, GET /v1/odds/history for
several events answers exactly the points of every record the log kept: the
same bytes as before a clean restart, and as `oddsfeed history` says of the
feed's prefix the journal holds after a kill; held_from_seq stays 0. The
files are read after the node is ready: meanwhile it serves the state, and
the history's routes answer 503 (the read held by the test's hook)."""
import json
import os
import re
import shutil
import signal
import unittest

import harness as h
from test_oddsfeed_history import KEY, KEYS, events_with_markets, same_but_epoch, tool


def history(port, eid):
    r, body = h.request(port, f"/v1/odds/history?id={eid}", KEY)
    assert r.status == 200, (eid, r.status, body[:300])
    return body.decode()


def wait_history(port, eid, seq):
    def at():
        r, body = h.request(port, f"/v1/odds/history?id={eid}&from=0&to=0", KEY)
        return r.status == 200 and json.loads(body)["seq"] == seq
    h.wait_until(at, 120, f"the history reaching seq {seq}")


def wait_status_history(port, seq):
    """For a seeded history, whose answers for from=0&to=0 lie before what it
    holds (400 horizon_exceeded): /v1/status says where it is."""
    def at():
        hist = h.status(port, KEY)["history"]
        return not hist["loading"] and hist["seq"] == seq
    h.wait_until(at, 120, f"the history reaching seq {seq}")


class HistoryRestart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("histrestart")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.feed = h.gen_feed(os.path.join(cls.dir, "sim.jsonl"), 30000, "seed=41,events=40,rate=2000")
        with open(cls.feed) as f:
            cls.lines = f.read().splitlines()
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", cls.feed])
        assert rc == 0, err
        cls.seq = int(re.search(r" seq=(\d+)", out).group(1))
        assert cls.seq == len(cls.lines) - 1, (cls.seq, len(cls.lines))  # every record applies
        counts = events_with_markets(cls.feed)
        busiest = sorted(counts, key=lambda e: -counts[e])
        cls.events = [busiest[0], busiest[1], busiest[len(busiest) // 2], busiest[-1]]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def server(self, data, *feed):
        return h.Server("--keys", self.keys, "--progress", "0", "--data-dir", data, "--snapshot-every", "2000",
                        "--feed", *feed)

    def replayed_onto(self, data):
        """The whole feed replayed onto `data`; returns each event's answer."""
        with self.server(data, f"replay:{self.feed},speed=max") as srv:
            srv.wait_for(r"serving http://")
            wait_history(srv.port, self.events[0], self.seq)
            before = {eid: history(srv.port, eid) for eid in self.events}
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
        return before

    def check_restart(self, data, seq, want):
        """A restart with no feed answers `want` (event -> body) at `seq`."""
        with self.server(data, "none") as srv:
            m = srv.wait_for(r"history: (\d+) files, (\d+) batches to seq (\d+).*?; (rebuilt[^\n]*?|seeded[^\n]*?)(?: in \d+ ms)?\n")
            self.assertEqual(m.group(4), "rebuilt; read after ready", m.group(0))
            srv.wait_for(r"serving http://")
            st = h.status(srv.port, KEY)
            self.assertEqual(st["seq"], seq)
            self.assertGreater(st["history"]["files"], 0)
            self.assertGreater(st["history"]["file_bytes"], 0)
            wait_history(srv.port, self.events[0], seq)
            for eid in self.events:
                body = history(srv.port, eid)
                self.assertEqual(json.loads(body)["held_from_seq"], 0, eid)
                self.assertEqual(body, want[eid], eid)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)

    def test_a_clean_restart_answers_as_before(self):
        data = os.path.join(self.dir, "data-clean")
        before = self.replayed_onto(data)
        points = 0
        for eid in self.events:
            out, _ = tool(self.feed, eid)
            same_but_epoch(self, before[eid], out, eid)
            body = json.loads(out)["data"]
            points += sum(len(o["points"]) for m in body.values() for l in m.values() for o in l.values())
        self.assertGreater(points, 1000)
        names = os.listdir(data)
        self.assertTrue(any(n.startswith("history-") for n in names), names)
        self.check_restart(data, self.seq, before)
        self.check_restart(data, self.seq, before)  # and again: the rebuilt history wrote nothing twice

    def test_the_state_is_served_while_the_history_files_are_read(self):
        data = os.path.join(self.dir, "data-held")
        before = self.replayed_onto(data)
        hold = os.path.join(self.dir, "hold")
        eid = self.events[0]
        at = json.loads(before[eid])["to"]
        os.environ["ODDSRELAY_TEST_HOLD_HISTORY_READ"] = hold
        try:
            # Stopped while the read is held: promptly, and the files stay
            # as they were (the next start rebuilds the same answers).
            open(hold, "w").close()
            with self.server(data, "none") as srv:
                srv.wait_for(r"serving http://")
                self.assertTrue(h.status(srv.port, KEY)["history"]["loading"])
                rc, log = srv.stop(timeout=10)
                self.assertEqual(rc, 0, log)
                self.assertNotIn("rebuilt", log)
            with self.server(data, "none") as srv:
                srv.wait_for(r"serving http://")
                st = h.status(srv.port, KEY)
                self.assertEqual(st["seq"], self.seq)  # the state, served
                self.assertTrue(st["history"]["loading"], st["history"])
                self.assertEqual(st["history"]["points"], 0)
                r, body = h.request(srv.port, f"/v1/odds?ids={eid}", KEY)
                self.assertEqual(r.status, 200, body[:300])
                for path in (f"/v1/odds/history?id={eid}", f"/v1/odds?ids={eid}&at={at}"):
                    r, body = h.request(srv.port, path, KEY)
                    self.assertEqual(r.status, 503, (path, body[:300]))
                    self.assertEqual(r.getheader("Retry-After"), "1", path)
                    self.assertEqual(json.loads(body)["error"],
                                     "Odds history starting: its files are being read back", path)
                os.unlink(hold)
                m = srv.wait_for(r"history: [^\n]*; (rebuilt|seeded)[^\n]*\n")
                self.assertIn("rebuilt; read after ready in", m.group(0))
                h.wait_until(lambda: not h.status(srv.port, KEY)["history"]["loading"], 30, "the history read")
                for e in self.events:
                    self.assertEqual(history(srv.port, e), before[e], e)
                r, body = h.request(srv.port, f"/v1/odds?ids={eid}&at={at}", KEY)
                self.assertEqual(r.status, 200, body[:300])
                rc, log = srv.stop()
                self.assertEqual(rc, 0, log)
        finally:
            del os.environ["ODDSRELAY_TEST_HOLD_HISTORY_READ"]
            if os.path.exists(hold):
                os.unlink(hold)

    def test_a_history_begun_on_a_dir_kept_without_it_survives_the_next_restart(self):
        # Half the feed onto a data dir with --history off; the other half
        # with the history on, which is seeded at the restart; then a
        # restart keeps what it recorded since (its seed beside its files).
        data = os.path.join(self.dir, "data-seeded")
        half = len(self.lines) // 2
        parts = []
        for name, lines in (("first", self.lines[1:half]), ("second", self.lines[half:])):
            path = os.path.join(self.dir, f"{name}.jsonl")
            with open(path, "w") as f:
                f.write("\n".join([self.lines[0]] + lines) + "\n")
            parts.append(path)
        # Paced, not at max speed: a catch-up puts snapshots off (the log's
        # catch_up_factor), and a sanitized build can stay behind for the
        # whole half, leaving one snapshot and the journal from seq 1, which
        # the history would rebuild from rather than seed.
        with self.server(data, f"replay:{parts[0]},speed=5", "--history", "off") as srv:
            srv.wait_for(r"serving http://")
            h.wait_until(lambda: h.status(srv.port, KEY)["seq"] == half - 1, 60, "the first half")
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
        self.assertNotIn("journal-%020d.jsonl" % 1, os.listdir(data), "the first half's journal was not compacted")
        with self.server(data, f"replay:{parts[1]},speed=max") as srv:
            m = srv.wait_for(r"history: [^\n]*; (rebuilt|seeded)[^\n]*\n")
            self.assertEqual(m.group(1), "seeded", m.group(0))
            srv.wait_for(r"serving http://")
            wait_status_history(srv.port, self.seq)
            before = {eid: history(srv.port, eid) for eid in self.events}
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)
        self.assertTrue(any(n.startswith("history-seed-") for n in os.listdir(data)), os.listdir(data))
        points = sum(len(o["points"]) for eid in self.events for m in json.loads(before[eid])["data"].values()
                     for l in m.values() for o in l.values())
        self.assertGreater(points, 100)  # the second half's
        with self.server(data, "none") as srv:
            m = srv.wait_for(r"history: [^\n]*; (rebuilt|seeded)[^\n]*\n")
            self.assertEqual(m.group(1), "rebuilt", m.group(0))
            srv.wait_for(r"serving http://")
            wait_status_history(srv.port, self.seq)
            for eid in self.events:
                body = history(srv.port, eid)
                self.assertEqual(json.loads(body)["held_from_seq"], half, eid)
                self.assertEqual(body, before[eid], eid)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log)

    def test_sigkill_mid_replay_keeps_every_point_of_what_the_log_kept(self):
        # Two kills mid-replay (15 s of feed time at 5x), one as soon as a
        # replay at max speed has applied a record (the history thread
        # furthest behind; a kill before the first leaves no event to ask).
        for trial, (speed, after) in enumerate((("5", 6000), ("5", 17000), ("max", 1))):
            data = os.path.join(self.dir, f"data-kill{trial}")
            with self.server(data, f"replay:{self.feed},speed={speed}") as srv:
                srv.wait_for(r"serving http://")
                h.wait_until(lambda: h.status(srv.port, KEY)["seq"] >= after, 60, f"seq {after}")
                srv.proc.send_signal(signal.SIGKILL)
                srv.proc.wait()
            with self.server(data, "none") as srv:
                srv.wait_for(r"serving http://")
                seq = h.status(srv.port, KEY)["seq"]
                srv.stop()
            self.assertGreaterEqual(seq, after)
            if speed != "max":
                self.assertLess(seq, self.seq, "the kill came after the replay's end")
            prefix = os.path.join(self.dir, f"prefix{trial}.jsonl")
            with open(prefix, "w") as f:
                f.write("\n".join(self.lines[:seq + 1]) + "\n")
            want = {}
            for eid in self.events:
                r, out, _ = h.run([h.binary("oddsfeed"), "history", prefix, "--id", eid])
                want[eid] = out if r == 0 else None
            with self.server(data, "none") as srv:
                m = srv.wait_for(r"history: .*; (rebuilt|seeded[^\n]*)")
                self.assertEqual(m.group(1), "rebuilt", m.group(0))
                srv.wait_for(r"serving http://")
                wait_status_history(srv.port, seq)  # not by an event: an early kill may precede it
                for eid in self.events:
                    r, body = h.request(srv.port, f"/v1/odds/history?id={eid}", KEY)
                    if want[eid] is None:
                        self.assertEqual(r.status, 404, (trial, eid))
                        continue
                    same_but_epoch(self, body.decode(), want[eid], (trial, eid, seq))
                    self.assertEqual(json.loads(body)["held_from_seq"], 0)
                rc, log = srv.stop()
                self.assertEqual(rc, 0, log)


if __name__ == "__main__":
    h.main()
