"""/v1/settlements end to end: a replayed feed of 36 events that covers
every settlement rule (ended scores of all shapes, abandoned, cancelled,
expunged, postponed, no score, corrected score, suspended and flagged
outcomes at the last read, V1-pending markets, an unknown market, a live
event with include_inplay), checked through HTTP; then the server is
restarted on the same --data-dir with nothing new and must answer byte for
byte the same."""
import json
import os
import unittest

import harness as h

KEY = "settle-key"
CATALOG = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "catalog.json")))
NAMES = {int(k): " & ".join(v) for k, v in CATALOG["outcomes"].items()}


def soccer_market(kind, team=None, suffix=None):
    for m in CATALOG["markets"]:
        if 1 in m["sports"] and m["kind"] == kind and m["period"] == "ft" and m["team"] == team and \
                (suffix is None or m["name"]["en"].endswith(suffix)):
            return m
    raise AssertionError(f"no soccer market {kind}")


def oid(market, name):
    return next(o for o in market["outcomes"] if NAMES[o] == name)


DC, EH, OE = soccer_market("double_chance"), soccer_market("handicap_european"), soccer_market("odd_even")
EXACT, BANDS = soccer_market("exact_goals"), soccer_market("goal_bands")
TT_HOME = soccer_market("team_total", "home")
C_BTTS, C_TOT = soccer_market("combo_1x2_btts"), soccer_market("combo_1x2_total", suffix="2.5")
T0 = 1767225600000


def lines_full():
    """Every V1 family on one event, plus V1-pending and unknown markets."""
    return [
        (1001, {"s": {"s": 0, "o": {"2001": [200, 0], "2002": [320, 0], "2003": [380, 0]}}}),
        (DC["id"], {"s": {"s": 0, "o": {str(oid(DC, x)): [130, 0] for x in ("1X", "12", "X2")}}}),
        (1009, {"s": {"s": 0, "o": {"2010": [150, 0], "2011": [260, 0]}}}),
        (1007, {"s2.5": {"s": 0, "o": {"2008": [190, 0], "2009": [190, 0]}},
                "s3": {"s": 0, "o": {"2008": [240, 0], "2009": [155, 0]}},
                "s2.25": {"s": 0, "o": {"2008": [180, 0], "2009": [200, 0]}}}),
        (1005, {"s-0.5": {"s": 0, "o": {"2006": [190, 0], "2007": [190, 0]}},
                "s-1": {"s": 0, "o": {"2006": [260, 0], "2007": [150, 0]}},
                "s-0.75": {"s": 0, "o": {"2006": [220, 0], "2007": [165, 0]}}}),
        (EH["id"], {"s-1": {"s": 0, "o": {str(oid(EH, "Home")): [300, 0], str(oid(EH, "Draw")): [350, 0], str(oid(EH, "Away")): [200, 0]}}}),
        (1004, {"s1:0": {"s": 0, "o": {"2004": [700, 0]}}, "s2:1": {"s": 0, "o": {"2004": [900, 0]}},
                "s1:1": {"s": 0, "o": {"2004": [650, 0]}}, "s": {"s": 0, "o": {"2005": [400, 0]}}}),
        (1019, {"s": {"s": 0, "o": {"2018": [180, 0], "2019": [200, 0]}}}),
        (OE["id"], {"s": {"s": 0, "o": {str(oid(OE, "Odd")): [190, 0], str(oid(OE, "Even")): [190, 0]}}}),
        (EXACT["id"], {"s": {"s": 0, "o": {str(oid(EXACT, x)): [500, 0] for x in ("0", "1", "2", "3", "6+")}}}),
        (BANDS["id"], {"s": {"s": 0, "o": {str(oid(BANDS, x)): [300, 0] for x in ("0-1", "2-3", "6+")}}}),
        (TT_HOME["id"], {"s1.5": {"s": 0, "o": {str(oid(TT_HOME, "Over")): [220, 0], str(oid(TT_HOME, "Under")): [160, 0]}}}),
        (C_BTTS["id"], {"s": {"s": 0, "o": {str(oid(C_BTTS, x)): [500, 0] for x in ("Home & Yes", "Draw & No")}}}),
        (C_TOT["id"], {"s": {"s": 0, "o": {str(oid(C_TOT, x)): [500, 0] for x in ("Home & Over & 2.5", "Draw & Under & 2.5")}}}),
        (1128, {"s9.5": {"s": 0, "o": {"2024": [190, 0], "2025": [190, 0]}}}),
        (1054, {"s-0.5": {"s": 0, "o": {"2020": [190, 0], "2021": [190, 0]}}}),
        (999999, {"s": {"s": 0, "o": {"2001": [190, 0]}}}),
    ]


