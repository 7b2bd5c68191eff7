#!/usr/bin/env python3
"""Builds data/catalog.json, the market catalog the server loads at start:
markets composed from families x periods x teams per sport, as bookmaker
catalogs are; outcome names; each sport's prematch and live tabs; and the
vocabulary with its translations (tools/catalog/vocabulary.py). Names are
stored as parts so the server composes every language from the same parts.
Sized to the interface's catalog: exactly TARGET_MARKETS markets and
TARGET_OUTCOMES outcomes, each outcome id one market's (docs/catalog.md).
Deterministic: the same script writes the same file.
    python3 tools/catalog/gen_catalog.py [-o data/catalog.json]"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vocabulary  # noqa: E402

VERSION = "2026.11.23-1"
ORD = {1: "1st", 2: "2nd", 3: "3rd"}


def ordinal(n):
    return ORD.get(n, f"{n}th")


class Catalog:
    def __init__(self):
        self.markets = []
        self.by_key = {}
        self.by_id = {}
        self.outcomes = {}      # id -> parts
        self.outcome_ids = {}   # tuple(parts) -> id
        self.next_market = 1200
        self.next_outcome = 3000
        self.tabs = {}
        self.extra_vocab = {}   # composed phrases (periods) -> {lang: text}
        # Generic outcomes, by name: number_outcomes() gives every market its own ids.
        for oid, parts in [(2001, ["Home"]), (2002, ["Draw"]), (2003, ["Away"]), (2010, ["Yes"]), (2011, ["No"]),
                           (2021, ["Home"]), (2022, ["Away"]), (2101, ["Over"]), (2102, ["Under"]),
                           (2201, ["Score"]), (2202, ["Other"])]:
            self.outcomes[oid] = parts
        for parts in (["Home"], ["Draw"], ["Away"], ["Yes"], ["No"], ["Over"], ["Under"], ["Score"], ["Other"]):
            self.outcome_ids.setdefault(tuple(parts), {"Home": 2001, "Draw": 2002, "Away": 2003, "Yes": 2010,
                                                        "No": 2011, "Over": 2101, "Under": 2102, "Score": 2201,
                                                        "Other": 2202}[parts[0]])

    def outcome(self, *parts):
        key = tuple(str(p) for p in parts)
        if key not in self.outcome_ids:
            self.outcome_ids[key] = self.next_outcome
            self.outcomes[self.next_outcome] = list(key)
            self.next_outcome += 1
        return self.outcome_ids[key]

    def period_phrase(self, unit, n):
        """'1st Half' with its translations, composed from the period word."""
        en = f"{ordinal(n)} {unit}"
        if en not in self.extra_vocab:
            words = vocabulary.table().get(unit, {})
            tr = {"en": en}
            for lang, pattern in vocabulary.ORDINAL.items():
                if pattern and lang in words:
                    tr[lang] = pattern.format(n=n, u=words[lang])
            self.extra_vocab[en] = tr
        return en

    def add(self, sport, kind, family, outcomes, period=None, period_key="ft", team=None, stat=None, line=None,
            suffix=None, market_id=None, code=None, tabs=(), live=True, prematch=True, en_name=None):
        # Markets are per sport, apart from the interface's ids, which every sport
        # of the simulator shares: the first definition names them.
        if market_id in self.by_id:
            m = self.by_id[market_id]
            if sport not in m["sports"]:
                m["sports"].append(sport)
            m["outcomes"] += [o for o in outcomes if o not in m["outcomes"]]
            self._tab(sport, market_id, tabs, live, prematch)
            return market_id
        key = (market_id, sport, kind, period_key, team, stat, suffix, family)
        if key in self.by_key:
            m = self.by_key[key]
            if sport not in m["sports"]:
                m["sports"].append(sport)
            self._tab(sport, m["id"], tabs, live, prematch)
            return m["id"]
        mid = market_id or self.next_market
        if market_id is None:
            self.next_market += 1
        name = {"period": period, "team": team, "stat": stat, "family": family, "suffix": suffix,
                "en": en_name or self.english(period, team, stat, family, suffix)}
        m = {"id": mid, "sports": [sport], "kind": kind, "period": period_key, "team": team and team.split()[0].lower(),
             "stat": (stat or "goals").lower(), "line": line, "name": name, "outcomes": outcomes}
        if code:
            m["code"] = code
        self.markets.append(m)
        self.by_key[key] = m
        if market_id:
            self.by_id[market_id] = m
        self._tab(sport, mid, tabs, live, prematch)
        return mid

    def _tab(self, sport, mid, tabs, live, prematch):
        t = self.tabs.setdefault(sport, {"prematch": {}, "live": {}})
        for tab in list(tabs) + ["all_markets"]:
            if prematch:
                t["prematch"].setdefault(tab, []).append(mid)
            if live:
                t["live"].setdefault(tab, []).append(mid)

    @staticmethod
    def english(period, team, stat, family, suffix):
        core = family
        if stat:
            core = {"Total": f"Total {stat}", "Handicap": f"{stat} Handicap", "Match Winner": f"{stat} 1X2",
                    "Odd/Even": f"{stat} Odd/Even", "Exact": f"Exact {stat}", "Race To": f"Race To {suffix} {stat}",
                    "Asian Handicap": f"{stat} Asian Handicap"}.get(family, f"{stat} {family}")
        if team:
            core = f"{team} {core}"
        if suffix is not None and family != "Race To":
            core = f"{core} {suffix}"
        return f"{period} - {core}" if period else core


# Sports the simulator prices with its goals model: their totals use the
# interface's goal ids (1007 prematch, 1018 live) rather than 1080.
SIM_GOALS_MODEL = {3, 4, 6, 26, 29, 39}
INTERVAL_SCALE = 2  # interval markets per sport relative to SPORTS' count

TAB_NAMES = {"main_markets": "Main", "goal_markets": "Goals", "points_markets": "Points", "games_markets": "Games",
             "handicap_markets": "Handicaps", "period_markets": "Periods", "team_markets": "Teams",
             "combo_markets": "Combos", "score_markets": "Correct Score", "corner_markets": "Corners",
             "card_markets": "Cards", "interval_markets": "Intervals", "stat_markets": "Stats",
             "special_markets": "Specials", "all_markets": "All"}
TAB_ORDER = list(TAB_NAMES)

HOME, DRAW, AWAY, YES, NO, OVER, UNDER = 2001, 2002, 2003, 2010, 2011, 2101, 2102
HC = [2021, 2022]
OU = [OVER, UNDER]
YN = [YES, NO]


def soccer(c):
    s = 1
    c_odd, c_even = c.outcome("Odd"), c.outcome("Even")
    periods = [(None, "ft", "FT"), (c.period_phrase("Half", 1), "1h", "1H"), (c.period_phrase("Half", 2), "2h", "2H")]
    spec = {("1x2", "ft"): 1001, ("dnb", "ft"): 1009, ("btts", "ft"): 1019, ("total", "ft"): 1007,
            ("handicap_asian", "ft"): 1005, ("handicap_asian", "1h"): 1054, ("correct_score", "ft"): 1004}
    for period, pk, pc in periods:
        ptab = ["period_markets"] if period else ["main_markets"]

        def sid(kind):
            return spec.get((kind, pk))
        c.add(s, "1x2", "Match Winner", [HOME, DRAW, AWAY], period, pk, market_id=sid("1x2"), code=f"{pc}_1X2",
              tabs=ptab, en_name=f"{period} - 1X2" if period else "Match Winner (1X2)")
        c.add(s, "double_chance", "Double Chance", [c.outcome("1X"), c.outcome("12"), c.outcome("X2")], period, pk,
              code=f"{pc}_DC", tabs=ptab)
        c.add(s, "dnb", "Draw No Bet", [HOME, AWAY], period, pk, market_id=sid("dnb"), code=f"{pc}_DNB", tabs=ptab)
        c.add(s, "total", "Total", OU, period, pk, stat="Goals", line="total", market_id=sid("total"),
              code=f"{pc}_OU", tabs=ptab + ["goal_markets"], live=not sid("total"))
        c.add(s, "handicap_asian", "Asian Handicap", HC, period, pk, line="handicap", market_id=sid("handicap_asian"),
              code=f"{pc}_AH", tabs=ptab + ["handicap_markets"], live=not (sid("handicap_asian") == 1005))
        c.add(s, "handicap_european", "European Handicap", [HOME, DRAW, AWAY], period, pk, line="handicap",
              code=f"{pc}_EH", tabs=["handicap_markets"] + ptab[:1] * (pk != "ft"))
        c.add(s, "asian_total", "Asian Total", OU, period, pk, stat=None, line="total", code=f"{pc}_AT",
              tabs=["goal_markets"])
        c.add(s, "correct_score", "Correct Score", [2201, 2202], period, pk, market_id=sid("correct_score"),
              code=f"{pc}_CS", tabs=["score_markets"] + ptab[:1] * (pk != "ft"), live=not sid("correct_score"))
        c.add(s, "btts", "Both Teams To Score", YN, period, pk, market_id=sid("btts"), code=f"{pc}_BTTS",
              tabs=["goal_markets"] + ptab[:1] * (pk == "ft"))
        c.add(s, "odd_even", "Odd/Even", [c_odd, c_even], period, pk, stat="Goals", code=f"{pc}_OE",
              tabs=["goal_markets"])
        c.add(s, "exact_goals", "Exact", [c.outcome(x) for x in ("0", "1", "2", "3", "4", "5", "6+")], period, pk,
              stat="Goals", code=f"{pc}_EG", tabs=["goal_markets"])
        c.add(s, "goal_bands", "Goal Bands", [c.outcome(x) for x in ("0-1", "2-3", "4-5", "6+")], period, pk,
              code=f"{pc}_GB", tabs=["goal_markets"])
        c.add(s, "next_goal", "Next Goal", [HOME, c.outcome("No Goal"), AWAY], period, pk, tabs=["goal_markets"],
              prematch=False)
        for team, tc in (("Home Team", "H"), ("Away Team", "A")):
            c.add(s, "team_total", "Total", OU, period, pk, team=team, stat="Goals", line="total",
                  code=f"{pc}_TT{tc}", tabs=["team_markets", "goal_markets"])
            c.add(s, "team_exact", "Exact", [c.outcome(x) for x in ("0", "1", "2", "3+")], period, pk, team=team,
                  stat="Goals", code=f"{pc}_TEG{tc}", tabs=["team_markets"])
            c.add(s, "team_odd_even", "Odd/Even", [c_odd, c_even], period, pk, team=team, stat="Goals",
                  code=f"{pc}_TOE{tc}", tabs=["team_markets"])
            c.add(s, "team_to_score", "To Score", YN, period, pk, team=team, tabs=["team_markets"])
            c.add(s, "clean_sheet", "Clean Sheet", YN, period, pk, team=team, tabs=["team_markets"])
            if pk == "ft":
                c.add(s, "win_to_nil", "Win To Nil", YN, period, pk, team=team, tabs=["team_markets", "special_markets"])
        # Corners and cards: totals, 1X2, handicaps, odd/even, team totals.
        for stat, tab, sc in (("Corners", "corner_markets", "CRN"), ("Cards", "card_markets", "CRD"),
                              ("Booking Points", "card_markets", "BKP")):
            sk = stat.lower().replace(" ", "_")
            c.add(s, f"{sk}_total", "Total", OU, period, pk, stat=stat, line="total",
                  market_id=1128 if (stat == "Corners" and pk == "ft") else None, code=f"{pc}_{sc}_OU", tabs=[tab])
            c.add(s, f"{sk}_1x2", "Match Winner", [HOME, DRAW, AWAY], period, pk, stat=stat, code=f"{pc}_{sc}_1X2",
                  tabs=[tab])
            c.add(s, f"{sk}_handicap", "Handicap", HC, period, pk, stat=stat, line="handicap", tabs=[tab])
            c.add(s, f"{sk}_odd_even", "Odd/Even", [c_odd, c_even], period, pk, stat=stat, tabs=[tab])
            for team in ("Home Team", "Away Team"):
                c.add(s, f"{sk}_team_total", "Total", OU, period, pk, team=team, stat=stat, line="total",
                      tabs=[tab, "team_markets"])
        for stat in ("Shots", "Shots on Target", "Fouls", "Offsides", "Throw-ins", "Goal Kicks", "Free Kicks", "Saves"):
            sk = stat.lower().replace(" ", "_").replace("-", "_")
            c.add(s, f"{sk}_total", "Total", OU, period, pk, stat=stat, line="total", tabs=["stat_markets"])
            c.add(s, f"{sk}_1x2", "Match Winner", [HOME, DRAW, AWAY], period, pk, stat=stat, tabs=["stat_markets"])
            c.add(s, f"{sk}_handicap", "Handicap", HC, period, pk, stat=stat, line="handicap", tabs=["stat_markets"])
            for team in ("Home Team", "Away Team"):
                c.add(s, f"{sk}_team_total", "Total", OU, period, pk, team=team, stat=stat, line="total",
                      tabs=["stat_markets", "team_markets"])
    # Full time only.
    hf = [c.outcome(a, b) for a in ("Home", "Draw", "Away") for b in ("Home", "Draw", "Away")]
    c.add(s, "htft", "Half Time/Full Time", hf, code="FT_HTFT", tabs=["combo_markets", "special_markets"])
    c.add(s, "highest_half", "Highest Scoring Half",
          [c.outcome(c.period_phrase("Half", 1)), c.outcome(c.period_phrase("Half", 2)), c.outcome("Draw")],
          code="FT_HSH", tabs=["special_markets"])
    c.add(s, "first_team_to_score", "First Team To Score", [HOME, c.outcome("No Goal"), AWAY], code="FT_FTS",
          tabs=["goal_markets", "special_markets"])
    c.add(s, "last_team_to_score", "Last Team To Score", [HOME, c.outcome("No Goal"), AWAY], code="FT_LTS",
          tabs=["goal_markets", "special_markets"])
    c.add(s, "winning_margin", "Winning Margin",
          [c.outcome("Home", m) for m in ("1", "2", "3+")] + [DRAW] + [c.outcome("Away", m) for m in ("1", "2", "3+")],
          code="FT_WM", tabs=["special_markets"])
    c.add(s, "rest_of_match", "Rest of Match", [HOME, DRAW, AWAY], tabs=["main_markets"], prematch=False)
    c.add(s, "combo_1x2_btts", "Match Winner", [c.outcome(a, b) for a in ("Home", "Draw", "Away") for b in ("Yes", "No")],
          en_name="1X2 & Both Teams To Score", code="FT_1X2_BTTS", tabs=["combo_markets"],
          suffix="& BTTS")
    for ln in ("1.5", "2.5", "3.5", "4.5"):
        c.add(s, "combo_1x2_total", "Match Winner",
              [c.outcome(a, b, ln) for a in ("Home", "Draw", "Away") for b in ("Over", "Under")],
              suffix=f"& Total {ln}", en_name=f"1X2 & Total Goals {ln}", code=f"FT_1X2_OU{ln.replace('.', '')}",
              tabs=["combo_markets"])
        c.add(s, "combo_dc_total", "Double Chance",
              [c.outcome(a, b, ln) for a in ("1X", "12", "X2") for b in ("Over", "Under")],
              suffix=f"& Total {ln}", tabs=["combo_markets"])
        c.add(s, "combo_btts_total", "Both Teams To Score",
              [c.outcome(a, b, ln) for a in ("Yes", "No") for b in ("Over", "Under")],
              suffix=f"& Total {ln}", tabs=["combo_markets"])
    c.add(s, "combo_dc_btts", "Double Chance", [c.outcome(a, b) for a in ("1X", "12", "X2") for b in ("Yes", "No")],
          suffix="& BTTS", tabs=["combo_markets"])
    for n in (3, 5, 7, 9):
        c.add(s, "race_corners", "Race To", [HOME, c.outcome("Neither"), AWAY], stat="Corners", suffix=n,
              tabs=["corner_markets", "special_markets"])
    for n in (2, 3):
        c.add(s, "race_goals", "Race To", [HOME, c.outcome("Neither"), AWAY], stat="Goals", suffix=n,
              tabs=["goal_markets", "special_markets"])
    # Intervals: 15-minute goal windows and 10-minute corner windows.
    for a in range(0, 90, 15):
        iv = f"{a:02d}:00-{a + 14:02d}:59"
        c.add(s, "interval_total", "Total", OU, iv, f"i{a}", stat="Goals", line="total", tabs=["interval_markets"])
        c.add(s, "interval_1x2", "Match Winner", [HOME, DRAW, AWAY], iv, f"i{a}", tabs=["interval_markets"],
              en_name=f"{iv} - 1X2")
        c.add(s, "interval_btts", "Both Teams To Score", YN, iv, f"i{a}", tabs=["interval_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, "interval_team_to_score", "To Score", YN, iv, f"i{a}", team=team, tabs=["interval_markets"])
    for a in range(0, 90, 10):
        iv = f"{a:02d}:00-{a + 9:02d}:59"
        c.add(s, "interval_total", "Total", OU, iv, f"i{a}", stat="Corners", line="total",
              tabs=["interval_markets", "corner_markets"])
        c.add(s, "interval_1x2", "Match Winner", [HOME, DRAW, AWAY], iv, f"i{a}", stat="Corners",
              tabs=["interval_markets", "corner_markets"])
        c.add(s, "interval_total", "Total", OU, iv, f"i{a}", stat="Cards", line="total",
              tabs=["interval_markets", "card_markets"])
    # Team and half specials.
    for team in ("Home Team", "Away Team"):
        for fam, kind in (("To Score", "team_score_both_halves"), ("Match Winner", "team_win_either_half"),
                          ("Win To Nil", "team_win_both_halves"), ("Highest Scoring Half", "team_highest_half")):
            outs = YN if kind != "team_highest_half" else [c.outcome(c.period_phrase("Half", 1)),
                                                           c.outcome(c.period_phrase("Half", 2)), c.outcome("Draw")]
            c.add(s, kind, fam, outs, team=team, suffix={"team_score_both_halves": "(both halves)",
                                                        "team_win_either_half": "(either half)",
                                                        "team_win_both_halves": "(both halves)",
                                                        "team_highest_half": None}[kind],
                  tabs=["team_markets", "special_markets"])
        c.add(s, "team_goal_bands", "Goal Bands", [c.outcome(x) for x in ("0", "1-2", "3+")], team=team,
              tabs=["team_markets"])
        for stat in ("Corners", "Cards", "Shots", "Shots on Target", "Fouls", "Offsides"):
            sk = stat.lower().replace(" ", "_")
            for period, pk in ((None, "ft"), (c.period_phrase("Half", 1), "1h"), (c.period_phrase("Half", 2), "2h")):
                c.add(s, f"{sk}_team_odd_even", "Odd/Even", [c.outcome("Odd"), c.outcome("Even")], period, pk,
                      team=team, stat=stat, tabs=["stat_markets", "team_markets"])
    c.add(s, "btts_both_halves", "Both Teams To Score", YN, suffix="(both halves)", tabs=["goal_markets"])
    c.add(s, "goal_both_halves", "To Score", YN, suffix="(both halves)", tabs=["goal_markets"])
    c.add(s, "combo_1x2_fts", "Match Winner",
          [c.outcome(a, b) for a in ("Home", "Draw", "Away") for b in ("Home", "Away")] + [c.outcome("No Goal")],
          suffix="& First Team To Score", tabs=["combo_markets"])
    for a in range(0, 90, 5):
        iv = f"{a:02d}:00-{a + 4:02d}:59"
        c.add(s, "interval_to_score", "To Score", YN, iv, f"i5_{a}", tabs=["interval_markets"])
        c.add(s, "interval_total", "Total", OU, iv, f"i5_{a}", stat="Corners", line="total",
              tabs=["interval_markets", "corner_markets"])
    for period, pk in ((None, "ft"), (c.period_phrase("Half", 1), "1h"), (c.period_phrase("Half", 2), "2h")):
        for special in ("Penalty Awarded", "Red Card", "Own Goal", "Goal From Header", "Goal From Outside The Box",
                        "Both Teams To Receive A Card", "Both Teams To Score 2+"):
            c.add(s, "special_" + special.lower().replace(" ", "_"), special, YN, period, pk, tabs=["special_markets"])
        for stat, tab in (("Corners", "corner_markets"), ("Cards", "card_markets")):
            sk = stat.lower()
            c.add(s, f"{sk}_asian_handicap", "Asian Handicap", HC, period, pk, stat=stat, line="handicap", tabs=[tab])
            c.add(s, f"{sk}_asian_total", "Asian Total", OU, period, pk, stat=stat, line="total", tabs=[tab])
            c.add(s, f"{sk}_exact", "Exact", [c.outcome(str(k)) for k in range(0, 13)] + [c.outcome("13+")],
                  period, pk, stat=stat, tabs=[tab])
            c.add(s, f"{sk}_next", "Next Goal", [HOME, c.outcome("Neither"), AWAY], period, pk, stat=stat,
                  tabs=[tab], prematch=False, en_name=f"{period + ' - ' if period else ''}Next {stat[:-1]}")
            for team in ("Home Team", "Away Team"):
                c.add(s, f"{sk}_team_exact", "Exact", [c.outcome(str(k)) for k in range(0, 8)] + [c.outcome("8+")],
                      period, pk, team=team, stat=stat, tabs=[tab, "team_markets"])
        if pk != "ft":
            for ln in ("0.5", "1.5", "2.5", "3.5"):
                c.add(s, "combo_1x2_total", "Match Winner",
                      [c.outcome(a, b, ln) for a in ("Home", "Draw", "Away") for b in ("Over", "Under")], period, pk,
                      suffix=f"& Total {ln}", tabs=["combo_markets"])
                c.add(s, "combo_btts_total", "Both Teams To Score",
                      [c.outcome(a, b, ln) for a in ("Yes", "No") for b in ("Over", "Under")], period, pk,
                      suffix=f"& Total {ln}", tabs=["combo_markets"])
    for a in range(0, 90, 5):
        iv = f"{a:02d}:00-{a + 4:02d}:59"
        c.add(s, "interval_total", "Total", OU, iv, f"i5_{a}", stat="Cards", line="total",
              tabs=["interval_markets", "card_markets"])
    for a in range(0, 90, 10):
        iv = f"{a:02d}:00-{a + 9:02d}:59"
        c.add(s, "interval_1x2", "Match Winner", [HOME, DRAW, AWAY], iv, f"i{a}", stat="Goals",
              tabs=["interval_markets"])
        c.add(s, "interval_to_score", "To Score", YN, iv, f"i{a}", tabs=["interval_markets"])
    # The live-only copies of the interface's ladders.
    c.add(s, "total", "Total", OU, stat="Goals", line="total", market_id=1018, code="FT_OU_LIVE",
          tabs=["main_markets", "goal_markets"], prematch=False, en_name="Total Goals (live)")
    c.add(s, "handicap_asian", "Asian Handicap", HC, line="handicap", market_id=1011, code="FT_AH_LIVE",
          tabs=["main_markets", "handicap_markets"], prematch=False, en_name="Asian Handicap (live)")
    c.add(s, "correct_score", "Correct Score", [2201, 2202], market_id=1012, code="FT_CS_LIVE",
          tabs=["score_markets"], prematch=False, en_name="Correct Score (live)")


# Other sports: (id, kind, stat, period unit, number of periods, has draw, extra intervals, interval length)
SPORTS = [
    (2, "points", "Points", "Quarter", 4, False, 12, 4), (3, "runs", "Runs", "Inning", 9, False, 0, 0),
    (4, "goals", "Goals", "Period", 3, True, 6, 10), (5, "sets", "Games", "Set", 5, False, 0, 0),
    (6, "goals", "Goals", "Half", 2, True, 12, 5), (7, "sets", "Points", "Set", 5, False, 0, 0),
    (9, "matchup", None, None, 0, False, 0, 0), (10, "matchup", None, "Round", 12, True, 0, 0),
    (12, "points", "Points", "Half", 2, True, 8, 10), (13, "points", "Points", "Quarter", 4, True, 8, 5),
    (16, "points", "Points", "Quarter", 4, False, 12, 5), (17, "matchup", None, None, 0, False, 0, 0),
    (20, "sets", "Points", "Set", 7, False, 0, 0), (21, "runs", "Runs", "Inning", 2, True, 6, 5),
    (22, "sets", "Legs", "Set", 7, False, 0, 0), (26, "goals", "Goals", "Quarter", 4, True, 8, 4),
    (29, "goals", "Goals", "Half", 2, True, 8, 5), (39, "goals", "Goals", "Quarter", 4, False, 8, 4),
    (40, "matchup", None, None, 0, False, 0, 0), (117, "matchup", None, "Round", 5, True, 0, 0),
    (190, "matchup", None, None, 0, False, 0, 0), (306, "sets", "Pins", "Frame", 10, False, 0, 0),
    (312, "points", "Points", "Half", 2, True, 8, 10),
]


def team_sport(c, s, kind, stat, unit, nper, draw, n_iv, iv_len):
    c_odd, c_even = c.outcome("Odd"), c.outcome("Even")
    main_tab = {"goals": "goal_markets", "points": "points_markets", "runs": "points_markets"}[kind]
    periods = [(None, "ft", "FT")] + [(c.period_phrase(unit, i), f"{unit[0].lower()}{i}", f"{unit[0]}{i}")
                                      for i in range(1, nper + 1)]
    if unit == "Quarter":
        periods += [(c.period_phrase("Half", i), f"h{i}", f"H{i}") for i in (1, 2)]
    if kind == "runs" and nper == 9:
        periods += [(f"1st 5 Innings", "f5", "F5")]
    for period, pk, pc in periods:
        ptab = ["period_markets"] if period else ["main_markets"]
        code = True
        c.add(s, "winner", "Match Winner", [HOME, AWAY], period, pk, market_id=1001 if pk == "ft" else None,
              code=f"{pc}_ML" if code else None, tabs=ptab, en_name=None if period else "Match Winner")
        if draw or pk != "ft":
            c.add(s, "1x2", "Match Winner", [HOME, DRAW, AWAY], period, pk, en_name=f"{period or 'Regular Time'} - 1X2",
                  code=f"{pc}_1X2" if code else None, tabs=ptab, suffix="3-Way")
            c.add(s, "double_chance", "Double Chance", [c.outcome("1X"), c.outcome("12"), c.outcome("X2")], period, pk,
                  tabs=ptab)
        hid = (1005 if kind != "points" or True else None) if pk == "ft" else None
        c.add(s, "handicap", "Handicap", HC, period, pk, stat=stat, line="handicap", market_id=hid,
              code=f"{pc}_HC" if code else None, tabs=ptab + ["handicap_markets"])
        tid = (1007 if s in SIM_GOALS_MODEL else 1080) if pk == "ft" else None
        c.add(s, "total", "Total", OU, period, pk, stat=None if tid == 1080 else stat, line="total", market_id=tid,
              code=f"{pc}_OU" if code else None, tabs=ptab + [main_tab],
              en_name="Total Over/Under" if tid == 1080 else None)
        c.add(s, "odd_even", "Odd/Even", [c_odd, c_even], period, pk, stat=stat, code=f"{pc}_OE", tabs=[main_tab])
        c.add(s, "handicap_european", "European Handicap", [HOME, DRAW, AWAY], period, pk, stat=stat,
              line="handicap", tabs=["handicap_markets"])
        for team, tc in (("Home Team", "H"), ("Away Team", "A")):
            c.add(s, "team_total", "Total", OU, period, pk, team=team, stat=stat, line="total",
                  code=f"{pc}_TT{tc}" if code else None, tabs=["team_markets", main_tab])
            c.add(s, "team_odd_even", "Odd/Even", [c_odd, c_even], period, pk, team=team, stat=stat,
                  tabs=["team_markets"])
        if kind == "goals":
            c.add(s, "btts", "Both Teams To Score", YN, period, pk, market_id=1019 if pk == "ft" else None,
                  tabs=[main_tab])
            c.add(s, "correct_score", "Correct Score", [2201, 2202], period, pk, tabs=["score_markets"])
            c.add(s, "exact_goals", "Exact", [c.outcome(x) for x in ("0", "1", "2", "3", "4", "5", "6+")], period, pk,
                  stat=stat, tabs=[main_tab])
        else:
            c.add(s, "winning_margin", "Winning Margin",
                  [c.outcome("Home", m) for m in ("1-5", "6-10", "11+")] +
                  [c.outcome("Away", m) for m in ("1-5", "6-10", "11+")], period, pk, tabs=["special_markets"])
            for n in (10, 20) if kind == "points" else (3,):
                c.add(s, "race", "Race To", [HOME, c.outcome("Neither"), AWAY], period, pk, stat=stat, suffix=n,
                      tabs=["special_markets"])
        c.add(s, "first_team_to_score", "First Team To Score", [HOME, AWAY], period, pk, tabs=["special_markets"])
        c.add(s, "handicap_asian", "Asian Handicap", HC, period, pk, stat=stat, line="handicap", code=f"{pc}_AH",
              tabs=["handicap_markets"])
        c.add(s, "asian_total", "Asian Total", OU, period, pk, stat=stat, line="total", code=f"{pc}_AT",
              tabs=[main_tab])
        c.add(s, "total_bands", "Goal Bands" if kind == "goals" else "Exact",
              [c.outcome(x) for x in ("Band 1", "Band 2", "Band 3", "Band 4", "Band 5", "Band 6")], period, pk,
              stat=stat, suffix="(bands)", tabs=[main_tab])
        c.add(s, "last_team_to_score", "Last Team To Score", [HOME, AWAY], period, pk, tabs=["special_markets"])
        c.add(s, "combo_winner_total", "Match Winner", [c.outcome(a, b) for a in ("Home", "Away") for b in ("Over", "Under")],
              period, pk, suffix="& Total", tabs=["combo_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, "team_exact", "Exact", [c.outcome(x) for x in ("Band 1", "Band 2", "Band 3", "Band 4")],
                  period, pk, team=team, stat=stat, suffix="(bands)", tabs=["team_markets"])
            c.add(s, "team_handicap", "Handicap", HC, period, pk, team=team, stat=stat, line="handicap",
                  suffix="(team)", tabs=["team_markets"])
            c.add(s, "team_race", "Race To", YN, period, pk, team=team, stat=stat, suffix=5 if kind == "goals" else 15,
                  tabs=["team_markets"])
    if draw:
        c.add(s, "dnb", "Draw No Bet", [HOME, AWAY], market_id=1009, tabs=["main_markets"])
    # The simulator's live ladders share the interface's ids with soccer.
    c.add(s, "handicap_asian", "Asian Handicap", HC, line="handicap", market_id=1011, tabs=["main_markets"],
          prematch=False)
    if s in SIM_GOALS_MODEL:
        c.add(s, "total", "Total", OU, stat=stat, line="total", market_id=1018, tabs=["main_markets"],
              prematch=False)
    c.add(s, "highest_period", f"Highest Scoring {unit}",
          [c.outcome(c.period_phrase(unit, i)) for i in range(1, nper + 1)] + [c.outcome("Draw")],
          tabs=["special_markets"])
    c.add(s, "htft", "Half Time/Full Time", [c.outcome(a, b) for a in ("Home", "Draw", "Away") for b in ("Home", "Away")],
          tabs=["combo_markets", "special_markets"])
    for ln in range(n_iv * INTERVAL_SCALE):
        a = ln * iv_len
        iv = f"{a:02d}:00-{a + iv_len - 1:02d}:59"
        c.add(s, "interval_total", "Total", OU, iv, f"i{a}", stat=stat, line="total", tabs=["interval_markets"])
        c.add(s, "interval_1x2", "Match Winner", [HOME, DRAW, AWAY], iv, f"i{a}", tabs=["interval_markets"],
              en_name=f"{iv} - 1X2")
        c.add(s, "interval_handicap", "Handicap", HC, iv, f"i{a}", stat=stat, line="handicap",
              tabs=["interval_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, "interval_team_total", "Total", OU, iv, f"i{a}", team=team, stat=stat, line="total",
                  tabs=["interval_markets"])


def sets_sport(c, s, stat, unit, nper):
    c_odd, c_even = c.outcome("Odd"), c.outcome("Even")
    c.add(s, "winner", "Match Winner", [HOME, AWAY], market_id=1001, code="FT_ML", tabs=["main_markets"],
          en_name="Match Winner")
    c.add(s, "handicap", "Handicap", HC, stat="Sets", line="handicap", market_id=1005, code="FT_SH",
          tabs=["main_markets", "handicap_markets"])
    c.add(s, "total", "Total", OU, stat="Sets", line="total", market_id=1080, code="FT_TS", tabs=["main_markets"])
    c.add(s, "handicap_asian", "Asian Handicap", HC, line="handicap", market_id=1011, tabs=["main_markets"],
          prematch=False)
    wins = (nper + 1) // 2
    c.add(s, "correct_score", "Correct Score",
          [c.outcome(f"{a}:{b}") for a, b in [(wins, k) for k in range(wins)] + [(k, wins) for k in range(wins)]],
          code="FT_CSS", tabs=["score_markets"])
    for fam, kind, outs, line in (("Total", "games_total", OU, "total"), ("Handicap", "games_handicap", HC, "handicap"),
                                  ("Odd/Even", "games_odd_even", [c_odd, c_even], None)):
        c.add(s, kind, fam, outs, stat=stat, line=line, code=f"FT_G{kind[6:8].upper()}", tabs=["games_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, f"team_{kind}", fam, outs, team=team, stat=stat, line=line, tabs=["team_markets"])
    for i in range(1, nper + 1):
        p, pk = c.period_phrase(unit, i), f"s{i}"
        c.add(s, "winner", "Match Winner", [HOME, AWAY], p, pk, code=f"S{i}_ML", tabs=["period_markets"])
        c.add(s, "games_total", "Total", OU, p, pk, stat=stat, line="total", code=f"S{i}_OU",
              tabs=["period_markets", "games_markets"])
        c.add(s, "games_handicap", "Handicap", HC, p, pk, stat=stat, line="handicap", tabs=["period_markets"])
        c.add(s, "games_odd_even", "Odd/Even", [c_odd, c_even], p, pk, stat=stat, tabs=["period_markets"])
        c.add(s, "correct_score", "Correct Score", [2201, 2202], p, pk, tabs=["score_markets"])
        c.add(s, "tie_break", "Tie Break", YN, p, pk, tabs=["special_markets"])
        for n in (2, 3, 4, 5):
            c.add(s, "race", "Race To", [HOME, AWAY], p, pk, stat=stat, suffix=n, tabs=["special_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, "team_games_total", "Total", OU, p, pk, team=team, stat=stat, line="total", tabs=["team_markets"])
            c.add(s, "team_games_odd_even", "Odd/Even", [c_odd, c_even], p, pk, team=team, stat=stat,
                  tabs=["team_markets"])
        c.add(s, "exact", "Exact", [c.outcome(str(k)) for k in range(6, 14)], p, pk, stat=stat,
              tabs=["games_markets"])
        c.add(s, "combo_winner_total", "Match Winner", [c.outcome(a, b) for a in ("Home", "Away") for b in ("Over", "Under")],
              p, pk, suffix="& Total", tabs=["combo_markets"])
        for g in range(1, 13):  # game / leg / end level, live
            c.add(s, "game_winner", "Match Winner", [HOME, AWAY], p, f"{pk}g{g}", suffix=f"- Game {g}",
                  tabs=["period_markets"], prematch=False)
            if g <= 6:
                c.add(s, "game_total_points", "Total", OU, p, f"{pk}g{g}", stat="Points", suffix=f"- Game {g}",
                      line="total", tabs=["period_markets"], prematch=False)


def matchup_sport(c, s, unit, nper):
    c.add(s, "winner", "Match Winner", [HOME, AWAY], market_id=1001, code="FT_H2H", tabs=["main_markets"],
          en_name="Match Winner")
    c.add(s, "method_of_victory", "Method of Victory",
          [c.outcome(a, m) for a in ("Home", "Away") for m in ("KO/TKO", "Submission", "Points")] + [c.outcome("Draw")],
          tabs=["special_markets"])
    c.add(s, "handicap", "Handicap", HC, line="handicap", tabs=["handicap_markets"])
    c.add(s, "total", "Total", OU, stat="Rounds" if unit else "Points", line="total", tabs=["main_markets"])
    for team in ("Home Team", "Away Team"):
        c.add(s, "team_total", "Total", OU, team=team, stat="Points", line="total", tabs=["team_markets"])
    for i in range(1, nper + 1):
        p = c.period_phrase(unit, i)
        c.add(s, "period_winner", "Match Winner", [HOME, DRAW, AWAY], p, f"r{i}", tabs=["period_markets"])
        c.add(s, "period_total", "Total", OU, p, f"r{i}", stat="Points", line="total", tabs=["period_markets"])
        c.add(s, "period_handicap", "Handicap", HC, p, f"r{i}", stat="Points", line="handicap",
              tabs=["period_markets"])
        c.add(s, "finish_in_period", "Winning Margin", [HOME, AWAY, c.outcome("No")], p, f"r{i}",
              tabs=["special_markets"], suffix="(finish)")
    for n in (1, 3, 5, 10, 20):
        c.add(s, f"top_{n}", "Winning Margin", YN, suffix=f"Top {n}", tabs=["special_markets"])
    for special in ("Podium Finish", "Points Finish", "Fastest Lap", "Pole Position", "To Finish", "Winning Group",
                    "Head to Head", "Top Nationality", "Leader After Round 1", "Leader After Round 2"):
        c.add(s, "special_" + special.lower().replace(" ", "_"), special, YN if "Group" not in special else [HOME, AWAY],
              tabs=["special_markets"])


def snooker(c, s, frames_to_win):
    """Snooker (the interface counts 25 sports; its table names 24, and
    snooker is the one this catalog adds): a race to N frames, priced per
    frame and on breaks."""
    c_odd, c_even = c.outcome("Odd"), c.outcome("Even")
    c.add(s, "winner", "Match Winner", [HOME, AWAY], market_id=1001, code="FT_ML", tabs=["main_markets"],
          en_name="Match Winner")
    c.add(s, "handicap", "Handicap", HC, stat="Frames", line="handicap", market_id=1005, code="FT_FH",
          tabs=["main_markets", "handicap_markets"])
    c.add(s, "total", "Total", OU, stat="Frames", line="total", market_id=1080, code="FT_TF", tabs=["main_markets"])
    c.add(s, "handicap_asian", "Asian Handicap", HC, line="handicap", market_id=1011, tabs=["main_markets"],
          prematch=False)
    c.add(s, "correct_score", "Correct Score",
          [c.outcome(f"{a}:{b}") for a, b in [(frames_to_win, k) for k in range(frames_to_win)] +
           [(k, frames_to_win) for k in range(frames_to_win)]], code="FT_CSF", tabs=["score_markets"])
    c.add(s, "odd_even", "Odd/Even", [c_odd, c_even], stat="Frames", code="FT_OEF", tabs=["main_markets"])
    for team in ("Home Team", "Away Team"):
        c.add(s, "team_total", "Total", OU, team=team, stat="Frames", line="total", tabs=["team_markets"])
    for n in range(2, frames_to_win):
        c.add(s, "race", "Race To", [HOME, AWAY], stat="Frames", suffix=n, tabs=["special_markets"])
    c.add(s, "century_break", "Century Break", YN, tabs=["special_markets"])
    c.add(s, "highest_break", "Total", OU, stat="Highest Break", line="total", tabs=["special_markets"])
    for i in range(1, 2 * frames_to_win):
        p, pk = c.period_phrase("Frame", i), f"f{i}"
        c.add(s, "winner", "Match Winner", [HOME, AWAY], p, pk, code=f"F{i}_ML", tabs=["period_markets"])
        c.add(s, "points_total", "Total", OU, p, pk, stat="Points", line="total", tabs=["period_markets"])
        c.add(s, "points_handicap", "Handicap", HC, p, pk, stat="Points", line="handicap", tabs=["period_markets"])
        c.add(s, "points_odd_even", "Odd/Even", [c_odd, c_even], p, pk, stat="Points", tabs=["period_markets"])
        c.add(s, "century_break", "Century Break", YN, p, pk, tabs=["special_markets"])
        c.add(s, "first_team_to_score", "First Team To Score", [HOME, AWAY], p, pk, tabs=["special_markets"])
        for team in ("Home Team", "Away Team"):
            c.add(s, "team_points_total", "Total", OU, p, pk, team=team, stat="Points", line="total",
                  tabs=["team_markets"])


# The interface's totals: the catalog is sized to them exactly.
TARGET_MARKETS, TARGET_OUTCOMES = 4873, 17227
FIRST_OUTCOME = 2001  # market 1001's outcomes are 2001/2002/2003


def time_of_first_score(c, s, stat, periods, band):
    """'Time of First Goal' in `band`-minute windows, one market per
    (period, team): the family that carries the catalog's many-outcome
    markets, as minute markets do in bookmaker dictionaries."""
    made = []
    for period, pk, start, length in periods:
        for team in (None, "Home Team", "Away Team"):
            outs = [c.outcome(f"{a:02d}:00-{a + band - 1:02d}:59") for a in range(start, start + length, band)]
            outs.append(c.outcome("No Goal" if stat == "Goals" else "Neither"))
            made.append(c.add(s, "time_first_score", "First Team To Score", outs, period, pk, team=team, stat=stat,
                              suffix=f"(time, {band} min)", tabs=["interval_markets"], live=False,
                              en_name=(f"{period} - " if period else "") + (f"{team} " if team else "") +
                              f"Time of First {stat[:-1] if stat.endswith('s') else stat} ({band} min)"))
    return made


BANDS = (1, 2, 5, 10)  # minutes per window of the other sports' minute markets
# Regulation minutes of the sports with minute markets (the simulator's too).
REGULATION = {2: 48, 4: 60, 6: 60, 12: 80, 13: 80, 16: 60, 21: 90, 26: 32, 29: 40, 39: 60, 312: 80}


def build_markets():
    c = Catalog()
    soccer(c)
    for s, kind, stat, unit, nper, draw, n_iv, iv_len in SPORTS:
        if kind in ("points", "goals", "runs"):
            team_sport(c, s, kind, stat, unit, nper, draw, n_iv, iv_len)
        elif kind == "sets":
            sets_sport(c, s, stat, unit, nper)
        else:
            matchup_sport(c, s, unit, nper)
    snooker(c, 19, 6)
    # Minute markets: the many-outcome family.
    h1, h2 = c.period_phrase("Half", 1), c.period_phrase("Half", 2)
    for band in (1, 5, 10, 15):
        time_of_first_score(c, 1, "Goals", [(None, "ft", 0, 90)], band)
    for band in (1, 5):
        time_of_first_score(c, 1, "Goals", [(h1, "1h", 0, 45), (h2, "2h", 45, 45)], band)
    for s, kind, stat, unit, nper, draw, n_iv, iv_len in SPORTS:
        if kind in ("points", "goals", "runs") and n_iv:
            length = REGULATION[s]
            for band in BANDS:
                time_of_first_score(c, s, stat, [(None, "ft", 0, length)], band)
    return c


def size_to_target(c):
    """Adds 'Exact <stat>' count markets until the catalog holds exactly
    TARGET_MARKETS markets and TARGET_OUTCOMES market outcomes. Which
    (sport, period, team) gets one, and how many values each lists, follow
    from the counts alone, so the result is the same on every run."""
    markets = len(c.markets)
    outcomes = sum(len(m["outcomes"]) for m in c.markets)
    need_m, need_o = TARGET_MARKETS - markets, TARGET_OUTCOMES - outcomes
    assert need_m > 0 and need_o >= 2 * need_m, (markets, outcomes)
    # Candidates: every sport's periods with a counting stat, in a fixed order.
    slots = []
    for m in sorted(c.markets, key=lambda m: m["id"]):
        if m["kind"] in ("total", "team_total", "games_total", "points_total", "team_points_total",
                         "team_games_total") and m["name"]["stat"] and len(m["sports"]) == 1:
            slots.append((m["sports"][0], m["name"]["period"], m["period"], m["name"]["team"], m["name"]["stat"]))
    seen, uniq = set(), []
    for sl in slots:
        if sl not in seen:
            seen.add(sl)
            uniq.append(sl)
    # Spread over sports: round robin by sport, in each sport's own order.
    by_sport = {}
    for sl in uniq:
        by_sport.setdefault(sl[0], []).append(sl)
    order = []
    while len(order) < need_m:
        before = len(order)
        for sport in sorted(by_sport):
            if by_sport[sport] and len(order) < need_m:
                order.append(by_sport[sport].pop(0))
        assert len(order) > before, "not enough places for exact-count markets"
    q, r = divmod(need_o, need_m)
    for i, (sport, period, pk, team, stat) in enumerate(order):
        n = q + (1 if i < r else 0)
        w = 10 if stat == "Points" else 1  # points come in bands of ten
        outs = [c.outcome(str(k * w) if w == 1 else f"{k * w}-{k * w + w - 1}") for k in range(n - 1)]
        outs.append(c.outcome(f"{(n - 1) * w}+"))
        before = len(c.markets)
        c.add(sport, "exact_count", "Exact", outs, period, pk, team=team, stat=stat, suffix="(count)",
              tabs=["stat_markets"])
        assert len(c.markets) == before + 1


def number_outcomes(c):
    """Outcome ids are per market, numbered from FIRST_OUTCOME in market id
    order: the interface's ids come first (1001 -> 2001/2002/2003), and an
    id names one outcome of one market."""
    outcomes = {}
    nxt = FIRST_OUTCOME
    for m in sorted(c.markets, key=lambda m: m["id"]):
        ids = []
        for o in m["outcomes"]:
            outcomes[nxt] = c.outcomes[o]
            ids.append(nxt)
            nxt += 1
        m["outcomes"] = ids
    return outcomes


def build():
    c = build_markets()
    size_to_target(c)
    outcomes = number_outcomes(c)
    vocab = vocabulary.table()
    vocab.update(c.extra_vocab)
    tabs = {}
    for sport, t in sorted(c.tabs.items()):
        tabs[str(sport)] = {
            phase: [{"key": k, "name": TAB_NAMES[k], "markets": sorted(set(t[phase][k]))}
                    for k in TAB_ORDER if k in t[phase]]
            for phase in ("prematch", "live")}
    markets = sorted(c.markets, key=lambda m: m["id"])
    for m in markets:
        m["sports"].sort()
    assert len(markets) == TARGET_MARKETS and len(outcomes) == TARGET_OUTCOMES, (len(markets), len(outcomes))
    return {
        "version": VERSION,
        "languages": vocabulary.LANGS,
        "vocabulary": dict(sorted(vocab.items())),
        "outcomes": {str(k): v for k, v in sorted(outcomes.items())},
        "markets": markets,
        "tabs": tabs,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(os.path.dirname(__file__), "..", "..", "data", "catalog.json"))
    a = ap.parse_args()
    cat = build()
    with open(a.output, "w", encoding="utf-8") as f:
        json.dump(cat, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    ms = cat["markets"]
    pairs = sum(len(m["outcomes"]) for m in ms)
    per = {}
    for m in ms:
        for s in m["sports"]:
            per[s] = per.get(s, 0) + 1
    print(f"catalog {cat['version']}: {len(ms)} markets, {pairs} market outcomes, {len(cat['outcomes'])} outcome ids, "
          f"{len(per)} sports, {sum(1 for m in ms if 'code' in m)} coded; soccer {per.get(1)}", file=sys.stderr)
    print("per sport: " + ", ".join(f"{s}:{n}" for s, n in sorted(per.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
