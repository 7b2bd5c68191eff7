"""GET /v1/odds/history through the real binary: a generated feed (prices,
flags and line `s` moving, lines withdrawn, outcomes dropped, markets
removed and priced again, events going live, an event removed) is replayed
at max speed, and every outcome's points, open, close and final, a from/to
window, candles and the CSV form are compared with what the feed file says,
computed here on its own from the records; then the errors (400 naming the
parameter, 404, horizon_exceeded under a small --history-bytes) and
--history off."""
import csv
import io
import json
import os
import random
import shutil
import unittest

import harness as h

KEY = "history-key"
NO_ODDS = "history-no-odds"
KEYS = {"keys": [{"key": KEY, "name": "history", "permissions": ["live", "prematch", "odds"]},
                 {"key": NO_ODDS, "name": "no odds", "permissions": ["live", "prematch"]}]}
T0 = 1767225600000
EVENTS = ["s7-1.201", "s7-1.202", "s7-1.203", "s7-1.204"]
GOES_LIVE = {"s7-1.201": 150, "s7-1.202": 300}  # record index at which the event is listed live
REMOVED = ("s7-1.204", 400)  # removed at this record index, priced again later
LINES = {1001: {"s": [2001, 2002, 2003]}, 1018: {"s2.5": [12, 13], "s3.5": [12, 13]}}


def event_obj(eid, live):
    n = eid.rsplit(".", 1)[1]
    return {"c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11, "ts": T0 // 1000,
            "h": f"Home {n}", "a": f"Away {n}", "co": 101, "map": {}, "s": 0, "live": live, "sport": 1}