class Feed:
    def __init__(self):
        self.lines = [json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"})]
        self.at = T0
        # Per event number, worked out from the records as docs/settlement.md
        # says: the at of the record that set the current final (the first
        # `ended`, or a later one with another score or result), and of the
        # last score record.
        self.final_at, self.final, self.score_at = {}, {}, {}

    def rec(self, **r):
        self.at += 100
        r = {"at": self.at, **r}
        self.lines.append(json.dumps(r, separators=(",", ":")))
        if r["op"] == "score":
            n = int(r["id"].rsplit(".", 1)[1])
            self.score_at[n] = self.at
            if r["status"] == "ended":
                final = (r.get("home"), r.get("away"), r.get("result", "completed"))
                if self.final.get(n) != final:
                    self.final[n], self.final_at[n] = final, self.at

    def event(self, n, live=True):
        self.rec(op="event", id=f"s7-1.{n}", event={
            "c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11, "ts": T0 // 1000,
            "h": f"Home {n}", "a": f"Away {n}", "co": 101, "map": {f"s7_l1.{n}": {"p": 0}}, "s": 0, "live": live,
            "sport": 1})

    def markets(self, n, markets):
        for mid, lines in markets:
            self.rec(op="market", id=f"s7-1.{n}", market=mid, lines=lines)

    def score(self, n, status, home=None, away=None, **extra):
        r = {"op": "score", "id": f"s7-1.{n}", "status": status, **extra}
        if home is not None:
            r["home"], r["away"] = home, away
        self.rec(**r)


# Regular full-time scores: every family against every shape of result.
SCORES = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 1), (1, 2), (2, 2), (3, 0), (0, 3), (3, 3), (5, 4), (2, 0),
          (4, 1), (1, 3), (6, 0), (2, 3)]
SPECIAL = {  # number: what happens to it
    100: "abandoned", 101: "cancelled", 102: "expunged", 103: "postponed", 104: "no score", 105: "corrected",
    106: "suspended", 107: "live", 108: "scheduled", 109: "same score twice", 110: "ended then removed",
    111: "abandoned no score", 112: "corrected twice", 113: "live 0-0", 114: "live 3-2", 115: "ended 4-4",
    116: "ended 0-5", 117: "ended 7-2", 118: "ended 2-2 flagged draw", 119: "scheduled postponed twice",
}


