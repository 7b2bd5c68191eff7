"""oddsload opens every shape of subscriber the relay serves and reports
bytes per subscriber beside frames: --compress (permessage-deflate
negotiated, fewer bytes on the wire than frame bytes), --sse (/pt-sse),
--conflate-ms (INFOs, and frames per channel, at most every N ms),
--events/--markets (the filter reaches the server: a filter naming no event
gets INFOs only), --filter-file (a filter per subscriber), --url and
--connect."""
import json
import os
import shutil
import tempfile
import unittest

import harness as h

KEY = "load-key"


class Shapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-oddsload-")
        keys = os.path.join(cls.dir, "keys.json")
        with open(keys, "w") as f:
            json.dump({"keys": [{"key": KEY, "name": "load", "ws_connections": 20,
                                 "permissions": ["live", "prematch", "odds"]}]}, f)
        cls.srv = h.Server("--feed", "sim:rate=500", "--keys", keys, "--progress", "0")
        cls.srv.wait_for(r"serving http://")

    @classmethod
    def tearDownClass(cls):
        cls.srv.__exit__(None, None, None)
        shutil.rmtree(cls.dir)

    def load(self, *args, server=None):
        server = server or ["--url", f"http://127.0.0.1:{self.srv.port}"]
        rc, out, err = h.run([h.binary("oddsload"), *server, "--key", KEY, "--connections", "2", "--duration", "2.5",
                              "--progress", "0", "--json", *args], timeout=60)
        self.assertEqual(rc, 0, err)
        r = json.loads(out)
        self.assertEqual((r["connected"], r["failed"], r["closed_early"], r["gaps"]), (2, 0, 0, 0), r)
        self.assertGreater(r["infos"], 0, r)
        return r

    def test_plain_and_compressed(self):
        plain = self.load(server=["--connect", f"127.0.0.1:{self.srv.port}"])
        self.assertEqual(plain["compressed"], 0)
        sub = plain["per_subscriber"]
        self.assertGreater(sub["wire_bytes_per_s"], sub["bytes_per_s"])  # frame headers
        z = self.load("--compress")
        self.assertEqual(z["compressed"], 2)
        sub = z["per_subscriber"]
        self.assertLess(sub["wire_bytes_per_s"], 0.6 * sub["bytes_per_s"], z)

    def test_sse(self):
        r = self.load("--sse")
        self.assertGreater(r["frames"], r["infos"])
        self.assertGreater(r["per_subscriber"]["wire_bytes_per_s"], r["per_subscriber"]["bytes_per_s"])

    def test_conflate_ms(self):
        r = self.load("--conflate-ms", "500", "--compress")
        # 2 subscribers, 2.5 s, at most one INFO per 500 ms each (and the first at once).
        self.assertLessEqual(r["infos"], 2 * (2.5 / 0.5 + 1), r)
        # Subscriber 0's busiest channel: at most one frame per interval
        # over the measured span (plus the one at its start), and some.
        busiest = r["first_subscriber"]["busiest_channel_frames_per_s"] * r["seconds"]
        self.assertGreater(busiest, 0, r)
        self.assertLessEqual(busiest, r["seconds"] / 0.5 + 1.01, r)

    def test_filters(self):
        r = self.load("--events", "987654321", "--markets", "1001")
        self.assertEqual(r["frames"], r["infos"] + 2, r)  # the ready INFO each, then INFOs alone

    def test_filter_file_gives_each_subscriber_its_line(self):
        path = os.path.join(self.dir, "filters.txt")
        with open(path, "w") as f:
            f.write("events=987654321\nmarkets=1001\n")
        r = self.load("--filter-file", path)
        # Subscriber 0 admits no event (INFOs only); subscriber 1 gets market 1001's frames.
        self.assertEqual(r["first_subscriber"]["busiest_channel_frames_per_s"], 0, r)
        self.assertGreater(r["frames"], r["infos"] + 2, r)

    def test_bad_url(self):
        rc, out, err = h.run([h.binary("oddsload"), "--url", "127.0.0.1:1", "--duration", "1"])
        self.assertEqual(rc, 2)
        self.assertIn("--url", err)


if __name__ == "__main__":
    h.main()
