"""A relay loop that is still writing its connections when the next batches
arrive takes them at once (RelayLoop::finish_turn), so the connections it
has yet to write carry them in the same write. With 400 subscribers on one
loop and the simulator at 3,000 records/s, a pass over the connections
lasts longer than the gap between batches: the loop must take batches
mid-pass (relay.mid_write_intakes), make fewer writes than it delivers
frames and INFOs, and still give every subscriber every group in order
(oddsload checks each INFO's from = the previous seq + 1 and each frame's
place), none closed as slow. The *Uring class runs it through io_uring,
the *Paced one with --relay-pace, where batches also wait for the pace."""
import json
import os
import shutil
import tempfile
import unittest

import harness as h
from wsraw import RawWs, reset_after_first_frame

KEY = "intake-key"
SUBS = 400


class MidWriteIntake(unittest.TestCase):
    IO = ()  # the relay's write path (--relay-io), or its pace (--relay-pace)
    PACED = False

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-intake-")
        keys = os.path.join(cls.dir, "keys.json")
        with open(keys, "w") as f:
            json.dump({"keys": [{"key": KEY, "name": "intake", "sandbox": True, "ws_connections": SUBS + 10,
                                 "permissions": ["live", "prematch", "odds"]}]}, f)
        # Under ASan a pass over 400 connections lasts longer than the gap
        # between batches at a third of the rate; at 3,000 records/s a slow
        # machine's sanitized relay fell so far behind that a subscriber got
        # less than one INFO in 6 s.
        rate = 1000 if h.sanitized() else 3000
        cls.srv = h.Server("--feed", f"sim:events=300,rate={rate}", "--keys", keys, "--progress", "0",
                           "--relay-threads", "1", *cls.IO)
        cls.srv.wait_for(r"serving http://")
        if "--relay-io" in cls.IO and cls.srv.wait_for(r"relay writes: (\S+)").group(1) != "io_uring":
            cls.tearDownClass()
            raise unittest.SkipTest("no io_uring here")

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__(None, None, None)
        shutil.rmtree(cls.dir)
        assert rc == 0, log

    def relay(self):
        return h.status(self.srv.port, KEY)["relay"]

    def test_batches_arriving_mid_pass_ride_along_in_order(self):
        before = self.relay()
        rc, out, err = h.run([h.binary("oddsload"), "--url", f"http://127.0.0.1:{self.srv.port}", "--key", KEY,
                              # Under ASan on a slow machine 400 connections took over 5 s to open.
                              "--connections", str(SUBS), "--duration", "12" if h.sanitized() else "5",
                              "--warmup", "6" if h.sanitized() else "2", "--progress", "0",
                              "--json"], timeout=120)
        self.assertEqual(rc, 0, err)
        r = json.loads(out)
        self.assertEqual((r["connected"], r["failed"], r["closed_early"], r["gaps"], r["out_of_order"]),
                         (SUBS, 0, 0, 0, 0), r)
        self.assertGreater(r["infos"], SUBS, r)
        after = self.relay()
        intakes = after["mid_write_intakes"] - before["mid_write_intakes"]
        writes = after["writes"] - before["writes"]
        self.assertGreater(intakes, 0, after)
        # Every write carries at least one frame or INFO; taken mid-pass,
        # several groups share one.
        self.assertLess(writes, r["frames"] + r["infos"], (writes, r))
        self.assertEqual(after["closed_slow"] + after["closed_stalled"] + after["closed_soft_limit"], 0, after)
        paced = after["paced_passes"] - before["paced_passes"]
        if self.PACED:
            self.assertGreater(paced, 0, after)
        else:
            self.assertEqual(paced, 0, after)


class MidWriteIntakeUring(MidWriteIntake):
    """The same with each turn's writes one io_uring submission: the batches
    taken mid-pass still ride along, in order, nothing lost."""
    IO = ("--relay-io", "uring")


class MidWriteIntakePaced(MidWriteIntake):
    """The same with --relay-pace 50: a loop whose passes take half its time
    makes batches that come sooner wait for the next pass (relay.paced_passes
    counts the waits), and they still reach every subscriber, in order,
    nothing lost."""
    IO = ("--relay-pace", "50")
    PACED = True

    def test_resets_while_a_pass_waits_for_the_pace(self):
        # A paced drain leaves the connections it marked listed until the
        # timer's pass; a client that resets meanwhile is freed in between.
        # Listed still, the pass wrote into freed memory (ASan: a
        # heap-use-after-free in write_pass, found by CI). Subscribers that
        # stop reading stay marked by every batch, then reset at once.
        path = f"/pt-ws?api_key={KEY}&protocol=v2"
        for _ in range(6):
            reset_after_first_frame([RawWs(self.srv.port, path, rcvbuf=4096) for _ in range(100)], hold=0.2)
        h.wait_until(lambda: self.relay()["pt_ws_connections"] == 0, what="every reset stream gone")
        self.assertIsNone(self.srv.proc.poll(), self.srv.log())
        self.assertGreater(self.relay()["paced_passes"], 0)


if __name__ == "__main__":
    h.main()