def build_feed(path, n=600, seed=39):
    """The records as dicts, in log order (every one applies: seq = index + 1);
    written to path with a header."""
    rng = random.Random(seed)
    recs, at = [], T0
    book = {e: {m: {l: {o: [150 + 10 * i, 0] for i, o in enumerate(os_)} for l, os_ in lines.items()}
                for m, lines in LINES.items()} for e in EVENTS}
    susp = {e: {m: {l: 0 for l in lines} for m, lines in LINES.items()} for e in EVENTS}
    for e in EVENTS:
        recs.append({"at": at, "op": "event", "id": e, "event": event_obj(e, False)})
    while len(recs) < n:
        at += rng.choice([50, 250, 700, 1500, 4000, 9000])
        i = len(recs)
        for e, when in GOES_LIVE.items():
            if i == when:
                recs.append({"at": at, "op": "event", "id": e, "event": event_obj(e, True)})
        if i == REMOVED[1]:
            recs.append({"at": at, "op": "remove", "id": REMOVED[0]})
            continue
        e = rng.choice(EVENTS)
        m = rng.choice(list(LINES))
        lines = book[e][m]
        kind = rng.random()
        if kind < 0.55 and lines:  # a price moves
            l = rng.choice(list(lines))
            if lines[l]:
                o = rng.choice(list(lines[l]))
                lines[l][o][0] = max(101, lines[l][o][0] + rng.choice([-7, -3, 3, 5, 11]))
        elif kind < 0.65 and lines:  # flags
            l = rng.choice(list(lines))
            if lines[l]:
                o = rng.choice(list(lines[l]))
                lines[l][o][1] = rng.choice([0, 0, 4])
        elif kind < 0.75 and lines:  # the line's s
            l = rng.choice(list(lines))
            susp[e][m][l] ^= 1
        elif kind < 0.80 and lines:  # a line withdrawn
            del lines[rng.choice(list(lines))]
        elif kind < 0.85 and lines:  # an outcome dropped
            l = rng.choice(list(lines))
            if lines[l]:
                del lines[l][rng.choice(list(lines[l]))]
        elif kind < 0.88:  # the market removed
            lines.clear()
        elif kind < 0.97:  # everything priced again
            for l, os_ in LINES[m].items():
                lines.setdefault(l, {})
                for o in os_:
                    lines[l].setdefault(o, [160 + rng.randrange(50), 0])
        # else: the same market again (no point)
        recs.append({"at": at, "op": "market", "id": e, "market": m,
                     "lines": {l: {"s": susp[e][m][l], "o": {str(o): list(v) for o, v in os_.items()}}
                               for l, os_ in lines.items()}})
    with open(path, "w") as f:
        f.write(json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"}) + "\n")
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    return recs


def expected_history(recs):
    """What docs/api.md "Odds history" says the feed's records make, per
    event: {market: {line: {outcome: {open, close, final, points}}}}."""
    out = {}
    for seq, r in enumerate(recs, 1):
        ev = out.setdefault(r["id"], {"live": False, "cur": {}, "series": {}})
        def point(key, p):
            s = ev["series"].setdefault(key, {"open": None, "last": None, "close": None, "points": []})
            s["points"].append(p)
            if p[1] is not None:
                q = [p[1], p[2], p[0], p[4]]
                s["open"] = s["open"] or q
                s["last"] = q
        if r["op"] == "event":
            if r["event"]["live"] and not ev["live"]:
                ev["live"] = True
                for s in ev["series"].values():
                    s["close"] = s["last"]
        elif r["op"] == "remove":
            for key, q in list(ev["cur"].items()):
                point(key, [r["at"], None, None, None, seq])
            ev["cur"] = {}
        elif r["op"] == "market":
            m = r["market"]
            new = {(m, l, int(o)): (v[0], v[1], line["s"]) for l, line in r["lines"].items()
                   for o, v in line["o"].items()}
            for key in sorted(set(new) | {k for k in ev["cur"] if k[0] == m}):
                if key not in new:
                    point(key, [r["at"], None, None, None, seq])
                    del ev["cur"][key]
                elif ev["cur"].get(key) != new[key]:
                    point(key, [r["at"], *new[key], seq])
                    ev["cur"][key] = new[key]
    result = {}
    for eid, ev in out.items():
        data = {}
        for (m, l, o), s in ev["series"].items():
            data.setdefault(str(m), {}).setdefault(l, {})[str(o)] = {
                "open": s["open"], "close": s["close"] if ev["live"] else s["last"], "final": ev["live"],
                "points": s["points"]}
        result[eid] = data
    return result


def candles(points, width):
    out = {}
    for ts, price, _, _, _ in points:
        if price is None:
            continue
        t0 = ts // width * width
        c = out.get(t0)
        if c is None:
            out[t0] = [t0, price, price, price, price, 1]
        else:
            c[2], c[3], c[4], c[5] = max(c[2], price), min(c[3], price), price, c[5] + 1
    return [out[t] for t in sorted(out)]


def get(port, path, code=200, key=KEY):
    r, body = h.request(port, path, key)
    assert r.status == code, (path, r.status, body[:300])
    return r, body


def history_loaded(port):
    """/v1/status's history once a restart has read it back. Ready comes
    first: the history's files and the journal's records after them are
    read on the history thread after it (engine/storage/history_recovery.h),
    and until then its counts are part way (under ASan a restart of 600
    records was read at seq 512). Read again after `loading` went false, as
    the counts are written before it."""
    h.status(port, KEY, ready_within=60)
    h.wait_until(lambda: not h.status(port, KEY)["history"]["loading"], 60, "the history read back")
    return h.status(port, KEY)["history"]


class OddsHistory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("history")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        cls.recs = build_feed(cls.feed)
        cls.expected = expected_history(cls.recs)
        cls.srv = h.Server("--keys", cls.keys, "--progress", "0", "--feed", f"replay:{cls.feed},speed=max")
        cls.srv.wait_for(r"serving http://")
        # Until the history holds the last record (its recorder trails the engine).
        h.wait_until(lambda: cls.history_seq() == len(cls.recs), 60, "the history reaching the feed's end")

    @classmethod
    def history_seq(cls):
        r, body = h.request(cls.srv.port, f"/v1/odds/history?id={EVENTS[0]}&from=0&to=0", KEY)
        return r.status == 200 and json.loads(body)["seq"]

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def answer(self, query):
        return json.loads(get(self.srv.port, "/v1/odds/history?" + query)[1])

    def test_every_outcome_matches_the_feed(self):
        points = 0
        for eid in EVENTS:
            a = self.answer(f"id={eid}")
            self.assertEqual((a["id"], a["seq"], a["interval"], a["to"]), (eid, len(self.recs), "raw", self.recs[-1]["at"]))
            self.assertNotIn("held_from", a)
            self.assertEqual(a["held_from_seq"], 0)  # the log seen from its start, nothing dropped
            self.assertEqual(a["data"], self.expected[eid], eid)
            points += sum(len(o["points"]) for m in a["data"].values() for l in m.values() for o in l.values())
        self.assertGreater(points, 300)
        # The feed exercised what the points are for.
        flat = [o for eid in EVENTS for m in self.expected[eid].values() for l in m.values() for o in l.values()]
        self.assertTrue(any(p[1] is None for o in flat for p in o["points"]))
        self.assertTrue(any(o["final"] and o["close"] for o in flat))
        self.assertTrue(any(not o["final"] for o in flat))

    def test_any_id_form_and_the_filters(self):
        eid = EVENTS[1]
        number = eid.rsplit(".", 1)[1]
        self.assertEqual(self.answer(f"id={number}")["data"], self.expected[eid])
        a = self.answer(f"id={eid}&market=1018&line=s2.5&outcome=13")
        self.assertEqual(a["data"], {"1018": {"s2.5": {"13": self.expected[eid]["1018"]["s2.5"]["13"]}}})
        # from/to cut the points, never open and close.
        lo, hi = self.recs[100]["at"], self.recs[300]["at"]
        a = self.answer(f"id={eid}&from={lo}&to={hi}")
        self.assertEqual((a["from"], a["to"]), (lo, hi))
        for m, lines in self.expected[eid].items():
            for l, outs in lines.items():
                for o, want in outs.items():
                    got = a["data"][m][l][o]
                    self.assertEqual(got["points"], [p for p in want["points"] if lo <= p[0] <= hi])
                    self.assertEqual((got["open"], got["close"]), (want["open"], want["close"]))

    def test_candles(self):
        for interval, width in (("10s", 10_000), ("1m", 60_000), ("1h", 3_600_000)):
            for eid in EVENTS:
                a = self.answer(f"id={eid}&interval={interval}")
                self.assertEqual(a["interval"], interval)
                for m, lines in self.expected[eid].items():
                    for l, outs in lines.items():
                        for o, want in outs.items():
                            got = a["data"][m][l][o]
                            self.assertNotIn("points", got)
                            self.assertEqual(got["candles"], candles(want["points"], width), (eid, m, l, o, interval))

    def test_csv(self):
        eid = EVENTS[0]
        r, body = get(self.srv.port, f"/v1/odds/history?id={eid}&format=csv")
        self.assertTrue(r.getheader("Content-Type").startswith("text/csv"))
        rows = list(csv.reader(io.StringIO(body.decode())))
        self.assertEqual(rows[0], ["market", "line", "outcome", "ts", "price", "flags", "s", "seq"])
        want = [[m, l, o] + ["" if v is None else str(v) for v in p]
                for m, lines in self.expected[eid].items() for l, outs in lines.items()
                for o, s in outs.items() for p in s["points"]]
        key = lambda row: (int(row[0]), row[1], int(row[2]), int(row[7]))
        self.assertEqual(sorted(rows[1:], key=key), sorted(want, key=key))

    def test_errors(self):
        port = self.srv.port
        def error(query, code):
            return json.loads(get(port, "/v1/odds/history" + query, code)[1])["error"]
        self.assertEqual(error("", 400), "Missing id parameter")
        self.assertEqual(error("?id=s7-1.999", 404), "Event not found")
        self.assertEqual(error("?id=nonsense", 404), "Event not found")
        for query, name in (("from=x", "from"), ("to=1.5", "to"), ("from=5&to=4", "from"), ("interval=2m", "interval"),
                            ("format=xml", "format"), ("market=-1", "market"), ("outcome=a", "outcome")):
            self.assertIn(f"Invalid {name} parameter", error(f"?id={EVENTS[0]}&{query}", 400), query)
        # A range that starts past the newest record is empty, never reversed.
        newest = json.loads(get(port, f"/v1/odds/history?id={EVENTS[0]}", 200)[1])["to"]
        late = json.loads(get(port, f"/v1/odds/history?id={EVENTS[0]}&from={newest + 1000}", 200)[1])
        self.assertEqual((late["from"], late["to"]), (newest + 1000, newest + 1000))
        self.assertTrue(all(not o["points"] for lines in late["data"].values() for outs in lines.values()
                            for o in outs.values()), late["data"])
        get(port, f"/v1/odds/history?id={EVENTS[0]}", 403, key=NO_ODDS)
        get(port, f"/v1/odds/history?id={EVENTS[0]}", 401, key="wrong")


class Bounds(unittest.TestCase):
    """A small --history-bytes: the oldest points go, answers say held_from,
    a range before it is horizon_exceeded; --history off: no route."""

    def setUp(self):
        self.dir = h.scratch("history-bound")
        self.keys = h.write_keys(self.dir, KEYS)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_bound_and_off(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        recs = build_feed(feed, n=20000, seed=7)
        with h.clean_server(self, "--keys", self.keys, "--progress", "0", "--history-bytes", "64K",
                            "--feed", f"replay:{feed},speed=max") as srv:
            srv.wait_for(r"serving http://")
            def full():
                r, body = h.request(srv.port, f"/v1/odds/history?id={EVENTS[0]}", KEY)
                a = json.loads(body)
                return r.status == 200 and a["seq"] == len(recs) and a
            a = h.wait_until(full, 60, "the history reaching the feed's end")
            held = a["held_from"]
            self.assertGreater(held, recs[0]["at"])
            self.assertEqual(a["from"], held)
            cut = a["held_from_seq"]
            self.assertGreater(cut, 1)
            want = expected_history(recs)[EVENTS[0]]
            for m, lines in a["data"].items():
                for l, outs in lines.items():
                    for o, got in outs.items():
                        # What is held is the tail of the whole history.
                        tail = want[m][l][o]["points"][-len(got["points"]):] if got["points"] else []
                        self.assertEqual(got["points"], tail)
                        self.assertTrue(all(p[0] >= held for p in got["points"]))
                        # Every point of the whole history from held_from_seq on is held.
                        self.assertEqual(got["points"], [p for p in want[m][l][o]["points"] if p[-1] >= cut])
            r, body = get(srv.port, f"/v1/odds/history?id={EVENTS[0]}&to={held - 1}", 400)
            self.assertEqual(json.loads(body), {"error": "horizon_exceeded", "held_from": held})
        with h.clean_server(self, "--keys", self.keys, "--progress", "0", "--history", "off",
                            "--feed", f"replay:{feed},speed=max") as srv:
            srv.wait_for(r"serving http://")
            r, body = get(srv.port, f"/v1/odds/history?id={EVENTS[0]}", 404)
            self.assertEqual(json.loads(body), {"error": "Not found"})


    def test_a_restart_keeps_the_history_its_files_hold(self):
        """A restart on a --data-dir rebuilds the history from its files:
        every answer as before. Without the files (and the journal compacted
        past the log's start) it holds from the record after the recovered
        seq (held_from_seq), each outcome's quote then being where its next
        point starts from."""
        feed = os.path.join(self.dir, "feed.jsonl")
        recs = build_feed(feed)
        data = os.path.join(self.dir, "data")
        server = ("--keys", self.keys, "--progress", "0", "--data-dir", data, "--snapshot-every", "100")
        with h.clean_server(self, *server, "--feed", f"replay:{feed},speed=max") as srv:
            srv.wait_for(r"serving http://")
            st = h.wait_until(lambda: (s := h.status(srv.port, KEY)["history"]) and s["seq"] == len(recs) and s, 60,
                              "the feed recorded")
            self.assertEqual((st["held_from_seq"], st["held_from"]), (0, 0))
            self.assertGreater(st["points"], 0)
            before = {eid: get(srv.port, f"/v1/odds/history?id={eid}")[1] for eid in EVENTS}
        with h.clean_server(self, *server, "--feed", "none") as srv:
            srv.wait_for(r"serving http://")
            again = history_loaded(srv.port)
            same = ("seq", "events", "points", "bytes", "held_from", "held_from_seq")
            self.assertEqual({k: again[k] for k in same}, {k: st[k] for k in same})
            self.assertGreater(again["files"], 0)
            self.assertEqual({eid: get(srv.port, f"/v1/odds/history?id={eid}")[1] for eid in EVENTS}, before)
        for name in os.listdir(data):
            if name.startswith("history-"):
                os.remove(os.path.join(data, name))
        with h.clean_server(self, *server, "--feed", "none") as srv:
            srv.wait_for(r"serving http://")
            st = history_loaded(srv.port)
            self.assertEqual((st["seq"], st["held_from_seq"], st["points"]), (len(recs), len(recs) + 1, 0))
            self.assertEqual(st["held_from"], max(r["at"] for r in recs))
            a = json.loads(get(srv.port, f"/v1/odds/history?id={EVENTS[0]}")[1])
            self.assertEqual(a["held_from_seq"], len(recs) + 1)
            outcomes = [o for m in a["data"].values() for l in m.values() for o in l.values()]
            self.assertGreater(len(outcomes), 0)
            self.assertEqual({(o["open"], o["close"], len(o["points"])) for o in outcomes}, {(None, None, 0)})


if __name__ == "__main__":
    h.main()
