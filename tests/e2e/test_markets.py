"""/v1/markets and /v1/market-groups through the real binary: every
parameter combination, language resolution and translated names in all 24
languages, the weak ETag and 304 (by tag, in a list, and `*`), gzip,
permissions, that every market the simulator sends is in the catalog of its
sport, and that --catalog with another valid file serves that file."""
import gzip
import json
import unittest

import harness as h

KEY = "markets-key"
LANGS = ["en", "de", "it", "fr", "es", "sq", "me", "tr", "el", "sr", "zh", "pt", "ru", "da", "sv", "bn", "bg",
         "pl", "ro", "cs", "hu", "sk", "nl", "et"]


class Markets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("markets")
        keys = h.write_keys(cls.dir, {"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds"]},
                                     {"key": "live-only", "permissions": ["live"]}]})
        cls.srv = h.Server("--feed", "sim:seed=9,events=200,rate=300", "--keys", keys, "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"catalog 2026")

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def req(self, path, key=KEY, headers=None):
        return h.request(self.srv.port, path, key, headers=headers)

    def get(self, path, status=200, **kw):
        r, body = self.req(path, **kw)
        self.assertEqual(r.status, status, body[:300])
        return json.loads(body)

    def test_whole_dictionary(self):
        d = self.get("/v1/markets")["data"]
        self.assertNotIn("sport", d)
        self.assertEqual(d["lang"], "en")
        self.assertNotIn("markets_full", d)
        # The interface's size: 4,873 markets, 17,227 outcomes (each id one
        # market's), about 720 coded.
        self.assertEqual(len(d["markets"]), 4873)
        self.assertEqual(len(d["outcomes"]), 17227)
        self.assertTrue(set(d["codes"]) < set(d["markets"]))
        self.assertTrue(690 < len(d["codes"]) < 750, len(d["codes"]))
        self.assertEqual(d["markets"]["1001"], "Match Winner (1X2)")
        self.assertEqual(d["markets"]["1054"], "1st Half - Asian Handicap")
        self.assertEqual(d["markets"]["1128"], "Total Corners")
        self.assertEqual([d["outcomes"][k] for k in ("2001", "2002", "2003")], ["Home", "Draw", "Away"])

    def test_sport_nested_and_groups_combinations(self):
        plain = self.get("/v1/markets?sport=1")["data"]
        self.assertEqual(plain["sport"], 1)
        self.assertTrue(450 <= len(plain["markets"]) <= 650, len(plain["markets"]))
        self.assertNotIn("markets_full", plain)
        for q in ("sport=1&nested=1", "sport=1&groups=1", "sport=1&nested=1&groups=1", "sport=1&nested=0&groups=1"):
            d = self.get("/v1/markets?" + q)["data"]
            full = d["markets_full"]
            self.assertEqual(set(full), set(plain["markets"]), q)
            m = full["1001"]
            self.assertEqual(m["name"], "Match Winner (1X2)")
            self.assertEqual(m["code"], "FT_1X2")
            self.assertEqual(m["outcomes"], {"2001": "Home", "2002": "Draw", "2003": "Away"})
            self.assertIn("main_markets", m["groups"]["prematch"], q)
            self.assertIsInstance(m["groups"]["live"], list)
        d = self.get("/v1/markets?nested=1")["data"]
        self.assertNotIn("groups", d["markets_full"]["1001"])
        self.assertNotIn("code", [k for m in d["markets_full"].values() if "code" not in m for k in m])
        e = self.get("/v1/markets?groups=1", 400)
        self.assertEqual(e, {"error": "groups=1 needs a sport parameter: groups are sport-scoped"})
        self.get("/v1/markets?nested=yes", 400)
        self.get("/v1/markets?sport=soccer", 400)
        empty = self.get("/v1/markets?sport=999")["data"]  # a sport the catalog does not have
        self.assertEqual((empty["sport"], empty["markets"], empty["codes"]), (999, {}, {}))

    def test_every_language_translates_and_unknown_falls_back(self):
        en = self.get("/v1/markets?sport=1&nested=1")["data"]["markets_full"]["1001"]["outcomes"]
        for lang in LANGS[1:]:
            d = self.get(f"/v1/markets?sport=1&nested=1&lang={lang}")["data"]
            self.assertEqual(d["lang"], lang)
            got = d["markets_full"]["1001"]["outcomes"]
            self.assertEqual(set(got), set(en))
            for oid in en:
                self.assertNotEqual(got[oid], en[oid], (lang, oid))
            self.assertEqual(set(d["markets"]), set(self.get("/v1/markets?sport=1")["data"]["markets"]))
        self.assertEqual(self.get("/v1/markets?lang=xx")["data"]["lang"], "en")
        de = self.get("/v1/markets?sport=1&lang=de")["data"]
        self.assertEqual(de["markets"]["1054"], "1. Halbzeit - Asiatisches Handicap")
        self.assertEqual(de["codes"], self.get("/v1/markets?sport=1")["data"]["codes"])  # codes never translate

    def test_etag_and_304(self):
        r, body = self.req("/v1/markets?sport=1&lang=de")
        tag = r.getheader("ETag")
        self.assertRegex(tag, r'^W/"[0-9a-f]{16}"$')
        r2, _ = self.req("/v1/markets?sport=1&lang=de")
        self.assertEqual(r2.getheader("ETag"), tag)
        r3, body3 = self.req("/v1/markets?sport=1&lang=de", headers={"If-None-Match": tag})
        self.assertEqual((r3.status, body3), (304, b""))
        self.assertEqual(r3.getheader("ETag"), tag)
        r4, _ = self.req("/v1/markets?sport=1&lang=fr", headers={"If-None-Match": tag})
        self.assertEqual(r4.status, 200)
        self.assertNotEqual(r4.getheader("ETag"), tag)
        r5, body5 = self.req("/v1/markets?sport=1&lang=de", headers={"If-None-Match": 'W/"0000000000000000", ' + tag})
        self.assertEqual((r5.status, body5), (304, b""))
        r7, body7 = self.req("/v1/markets?sport=1&lang=de", headers={"If-None-Match": "*"})  # any version
        self.assertEqual((r7.status, body7, r7.getheader("ETag")), (304, b"", tag))
        r8, body8 = self.req("/v1/markets?sport=1&lang=de", headers={"If-None-Match": 'W/"0000000000000000"'})
        self.assertEqual((r8.status, json.loads(body8)), (200, json.loads(body)))
        r9, _ = self.req("/v1/market-groups?sport=1", headers={"If-None-Match": "*"})
        self.assertEqual(r9.status, 304)
        r6, body6 = self.req("/v1/markets?sport=1&lang=de", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r6.getheader("Content-Encoding"), "gzip")
        self.assertEqual(json.loads(gzip.decompress(body6)), json.loads(body))

    def test_market_groups(self):
        d = self.get("/v1/market-groups?sport=1")["data"]
        self.assertEqual(d["sport"], 1)
        self.assertNotIn("lang", d)
        self.assertEqual(len(d["prematch"]), 13)
        self.assertEqual(d["prematch"][0]["key"], "main_markets")
        self.assertEqual(d["prematch"][0]["name"], "Main")
        self.assertIn(1001, d["prematch"][0]["markets"])
        self.assertTrue(d["live"])
        de = self.get("/v1/market-groups?sport=1&lang=de")["data"]
        self.assertEqual(de["lang"], "de")
        self.assertEqual([b["key"] for b in de["prematch"]], [b["key"] for b in d["prematch"]])
        self.assertEqual(de["prematch"][0]["name"], "Hauptwetten")
        names = self.get("/v1/markets?sport=1")["data"]["markets"]
        for b in d["prematch"] + d["live"]:
            for m in b["markets"]:
                self.assertIn(str(m), names)
        every = self.get("/v1/market-groups")["data"]
        self.assertEqual(len(every), 25)  # the 24 of the sport table and snooker (19)
        self.assertEqual(every["19"]["prematch"][0]["key"], "main_markets")
        self.assertEqual(every["1"]["prematch"], d["prematch"])
        self.assertEqual(every["5"]["sport"], 5)
        self.assertEqual(self.get("/v1/market-groups?lang=it")["data"]["lang"], "it")

    def test_keys_and_permissions(self):
        self.get("/v1/markets", 401, key=None)
        e = self.get("/v1/markets", 403, key="live-only")
        self.assertIn("odds", e["error"])
        self.get("/v1/market-groups", 403, key="live-only")

    def test_every_simulated_market_is_in_the_catalog_of_its_sport(self):
        def check():
            checked = 0
            for sport, events in self.get("/v1/live")["data"].items():
                names = self.get(f"/v1/markets?sport={sport}")["data"]["markets"]
                ids = list(events)[:20]
                if not ids:
                    continue
                odds = self.get("/v1/odds?ids=" + ",".join(ids))["data"]
                for ev in odds.values():
                    missing = [mid for mid in ev if mid not in names]
                    self.assertEqual(missing, [], f"markets of sport {sport} missing from its catalog")
                    checked += len(ev)
            return checked > 50
        h.wait_until(check, 60, "more than 50 simulated live markets", interval=0.5)


class OtherCatalog(unittest.TestCase):
    """--catalog with another valid file: that file is what the catalog
    routes serve, and its version changes every ETag."""

    @classmethod
    def setUpClass(cls):
        cls.srv = h.Server("--feed", "replay:" + h.fixture("small.jsonl") + ",speed=max", "--progress", "0",
                           "--catalog", h.fixture("catalog_small.json"))
        cls.key = cls.srv.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]{32})").group(1)
        cls.builtin = h.Server("--feed", "replay:" + h.fixture("small.jsonl") + ",speed=max", "--progress", "0")
        cls.builtin_key = cls.builtin.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]{32})").group(1)

    @classmethod
    def tearDownClass(cls):
        for srv in (cls.srv, cls.builtin):
            rc, log = srv.stop()
            srv.__exit__()
            assert rc == 0, log

    def get(self, path, srv=None, headers=None):
        srv = srv or self.srv
        r, body = h.request(srv.port, path, self.key if srv is self.srv else self.builtin_key, headers=headers)
        self.assertEqual(r.status, 200, body[:300])
        return r, json.loads(body)

    def test_the_file_is_served(self):
        self.assertIn("catalog test-small-7: 3 markets, 1 sports", self.srv.log())
        _, d = self.get("/v1/markets")
        self.assertEqual(d["data"], {
            "lang": "en",
            "markets": {"1001": "Full Time Result", "1007": "Goals Over/Under", "9901": "Test Corners"},
            "codes": {"1001": "TEST_1X2", "9901": "TEST_CORNERS"},
            "outcomes": {"2001": "Home", "2002": "Draw", "2003": "Away", "2101": "Over", "2102": "Under"}})
        _, d = self.get("/v1/markets?sport=2&nested=1&lang=de")
        self.assertEqual(d["data"]["markets_full"], {"1007": {"name": "Goals Over/Under", "groups": {"prematch": [], "live": []},
                                                              "outcomes": {"2101": "Over", "2102": "Under"}}})
        self.assertEqual(d["data"]["lang"], "de")
        self.assertEqual(self.get("/v1/markets?lang=fr")[1]["data"]["lang"], "en")  # not in this file's languages
        _, g = self.get("/v1/market-groups?sport=1&lang=de")
        self.assertEqual(g["data"], {"sport": 1, "lang": "de",
                                     "prematch": [{"key": "main_markets", "name": "Hauptwetten", "markets": [1001, 1007]},
                                                  {"key": "corner_markets", "name": "Corners", "markets": [9901]}],
                                     "live": [{"key": "main_markets", "name": "Hauptwetten", "markets": [1001]}]})
        _, every = self.get("/v1/market-groups")
        self.assertEqual(list(every["data"]), ["1"])
        # The feed is served as before: odds do not depend on the catalog.
        h.wait_until(lambda: self.get("/v1/status")[1]["last_update"] == 1767225602000, 30, "small.jsonl served")
        _, o = self.get("/v1/odds?ids=5001")
        self.assertEqual(o["data"]["s7-101.5001"]["1001"]["s"]["2001"], [190, 0, None, 1767225602000])

    def test_its_version_changes_the_etags(self):
        for q in ("/v1/markets?sport=1", "/v1/markets", "/v1/market-groups?sport=1"):
            mine, body = self.get(q)
            builtin, builtin_body = self.get(q, srv=self.builtin)
            self.assertRegex(mine.getheader("ETag"), r'^W/"[0-9a-f]{16}"$')
            self.assertNotEqual(mine.getheader("ETag"), builtin.getheader("ETag"), q)
            self.assertNotEqual(body, builtin_body, q)
            # The built-in catalog's tag is not this server's version: a full answer, not 304.
            r, again = self.get(q, headers={"If-None-Match": builtin.getheader("ETag")})
            self.assertEqual(again, body)
            self.assertEqual(h.request(self.srv.port, q, self.key,
                                       headers={"If-None-Match": mine.getheader("ETag")})[0].status, 304)


if __name__ == "__main__":
    h.main()
