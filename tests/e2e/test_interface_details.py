"""Small interface details a newcomer meets first: the status line's reason
phrase on a refused upgrade, --version on every binary, and `not_found` on
GET /v1/odds for ids that match no event."""
import gzip
import json
import os
import re
import socket
import unittest

import harness as h


def demo_key(server):
    return server.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]+)").group(1)


class InterfaceDetails(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = h.Server("--feed", "sim:seed=7,events=40,rate=200")
        cls.key = demo_key(cls.server)
        cls.server.wait_for(r"serving http://")

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def test_upgrade_refusal_says_upgrade_required(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as s:
            s.sendall(f"GET /pt-ws?api_key={self.key}&protocol=v2 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            head = b""
            while b"\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
        self.assertTrue(head.startswith(b"HTTP/1.1 426 Upgrade Required\r\n"), head[:80])

    def test_every_binary_prints_its_version_and_commit(self):
        for name in ["oddsrelay", "oddsfeed", "oddsload"]:
            rc, out, err = h.run([h.binary(name), "--version"], timeout=30)
            self.assertEqual(rc, 0, err)
            self.assertRegex(out.strip(), rf"^{name} \d+\.\d+\.\d+ \(commit ([0-9a-f]{{7,}}(-dirty)?|unknown)\)$")
            rc, out, _ = h.run([h.binary(name), "--help"], timeout=30)
            self.assertIn("--version", out, name)

    def test_readme_flags_table_is_the_help(self):
        """The README's table of oddsrelay flags names exactly the flags --help lists."""
        rc, out, _ = h.run([h.binary("oddsrelay"), "--help"], timeout=30)
        self.assertEqual(rc, 0)
        helped = set(re.findall(r"^  (--[a-z-]+)", out, re.M))
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")) as f:
            rows = [l for l in f if l.startswith("| `--")]
        tabled = {flag for row in rows for flag in re.findall(r"`(--[a-z-]+)", row.split(" | ")[0])}
        self.assertGreater(len(helped), 20)
        self.assertEqual(sorted(helped - tabled), [], "in --help, missing from the README's table")
        self.assertEqual(sorted(tabled - helped), [], "in the README's table, unknown to --help")

    def live_ids(self):
        """Ids of live events of any sport (/v1/live without a sport: by sport, then by id)."""
        def some():
            r, body = h.request(self.server.port, "/v1/live", key=self.key)
            by_sport = json.loads(body)["data"] if r.status == 200 else {}
            ids = [ev for events in by_sport.values() for ev in events]
            return ids if len(ids) >= 3 else None
        return h.wait_until(some, 30, "three live events")

    def test_odds_names_the_ids_that_match_no_event(self):
        known = self.live_ids()[:3]
        asked = ["abc", known[0], "-5", "abc", "999999999"]
        r, body = h.request(self.server.port, "/v1/odds?ids=" + ",".join(asked), key=self.key)
        self.assertEqual(r.status, 200, body)
        answer = json.loads(body)
        self.assertEqual(answer["not_found"], ["abc", "-5", "999999999"])
        self.assertEqual(list(answer["data"]), [known[0]])
        # Every id known: an empty list, and the same answer through gzip.
        path = "/v1/odds?ids=" + ",".join(known)
        r, body = h.request(self.server.port, path, key=self.key)
        self.assertEqual(json.loads(body)["not_found"], [])
        r, body = h.request(self.server.port, path + ",nope", key=self.key, headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")  # the assembled-pieces path
        answer = json.loads(gzip.decompress(body))
        self.assertEqual(answer["not_found"], ["nope"])
        self.assertEqual(sorted(answer["data"]), sorted(known))


if __name__ == "__main__":
    h.main()