def build_feed(path):
    f = Feed()
    for i, (hs, as_) in enumerate(SCORES):
        n = 1 + i
        f.event(n)
        f.markets(n, lines_full())
        f.score(n, "live", 0, 0, clock="01:00")
        f.score(n, "ended", hs, as_)
    for n, what in SPECIAL.items():
        f.event(n)
        f.markets(n, lines_full())
        f.score(n, "live", 1, 0)
        if what == "abandoned":
            f.score(n, "ended", 1, 0, result="abandoned")
        elif what == "abandoned no score":
            f.score(n, "ended", result="abandoned")
        elif what == "cancelled":
            f.score(n, "ended", 0, 0, result="cancelled")
        elif what == "expunged":
            f.score(n, "ended", 2, 0, result="expunged")
        elif what in ("postponed", "scheduled postponed twice"):
            f.score(n, "scheduled", postponed=True)
            if what.endswith("twice"):
                f.score(n, "scheduled", postponed=True)
        elif what == "no score":
            f.score(n, "ended")
        elif what == "corrected":
            f.score(n, "ended", 1, 0)
            f.score(n, "ended", 1, 1)
        elif what == "corrected twice":
            f.score(n, "ended", 2, 0)
            f.score(n, "ended", 2, 1)
            f.score(n, "ended", 3, 1)
        elif what == "suspended":
            # The last read before full time: the 2.5 line suspended, Under 3 flagged.
            f.rec(op="market", id=f"s7-1.{n}", market=1007,
                  lines={"s2.5": {"s": 1, "o": {"2008": [190, 0], "2009": [190, 0]}},
                         "s3": {"s": 0, "o": {"2008": [240, 0], "2009": [155, 8]}}})
            f.score(n, "ended", 2, 1)
        elif what == "ended 2-2 flagged draw":
            f.rec(op="market", id=f"s7-1.{n}", market=1001,
                  lines={"s": {"s": 0, "o": {"2001": [200, 0], "2002": [320, 4], "2003": [380, 0]}}})
            f.score(n, "ended", 2, 2)
        elif what == "live":
            f.score(n, "live", 2, 1, clock="70:00")
        elif what == "live 0-0":
            f.score(n, "live", 0, 0, clock="10:00")
        elif what == "live 3-2":
            f.score(n, "live", 3, 2, clock="80:00")
        elif what == "scheduled":
            f.score(n, "scheduled")
        elif what == "same score twice":
            f.score(n, "ended", 1, 0)
            f.score(n, "ended", 1, 0)
        elif what == "ended then removed":
            f.score(n, "ended", 0, 2)
            f.rec(op="remove", id=f"s7-1.{n}")
        elif what.startswith("ended "):
            hs, as_ = map(int, what.split()[1].split("-"))
            f.score(n, "ended", hs, as_)
    with open(path, "w") as out:
        out.write("\n".join(f.lines) + "\n")
    return f


def expected_regular(hs, as_):
    """Independent expectations for the plain families: (market, line, outcome) -> (result, reason)."""
    t = hs + as_
    wl = lambda b: ("win" if b else "lose", None)
    e = {
        (1001, "s", 2001): wl(hs > as_), (1001, "s", 2002): wl(hs == as_), (1001, "s", 2003): wl(as_ > hs),
        (1007, "s2.5", 2008): wl(t > 2.5), (1007, "s2.5", 2009): wl(t < 2.5),
        (1007, "s2.25", 2008): ("void", "quarter line: void in V1"),
        (1005, "s-0.75", 2007): ("void", "quarter line: void in V1"),
        (1005, "s-0.5", 2006): wl(hs - 0.5 > as_), (1019, "s", 2018): wl(hs > 0 and as_ > 0),
        (1004, "s2:1", 2004): wl((hs, as_) == (2, 1)),
        (1004, "s", 2005): wl((hs, as_) not in ((1, 0), (2, 1), (1, 1))),
        (1128, "s9.5", 2024): ("pending", "match stats are not yet published"),
        (1054, "s-0.5", 2020): ("pending", "half-time score not captured in V1"),
        (999999, "s", 2001): ("pending", "market not in the catalog"),
        (DC["id"], "s", oid(DC, "12")): wl(hs != as_),
        (OE["id"], "s", oid(OE, "Odd")): wl(t % 2 == 1),
        (EXACT["id"], "s", oid(EXACT, "6+")): wl(t >= 6),
        (BANDS["id"], "s", oid(BANDS, "2-3")): wl(2 <= t <= 3),
        (TT_HOME["id"], "s1.5", oid(TT_HOME, "Over")): wl(hs > 1.5),
        (C_BTTS["id"], "s", oid(C_BTTS, "Home & Yes")): wl(hs > as_ and hs > 0 and as_ > 0),
        (C_TOT["id"], "s", oid(C_TOT, "Draw & Under & 2.5")): wl(hs == as_ and t < 2.5),
    }
    e[(1007, "s3", 2008)] = ("void", "push") if t == 3 else wl(t > 3)
    e[(1005, "s-1", 2006)] = ("void", "push") if hs - 1 == as_ else wl(hs - 1 > as_)
    e[(1009, "s", 2010)] = ("void", "push") if hs == as_ else wl(hs > as_)
    e[(EH["id"], "s-1", oid(EH, "Draw"))] = wl(hs - 1 == as_)
    e[(EH["id"], "s-1", oid(EH, "Home"))] = ("void", "push") if hs - 1 == as_ else wl(hs - 1 > as_)
    return e


