"""--catalog FILE while serving: a changed file is picked up on SIGHUP and on
the --catalog-reload schedule with a new ETag and the new content; the same
bytes keep the ETag; a bad file keeps the catalog that was there and logs
one line. Waits on what the server answers, never on time."""
import json
import os
import shutil
import signal
import tempfile
import unittest

import harness as h

KEY_RE = r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]{32})"


def catalog(version, names):
    """A small valid catalog: market id -> English name, sport 1."""
    outcomes = {str(2001 + i): [n] for i, n in enumerate(("Home", "Draw", "Away"))}
    markets = [{"id": mid, "sports": [1], "kind": "1x2", "period": "ft", "name": {"en": name, "family": name},
                "outcomes": [2001, 2002, 2003]} for mid, name in sorted(names.items())]
    return json.dumps({"version": version, "languages": ["en", "de"], "vocabulary": {"Home": {"en": "Home", "de": "Heim"}},
                       "outcomes": outcomes, "markets": markets,
                       "tabs": {"1": {"prematch": [{"key": "main_markets", "name": "Main", "markets": sorted(names)}],
                                      "live": []}}})


class Reload(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="catalog_reload_")
        self.path = os.path.join(self.dir, "catalog.json")
        self.srv = None

    def tearDown(self):
        if self.srv:
            rc, log = self.srv.stop()
            self.srv.__exit__()
            self.assertEqual(rc, 0, log[-3000:])
        shutil.rmtree(self.dir)

    def write(self, text):
        # Replace the file whole, as an operator's deploy does (rename).
        tmp = self.path + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)

    def start(self, *extra):
        self.srv = h.Server("--feed", "none", "--progress", "0", "--catalog", self.path, *extra)
        self.key = self.srv.wait_for(KEY_RE).group(1)

    def markets(self, headers=None, path="/v1/markets"):
        r, body = h.request(self.srv.port, path, self.key, headers=headers)
        return r, body

    def changed_from(self, etag):
        """The answer once its ETag is no longer `etag` (None while not)."""
        r, body = self.markets()
        self.assertEqual(r.status, 200, body[:300])
        return (r.getheader("ETag"), json.loads(body)) if r.getheader("ETag") != etag else None

    def test_sighup_replaces_on_change_and_keeps_on_bad_file(self):
        self.write(catalog("A", {1001: "Winner A"}))
        self.start("--catalog-reload", "0")
        r, body = self.markets()
        self.assertEqual(r.status, 200, body[:300])
        e1 = r.getheader("ETag")
        self.assertRegex(e1, r'^W/"[0-9a-f]{16}"$')
        self.assertEqual(json.loads(body)["data"]["markets"], {"1001": "Winner A"})
        r, body = self.markets({"If-None-Match": e1})
        self.assertEqual((r.status, body), (304, b""))
        groups_before = self.markets(path="/v1/market-groups?sport=1")[0].getheader("ETag")

        # The same bytes again: SIGHUP says unchanged and the ETag stays.
        before = self.srv.count(r"catalog A unchanged \(SIGHUP\)")
        self.write(catalog("A", {1001: "Winner A"}))
        self.srv.proc.send_signal(signal.SIGHUP)
        self.srv.wait_for_more(r"catalog A unchanged \(SIGHUP\)", before)
        r, _ = self.markets({"If-None-Match": e1})
        self.assertEqual(r.status, 304)

        # Catalog B: new content, new ETag; the old ETag is a full answer now.
        self.write(catalog("B", {1001: "Winner B", 1007: "Goals B"}))
        self.srv.proc.send_signal(signal.SIGHUP)
        e2, d = h.wait_until(lambda: self.changed_from(e1), 30, "a new ETag after SIGHUP")
        self.assertEqual(d["data"]["markets"], {"1001": "Winner B", "1007": "Goals B"})
        self.assertNotEqual(e2, e1)
        r, body = self.markets({"If-None-Match": e1})
        self.assertEqual(r.status, 200)
        self.assertEqual(json.loads(body)["data"]["markets"], {"1001": "Winner B", "1007": "Goals B"})
        r, body = self.markets({"If-None-Match": e2})
        self.assertEqual((r.status, body), (304, b""))
        r, body = self.markets(path="/v1/market-groups?sport=1")
        self.assertNotEqual(r.getheader("ETag"), groups_before)
        self.assertEqual(json.loads(body)["data"]["prematch"][0]["markets"], [1001, 1007])
        line = self.srv.wait_for(r"oddsrelay: catalog reloaded: A -> B, 2 markets, 3 outcomes, 1 sports \(SIGHUP\)")
        self.assertTrue(line)

        # A bad file: one clear line, B stays (content and ETag).
        for bad, why in (('{"version":"C","languages":["en"]', "not valid JSON"),
                         (catalog("C", {1001: "Winner C"}).replace('"outcomes": [2001, 2002, 2003]',
                                                                   '"outcomes": [2001, 9999]'),
                          "market 1001 names an unknown outcome 9999")):
            before = self.srv.count(r"catalog reload failed")
            self.write(bad)
            self.srv.proc.send_signal(signal.SIGHUP)
            line = self.srv.wait_for_more(r"catalog reload failed", before)
            self.assertIn("oddsrelay: catalog reload failed, keeping B (2 markets): catalog: ", line)
            self.assertIn(why, line)
            self.assertTrue(line.endswith("(SIGHUP)"), line)
            r, body = self.markets({"If-None-Match": e2})
            self.assertEqual((r.status, body), (304, b""))
            r, body = self.markets()
            self.assertEqual(json.loads(body)["data"]["markets"], {"1001": "Winner B", "1007": "Goals B"})
        # The failure was one line each, nothing else in between.
        self.assertEqual(self.srv.count(r"catalog reload failed"), 2)

    def test_schedule_picks_up_a_change_without_a_signal(self):
        self.write(catalog("A", {1001: "Winner A"}))
        self.start("--catalog-reload", "1s")
        r, body = self.markets()
        e1 = r.getheader("ETag")
        self.assertEqual(json.loads(body)["data"]["markets"], {"1001": "Winner A"})
        self.write(catalog("B", {1001: "Winner B"}))
        e2, d = h.wait_until(lambda: self.changed_from(e1), 60, "the scheduled reload", interval=0.2)
        self.assertEqual(d["data"]["markets"], {"1001": "Winner B"})
        self.srv.wait_for(r"catalog reloaded: A -> B, 1 markets, 3 outcomes, 1 sports \(schedule\)")
        # An unchanged file on schedule logs nothing: only the one reload line.
        self.assertEqual(self.srv.count(r"catalog .*\(schedule\)"), 1)
        # A bad file on schedule: logged, B kept.
        self.write("{")
        self.srv.wait_for(r"catalog reload failed, keeping B \(1 markets\): catalog: not valid JSON.*\(schedule\)", 60)
        r, body = self.markets({"If-None-Match": e2})
        self.assertEqual(r.status, 304)


if __name__ == "__main__":
    h.main()
