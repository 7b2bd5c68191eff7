"""GET /v1/odds?ids=&at=: the book at a moment, byte for byte. A generated
feed (tests/e2e/test_odds_history.py's: prices, flags and `s` moving, lines
withdrawn, outcomes dropped, markets removed, an event removed) is written
into a FIFO in chunks; after each chunk, once the engine holds it, the test
keeps what /v1/odds answered and the seq it answered at. Then, with the
whole feed applied, /v1/odds?at=<that record's at> must answer exactly
those bytes plus `seq` and `epoch`."""
import json
import os
import random
import shutil
import unittest

import harness as h
import scripted_feed
from test_odds_history import EVENTS, KEY, KEYS, build_feed

UNKNOWN = "s7-1.999"
IDS = ",".join(EVENTS + [UNKNOWN])


class OddsAt(unittest.TestCase):
    def setUp(self):
        self.dir = h.scratch("odds-at")
        self.keys = h.write_keys(self.dir, KEYS)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def get(self, port, path, code=200):
        r, body = h.request(port, path, KEY)
        self.assertEqual(r.status, code, (path, body[:300]))
        return body

    def test_the_book_at_each_moment_is_what_odds_answered_then(self):
        recs = build_feed(os.path.join(self.dir, "gen.jsonl"), n=500, seed=11)
        for r in recs:
            r.pop("at")  # the scripted feed stamps its own, 10 ms apart
        fifo = scripted_feed.ScriptedFeed(os.path.join(self.dir, "feed.fifo"))
        rng = random.Random(5)
        seen = []  # (seq, at of that record, /v1/odds body)
        digests = {}  # seq: /v1/odds?digest=1's digest then
        with h.clean_server(self, "--keys", self.keys, "--progress", "0", "--feed",
                            f"replay:{fifo.path},speed=max") as srv:
            fifo.open()
            srv.wait_for(r"serving http://")
            written = 0
            while written < len(recs):
                chunk = recs[written:written + rng.randint(1, 60)]
                at = fifo.write(*chunk)
                written += len(chunk)
                h.wait_status(srv.port, KEY, lambda st: st["seq"] == written, f"seq {written}")
                seen.append((written, at, self.get(srv.port, f"/v1/odds?ids={IDS}")))
                d = json.loads(self.get(srv.port, f"/v1/odds?ids={IDS}&digest=1"))
                self.assertEqual(d["seq"], written)
                digests[written] = d["digest"]
            fifo.close()
            epoch = h.status(srv.port, KEY)["epoch"]
            # The history trails the engine by a batch or two.
            h.wait_until(lambda: json.loads(self.get(srv.port, f"/v1/odds?ids={IDS}&at={at}"))["seq"] == written,
                         30, "the history reaching the feed's end")
            self.assertGreater(len(seen), 10)
            for seq, at, live in seen:
                want = live.replace(b'{"success":true,', b'{"success":true,"seq":%d,"epoch":"%s",' % (seq, epoch.encode()), 1)
                self.assertEqual(self.get(srv.port, f"/v1/odds?ids={IDS}&at={at}"), want, f"at seq {seq}")
                # digest=1: the digest /v1/odds gave at that seq, the same bytes besides.
                with_digest = self.get(srv.port, f"/v1/odds?ids={IDS}&at={at}&digest=1")
                self.assertEqual(json.loads(with_digest)["digest"], digests[seq], f"at seq {seq}")
                self.assertEqual(with_digest.rsplit(b',"digest":', 1)[0] + b"}", want)
            # Before the first record: nothing known yet.
            first = json.loads(self.get(srv.port, f"/v1/odds?ids={IDS}&at={scripted_feed.T0}"))
            self.assertEqual((first["seq"], first["data"], first["not_found"]), (0, {}, EVENTS + [UNKNOWN]))
            err = json.loads(self.get(srv.port, f"/v1/odds?ids={IDS}&at=soon", 400))
            self.assertEqual(err, {"error": "Invalid at parameter: expected unix ms"})


if __name__ == "__main__":
    h.main()