class Settlements(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("settle")
        cls.keys = h.write_keys(cls.dir, {"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds", "scores"]},
                                         {"key": "no-scores", "permissions": ["live", "odds"]}]})
        cls.feed = os.path.join(cls.dir, "settle.jsonl")
        cls.built = build_feed(cls.feed)
        cls.records = len(cls.built.lines) - 1
        cls.data = os.path.join(cls.dir, "data")
        cls.srv = cls.start("replay:" + cls.feed + ",speed=max")

    @classmethod
    def start(cls, feed):
        srv = h.Server("--feed", feed, "--keys", cls.keys, "--data-dir", cls.data, "--progress", "0")
        srv.wait_for(r"serving http://")
        srv.wait_for(r"replay of .* finished")
        # The source is done; wait until the served snapshot holds the feed's
        # last record (its clock is that record's at).
        h.wait_until(lambda: h.status(srv.port, KEY)["last_update"] == cls.built.at, 60, "the last record served")
        return srv

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def get(self, path, status=200, key=KEY, raw=False):
        r, body = h.request(self.srv.port, path, key)
        self.assertEqual(r.status, status, body[:300])
        return body if raw else json.loads(body)

    def settle(self, numbers, extra=""):
        ids = ",".join(f"s7-1.{n}" for n in numbers)
        return self.get(f"/v1/settlements?ids={ids}{extra}")

    def outcome(self, rec, market, line, o):
        x = rec["markets"][str(market)]["lines"][line]["outcomes"][str(o)]
        return x["result"], x.get("reason")

    def all_outcomes(self, rec):
        for m in rec["markets"].values():
            for l in m["lines"].values():
                yield from l["outcomes"].values()

    def test_every_record_and_event_of_the_feed_is_served(self):
        st = self.get("/v1/status")
        self.assertEqual((st["feed"]["source"], st["feed"]["malformed"], st["feed"]["records_skipped"]),
                         ("replay", 0, 0))
        self.assertEqual(st["feed"]["records_applied"], self.records)
        numbers = list(range(1, len(SCORES) + 1)) + list(SPECIAL)
        r = self.settle(numbers)
        self.assertEqual(r["not_found"], [])
        self.assertEqual(sorted(r["data"]), sorted(f"s7-1.{n}" for n in numbers))
        self.assertEqual(len(r["data"]), 36)

    def test_envelope_and_record_shape(self):
        r = self.settle([5, 424242])
        self.assertEqual((r["success"], r["version"]), (True, "v1"))
        self.assertEqual(r["policy_url"], "/docs/settlement")
        self.assertEqual(r["not_found"], ["s7-1.424242"])
        rec = r["data"]["s7-1.5"]
        self.assertEqual(rec["fixture_id"], "s7-1.5")
        self.assertEqual((rec["status"], rec["result"], rec["mode"]), ("ended", "completed", "final"))
        self.assertEqual(rec["score"], {"home": 2, "away": 1})
        self.assertIsInstance(rec["settled_at"], int)
        cov = rec["coverage"]
        n = sum(1 for _ in self.all_outcomes(rec))
        self.assertEqual(cov["covered"] + cov["void"] + cov["pending"], n)
        self.assertEqual(cov["markets"], len(rec["markets"]))
        m = rec["markets"]["1007"]
        self.assertEqual(m["name"], "Total Goals")
        self.assertEqual(m["lines"]["s2.5"]["line"], "2.5")
        self.assertEqual(rec["markets"]["1001"]["lines"]["s"]["line"], None)
        self.assertEqual(m["lines"]["s2.5"]["outcomes"]["2008"], {"name": "Over", "result": "win"})
        self.assertEqual(rec["markets"]["999999"]["name"], "Market 999999")
        doc = self.get("/docs/settlement", key="", raw=True).decode()
        self.assertIn("Settlement", doc)

    def test_every_regular_score(self):
        numbers = list(range(1, len(SCORES) + 1))
        data = self.settle(numbers)["data"]
        for n, (hs, as_) in zip(numbers, SCORES):
            rec = data[f"s7-1.{n}"]
            self.assertEqual(rec["score"], {"home": hs, "away": as_})
            for (mk, line, o), want in expected_regular(hs, as_).items():
                self.assertEqual(self.outcome(rec, mk, line, o), want, f"{hs}-{as_} market {mk} {line} {o}")

    def test_special_events(self):
        d = self.settle(list(SPECIAL))["data"]
        rec = lambda n: d[f"s7-1.{n}"]
        for n, why in ((100, "event abandoned"), (101, "event cancelled"), (102, "event expunged")):
            self.assertEqual(self.outcome(rec(n), 1001, "s", 2001), ("void", why))
            self.assertEqual(self.outcome(rec(n), 1128, "s9.5", 2024)[0], "pending")  # not settlable stays pending
        for n in (103, 108, 119, 107):
            self.assertTrue(all(o["result"] == "pending" and o["reason"] == "event has not ended"
                                for o in self.all_outcomes(rec(n))), n)
        self.assertEqual(rec(103)["status"], "scheduled")
        for n in (104, 111):
            self.assertEqual({(o["result"], o.get("reason")) for o in self.all_outcomes(rec(n))},
                             {("void", "final score unavailable")} if n == 104 else
                             {("void", "event abandoned"), ("pending", "match stats are not yet published"),
                              ("pending", "half-time score not captured in V1"),
                              ("pending", "market not in the catalog")})
        self.assertIsNone(rec(104)["score"])
        self.assertEqual(rec(105)["score"], {"home": 1, "away": 1})  # rule 9: the correction rules
        self.assertEqual(self.outcome(rec(105), 1001, "s", 2002), ("win", None))
        self.assertEqual(rec(112)["score"], {"home": 3, "away": 1})
        self.assertEqual(self.outcome(rec(106), 1007, "s2.5", 2008), ("void", "suspended at last read"))
        self.assertEqual(self.outcome(rec(106), 1007, "s3", 2009), ("void", "suspended at last read"))
        self.assertEqual(self.outcome(rec(106), 1007, "s3", 2008), ("void", "push"))
        self.assertEqual(self.outcome(rec(118), 1001, "s", 2002), ("void", "suspended at last read"))
        self.assertEqual(self.outcome(rec(118), 1001, "s", 2001), ("lose", None))
        self.assertEqual(rec(109)["score"], {"home": 1, "away": 0})
        self.assertEqual(rec(110)["status"], "ended")  # removed from the lists, still settled
        self.assertEqual(self.outcome(rec(110), 1001, "s", 2003), ("win", None))
        self.assertEqual(self.outcome(rec(117), EXACT["id"], "s", oid(EXACT, "6+")), ("win", None))
        self.assertEqual(self.outcome(rec(117), 1004, "s", 2005), ("win", None))

    def test_settled_at_is_the_record_that_set_the_final(self):
        numbers = list(range(1, len(SCORES) + 1)) + list(SPECIAL)
        d = self.settle(numbers)["data"]
        final_at, score_at = self.built.final_at, self.built.score_at
        for n in numbers:
            rec = d[f"s7-1.{n}"]
            # Ended: the record that set the current final; otherwise the last score record.
            want = final_at[n] if rec["status"] == "ended" else score_at[n]
            self.assertEqual(rec["settled_at"], want, (n, SPECIAL.get(n)))
        # The cases that tell the rule apart: 105 ended 1-0 and was corrected
        # to 1-1 a record later, so its settled_at is the correction's at;
        # 109's second `ended` repeats the score, so its first one counts;
        # 112 was corrected twice: the last correction counts.
        ended = lambda n: [json.loads(l)["at"] for l in self.built.lines[1:]
                           if f'"id":"s7-1.{n}"' in l and '"status":"ended"' in l]
        self.assertEqual(len(ended(105)), 2)
        self.assertEqual(d["s7-1.105"]["settled_at"], ended(105)[1])
        self.assertEqual(len(ended(109)), 2)
        self.assertEqual(d["s7-1.109"]["settled_at"], ended(109)[0])
        self.assertEqual(d["s7-1.112"]["settled_at"], ended(112)[2])
        self.assertEqual(d["s7-1.107"]["status"], "live")

    def test_include_inplay(self):
        live = self.settle([107, 113, 114], "&include_inplay=1")["data"]
        r = live["s7-1.107"]  # 2-1 in play
        self.assertEqual(r["mode"], "inplay")
        self.assertEqual(self.outcome(r, 1007, "s2.5", 2008), ("win", None))
        self.assertEqual(self.outcome(r, 1007, "s2.5", 2009), ("lose", None))
        self.assertEqual(self.outcome(r, 1019, "s", 2018), ("win", None))
        self.assertEqual(self.outcome(r, 1004, "s1:0", 2004), ("lose", None))
        self.assertEqual(self.outcome(r, 1004, "s2:1", 2004), ("pending", "event has not ended"))
        self.assertEqual(self.outcome(r, 1001, "s", 2001), ("pending", "event has not ended"))
        self.assertEqual(self.outcome(r, 1005, "s-0.5", 2006), ("pending", "event has not ended"))
        r0 = live["s7-1.113"]  # 0-0: nothing decided yet
        self.assertTrue(all(o["result"] != "win" and o["result"] != "lose" for o in self.all_outcomes(r0)))
        r3 = live["s7-1.114"]  # 3-2: every listed scoreline passed, "other" has won
        self.assertEqual(self.outcome(r3, 1004, "s", 2005), ("win", None))
        self.assertEqual(self.outcome(r3, EXACT["id"], "s", oid(EXACT, "3")), ("lose", None))
        ended = self.settle([5], "&include_inplay=1")["data"]["s7-1.5"]
        self.assertEqual(ended["mode"], "final")

    def test_params_lang_and_errors(self):
        self.assertEqual(self.get("/v1/settlements", 400), {"error": "Missing ids parameter"})
        self.get("/v1/settlements?ids=" + ",".join(str(i) for i in range(1, 102)), 400)
        self.get("/v1/settlements?ids=1&include_inplay=yes", 400)
        self.get("/v1/settlements?ids=1", 403, key="no-scores")
        self.get("/v1/settlements?ids=1", 401, key="nope")
        a = self.get("/v1/settlements?event_id=s7-1.5")["data"]
        b = self.get("/v1/settlements?fixture_id=5")["data"]
        self.assertEqual(a, b)
        de = self.get("/v1/settlements?ids=5&lang=de")["data"]["s7-1.5"]
        self.assertEqual(de["markets"]["1001"]["lines"]["s"]["outcomes"]["2001"]["name"], "Heim")
        self.assertEqual(self.get("/v1/settlements?ids=5&lang=xx")["data"]["s7-1.5"]["markets"]["1001"]["lines"]["s"]
                         ["outcomes"]["2001"]["name"], "Home")

    def test_computed_once_per_final_version(self):
        self.settle(range(1, 17))
        before = self.get("/v1/status")["settlements"]["computed"]
        for _ in range(3):
            self.settle(range(1, 17))
        self.assertEqual(self.get("/v1/status")["settlements"]["computed"], before)

    def test_zz_restart_answers_the_same(self):
        numbers = list(range(1, len(SCORES) + 1)) + list(SPECIAL)
        q = "/v1/settlements?ids=" + ",".join(f"s7-1.{n}" for n in numbers[:100])
        before = self.get(q, raw=True)
        before_inplay = self.get(q + "&include_inplay=1", raw=True)
        rc, log = type(self).srv.stop()
        self.assertEqual(rc, 0, log)
        type(self).srv.__exit__()
        empty = os.path.join(self.dir, "empty.jsonl")
        with open(empty, "w") as f:
            f.write(json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"}) + "\n")
        type(self).srv = self.start("replay:" + empty)
        self.assertEqual(self.get(q, raw=True), before)
        self.assertEqual(self.get(q + "&include_inplay=1", raw=True), before_inplay)


if __name__ == "__main__":
    h.main()
