"""/v1/markets and /v1/market-groups through the real binary: every
parameter combination, language resolution and translated names in all 24
languages, the weak ETag and 304, gzip, permissions, and that every market
the simulator sends is in the catalog of its sport."""
import gzip
import json
import os
import shutil
import tempfile
import time
import unittest

import harness as h

KEY = "markets-key"
LANGS = ["en", "de", "it", "fr", "es", "sq", "me", "tr", "el", "sr", "zh", "pt", "ru", "da", "sv", "bn", "bg",
         "pl", "ro", "cs", "hu", "sk", "nl", "et"]


class Markets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-markets-")
        keys = os.path.join(cls.dir, "keys.json")
        with open(keys, "w") as f:
            json.dump({"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds"]},
                                {"key": "live-only", "permissions": ["live"]}]}, f)
        cls.srv = h.Server("--feed", "sim:seed=9,events=200,rate=300", "--keys", keys, "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"catalog 2026")

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rc == 0, log

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
        self.assertGreater(len(d["markets"]), 4000)
        self.assertTrue(set(d["codes"]) < set(d["markets"]))
        self.assertGreater(len(d["codes"]), 600)
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
        r5, _ = self.req("/v1/markets?sport=1&lang=de", headers={"If-None-Match": 'W/"0000000000000000", ' + tag})
        self.assertEqual(r5.status, 304)
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
        self.assertEqual(len(every), 24)
        self.assertEqual(every["1"]["prematch"], d["prematch"])
        self.assertEqual(every["5"]["sport"], 5)
        self.assertEqual(self.get("/v1/market-groups?lang=it")["data"]["lang"], "it")

    def test_keys_and_permissions(self):
        self.get("/v1/markets", 401, key=None)
        e = self.get("/v1/markets", 403, key="live-only")
        self.assertIn("odds", e["error"])
        self.get("/v1/market-groups", 403, key="live-only")

    def test_every_simulated_market_is_in_the_catalog_of_its_sport(self):
        time.sleep(1)
        live = self.get("/v1/live")["data"]
        checked = 0
        for sport, events in live.items():
            names = self.get(f"/v1/markets?sport={sport}")["data"]["markets"]
            ids = list(events)[:20]
            if not ids:
                continue
            odds = self.get("/v1/odds?ids=" + ",".join(ids))["data"]
            for ev in odds.values():
                missing = [mid for mid in ev if mid not in names]
                self.assertEqual(missing, [], f"markets of sport {sport} missing from its catalog")
                checked += len(ev)
        self.assertGreater(checked, 50)


if __name__ == "__main__":
    h.main()
