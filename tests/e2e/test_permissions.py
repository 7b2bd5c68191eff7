"""The permission table of docs/api.md ("Permissions") on every route, every
/rdstn op and both streams, through the real binary. For each permission p
there is a key with every permission but p and a key with p alone: a key
without p is refused (403, "API key lacks the 'p' permission") on every
route and op whose answer carries p's data, and not elsewhere; a key with
it is not refused for it. /rdstn refuses a whole request when one command
needs what the key lacks. The streams filter instead of refusing once the
handshake is admitted: a key without 'prematch' never receives a pre-match
event, without 'live' never a live one, without 'odds' no price, checked on
the connect snapshot and on the deltas of a replayed feed in which events
kick off and are removed."""
import asyncio
import json
import os
import shutil
import struct
import tempfile
import time
import unittest

import websockets

import harness as h
from wsraw import RawWs


PERMS = ["live", "prematch", "odds", "scores", "widget", "stream"]
T0 = 1767225600000
LIVE, PRE = "s7-1.801", "s7-1.802"


def keys():
    ks = [{"key": "all", "permissions": PERMS, "ws_connections": 50}]
    for p in PERMS:
        ks.append({"key": f"no-{p}", "permissions": [q for q in PERMS if q != p], "ws_connections": 50})
        ks.append({"key": f"only-{p}", "permissions": [p], "ws_connections": 50})
    return {"keys": ks}


def feed(path):
    lines = [{"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"}]
    at = T0
    for eid, live in ((LIVE, True), (PRE, False)):
        n = eid.rsplit(".", 1)[1]
        lines.append({"at": at, "op": "event", "id": eid, "event": {
            "c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11, "ts": T0 // 1000 + 600,
            "h": f"Home {n}", "a": f"Away {n}", "co": 101, "map": {f"s7_{'l' if live else 'p'}1.{n}": {"p": 0}},
            "s": 0, "live": live, "sport": 1}})
        lines.append({"at": at + 1, "op": "market", "id": eid, "market": 1001,
                      "lines": {"s": {"s": 0, "o": {"2001": [200, 0], "2002": [320, 0], "2003": [380, 0]}}}})
        lines.append({"at": at + 2, "op": "score", "id": eid, "home": 1 if live else 0, "away": 0,
                      "status": "live" if live else "scheduled"})
        at += 10
    with open(path, "w") as f:
        f.write("\n".join(json.dumps(l, separators=(",", ":")) for l in lines) + "\n")


def rdstn(cmds):
    return ("POST", "/rdstn", json.dumps(cmds))


# name, (method, path, body), data permissions (all needed), alternatives (one suffices), status when admitted
EV = {"live", "prematch"}  # /v1/event and /rdstn: a key with neither has no use for them
CASES = [
    ("sports", ("GET", "/v1/sports", None), set(), set(), 200),
    ("status", ("GET", "/v1/status", None), set(), set(), 200),
    ("live", ("GET", "/v1/live", None), {"live"}, set(), 200),
    ("live of a sport", ("GET", "/v1/live?sport=1", None), {"live"}, set(), 200),
    ("prematch", ("GET", "/v1/prematch", None), {"prematch"}, set(), 200),
    ("event, live", ("GET", f"/v1/event?id={LIVE}", None), {"live"}, EV, 200),
    ("event, live, numeric id", ("GET", "/v1/event?id=801", None), {"live"}, EV, 200),
    ("event, pre-match", ("GET", f"/v1/event?id={PRE}", None), {"prematch"}, EV, 200),
    ("event, unknown", ("GET", "/v1/event?id=999999", None), set(), EV, 404),
    ("odds", ("GET", f"/v1/odds?ids={LIVE},{PRE}", None), {"odds"}, set(), 200),
    ("odds, POST", ("POST", "/v1/odds", json.dumps({"sport": 1, "market": 1001, "events": [LIVE]})), {"odds"}, set(),
     200),
    ("scores", ("GET", "/v1/scores", None), {"scores"}, set(), 200),
    ("scores by id", ("GET", f"/v1/scores?ids={PRE}", None), {"scores"}, set(), 200),
    ("settlements", ("GET", f"/v1/settlements?ids={LIVE}", None), {"scores"}, set(), 200),
    ("markets", ("GET", "/v1/markets?sport=1", None), {"odds"}, set(), 200),
    ("market groups", ("GET", "/v1/market-groups?sport=1", None), {"odds"}, set(), 200),
    ("stream URL", ("GET", f"/v1/stream?id={LIVE}", None), {"stream"}, set(), 200),
    ("widget events", ("GET", "/widget-events", None), {"widget"}, set(), 200),
    ("widget data", ("GET", f"/widget-data?event_id={LIVE}", None), {"widget"}, set(), 200),
    ("widget page", ("GET", f"/widget?event_id={LIVE}", None), {"widget"}, set(), 200),
    # /rdstn: one of the event permissions to call it at all, then per command.
    ("rdstn sl", rdstn([["sl"]]), set(), EV, 200),
    ("rdstn sp", rdstn([["sp"]]), set(), EV, 200),
    ("rdstn g sport list", rdstn([["g", ["bm1_sl", "bm1_sp"]]]), set(), EV, 200),
    ("rdstn g unknown key", rdstn([["g", ["bm1_999999", "junk"]]]), set(), EV, 200),
    ("rdstn g el", rdstn([["g", ["bm1_el1"]]]), {"live"}, EV, 200),
    ("rdstn g ep", rdstn([["g", ["bm1_ep1"]]]), {"prematch"}, EV, 200),
    ("rdstn g live event", rdstn([["g", [f"bm1_{LIVE}"]]]), {"live"}, EV, 200),
    ("rdstn g pre-match event", rdstn([["g", ["bm3_802"]]]), {"prematch"}, EV, 200),
    ("rdstn go live event", rdstn([["go", [f"bm1_{LIVE}@0"]]]), {"live"}, EV, 200),
    ("rdstn go ep", rdstn([["go", ["bm1_ep1"]]]), {"prematch"}, EV, 200),
    ("rdstn gf el (as g)", rdstn([["gf", ["bm1_el1"]]]), {"live"}, EV, 200),
    ("rdstn gf live event", rdstn([["gf", [f"bm1_{LIVE}"]]]), {"live", "odds", "scores"}, EV, 200),
    ("rdstn gf pre-match event", rdstn([["gf", [f"bm1_{PRE}"]]]), {"prematch", "odds", "scores"}, EV, 200),
    ("rdstn ga el", rdstn([["ga", ["bm1_el1"]]]), {"live", "odds", "scores"}, EV, 200),
    ("rdstn ga ep", rdstn([["ga", ["bm1_ep1"]]]), {"prematch", "odds", "scores"}, EV, 200),
    ("rdstn several commands", rdstn([["sp"], ["g", ["bm1_ep1"]], ["g", ["bm1_el1"]]]), {"live", "prematch"}, EV,
     200),
]


def handshake_refusal(raw):
    """(status, JSON body) of a refused handshake on a RawWs."""
    n = int(next(l.split(":", 1)[1] for l in raw.head.split("\r\n") if l.lower().startswith("content-length:")))
    raw._fill(n)
    body = json.loads(raw.buf[:n])
    raw.close()
    return raw.status, body


def refusal(names):
    return "API key lacks the '" + "' or '".join(names) + "' permission"


def expected(key_perms, needs, alternatives):
    """None if admitted, else the refusal text (the dispatcher's order: the
    alternatives first, then the first missing permission in table order)."""
    if alternatives and not alternatives & key_perms:
        return refusal([p for p in PERMS if p in alternatives])
    lack = [p for p in PERMS if p in needs and p not in key_perms]
    return refusal(lack[:1]) if lack else None


class Permissions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("perms")
        cls.keys = h.write_keys(cls.dir, keys())
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        feed(cls.feed)
        cls.srv = h.Server("--feed", f"replay:{cls.feed},speed=max", "--keys", cls.keys, "--progress", "0",
                           "--stream-sports", "1")
        cls.srv.wait_for(r"serving http://")
        cls.srv.wait_for(r"replay of .* finished")
        deadline = time.time() + 30
        while time.time() < deadline:  # the engine has applied the whole feed
            st = json.loads(h.request(cls.srv.port, "/v1/status", "all")[1])
            if st["feed"]["records_applied"] == 6 and st["seq"] == 6:  # counted, and published to REST
                break
            time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def call(self, req, key):
        method, path, body = req
        r, data = h.request(self.srv.port, path, key, method, {"Content-Type": "application/json"}, body)
        return r.status, data

    def test_matrix_over_every_route_and_rdstn_op(self):
        checked = 0
        for name, req, needs, alternatives, ok_status in CASES:
            st, body = self.call(req, "all")
            self.assertEqual(st, ok_status, (name, body))
            for p in PERMS:
                for key, perms in ((f"no-{p}", set(PERMS) - {p}), (f"only-{p}", {p})):
                    st, body = self.call(req, key)
                    want = expected(perms, needs, alternatives)
                    if want is None:
                        self.assertEqual(st, ok_status, (name, key, body))
                    else:
                        self.assertEqual((st, json.loads(body)), (403, {"error": want}), (name, key))
                    checked += 1
                # The heart of it: without p, refused exactly where p's data is.
                st, _ = self.call(req, f"no-{p}")
                self.assertEqual(st == 403, p in needs, (name, p))
        self.assertEqual(checked, len(CASES) * len(PERMS) * 2)

    def test_admitted_answers_carry_what_was_checked(self):
        # The cases above are checked against their contents too: the live
        # list holds the live event, gf holds odds and score.
        st, body = self.call(("GET", "/v1/live?sport=1", None), "only-live")
        self.assertEqual(list(json.loads(body)["data"]), [LIVE])
        st, body = self.call(("GET", "/v1/prematch?sport=1", None), "only-prematch")
        self.assertEqual(list(json.loads(body)["data"]), [PRE])
        st, body = self.call(rdstn([["gf", [f"bm1_{LIVE}"]]]), "no-prematch")
        full = json.loads(body)[0][f"bm1_{LIVE}"]
        self.assertEqual((full["event"]["live"], sorted(full["odds"]), full["score"]["home"]), (True, ["1001"], 1))
        st, body = self.call(rdstn([["g", ["bm1_el1", "bm1_ep1"]]]), "all")
        out = json.loads(body)
        self.assertEqual((list(out[0]["bm1_el1"]), list(out[1]["bm1_ep1"])), ([LIVE], [PRE]))

    # -- streams: the handshake needs one of the kinds a stream carries; then each frame is filtered
    def pt_snapshot(self, key):
        """The /pt-ws connect sequence for `key`: (ready, {channel: body}); a
        ping answered after it proves nothing else was queued before."""
        raw = RawWs(self.srv.port, f"/pt-ws?api_key={key}&protocol=v2")
        if raw.status != 101:
            return handshake_refusal(raw)
        frames = []
        raw.send_frame(9, b"end")
        while True:
            op, payload = raw.recv_frame()
            if op == 10:
                self.assertEqual(payload, b"end")
                break
            if op == 1:
                frames.append(payload.decode().split("\x1f", 2))
        raw.close()
        t, ch, ready = frames[0]
        self.assertEqual((t, ch), ("INFO", "PUB"))
        return json.loads(ready), {c: json.loads(b) for t, c, b in frames[1:]}

    def test_pt_ws_connect_snapshot_by_permission(self):
        for key in ["all"] + [f"no-{p}" for p in PERMS] + [f"only-{p}" for p in PERMS]:
            perms = set(PERMS) - {key[3:]} if key.startswith("no-") else {key[5:]} if key != "all" else set(PERMS)
            got = self.pt_snapshot(key)
            if not perms & {"live", "prematch", "odds"}:
                self.assertEqual(got, (403, {"error": refusal(["live", "prematch", "odds"])}), key)
                continue
            ready, channels = got
            events = {}
            for ch, body in channels.items():
                if ch.startswith("evt:"):
                    events.update(body)
            want = ([LIVE] if "live" in perms else []) + ([PRE] if "prematch" in perms else [])
            self.assertEqual(sorted(events), sorted(want), key)
            self.assertEqual(sorted(c for c in channels if c.startswith("odds:")),
                             ["odds:1:801"] if "odds" in perms else [], key)
            self.assertEqual(ready["channels"], (["evt"] if perms & {"live", "prematch"} else []) +
                             (["odds"] if "odds" in perms else []), key)

    def test_ws_snapshot_and_subscriptions_by_permission(self):
        for key in ["all", "no-prematch", "no-odds", "only-live", "no-live", "only-prematch", "only-odds"]:
            perms = set(PERMS) - {key[3:]} if key.startswith("no-") else {key[5:]} if key != "all" else set(PERMS)
            raw = RawWs(self.srv.port, f"/ws?api_key={key}")
            if "live" not in perms:
                self.assertEqual(handshake_refusal(raw), (403, {"error": refusal(["live"])}), key)
                continue
            op, payload = raw.recv_frame()
            snap = json.loads(payload)
            self.assertEqual(snap["type"], "snapshot")
            self.assertEqual(list(snap["live"]), [LIVE], key)
            self.assertEqual(list(snap["prematch"]), [PRE] if "prematch" in perms else [], key)
            raw.send_frame(1, json.dumps({"subscribe": {"event_id": LIVE, "markets": ["1001"]}}).encode())
            op, payload = raw.recv_frame()
            msg = json.loads(payload)
            self.assertEqual(msg.pop("seq"), snap["seq"], key)  # every /ws message carries the log position
            if "odds" in perms:
                self.assertEqual(msg["type"], "subscribed", key)
            else:
                self.assertEqual(msg, {"error": refusal(["odds"])}, key)
            raw.send_frame(8, struct.pack("!H", 1000))
            raw.close()


class StreamDeltasByPermission(unittest.TestCase):
    """Deltas as events kick off and leave: each key's evt: state, built from
    its connect snapshot and deltas, is exactly the REST lists it may read."""

    def test_deltas_follow_the_classes_a_key_may_see(self):
        d = tempfile.mkdtemp(prefix="oddsrelay-perms-deltas-")
        try:
            kf = h.write_keys(d, keys())
            fd = os.path.join(d, "feed.jsonl")
            h.gen_feed(fd, 20000, "seed=6,events=60,rate=400,minute=100")
            with h.clean_server(self, "--feed", f"replay:{fd},speed=10", "--keys", kf, "--progress", "0") as srv:
                srv.wait_for(r"serving http://")
                self.follow(srv)
        finally:
            shutil.rmtree(d)

    def follow(self, srv):
        port = srv.port

        async def one(key):
            events, nulls, kinds = {}, 0, set()
            url = f"ws://127.0.0.1:{port}/pt-ws?api_key={key}&protocol=v2"
            async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                t, ch, body = (await ws.recv()).split("\x1f", 2)
                seq, done = json.loads(body)["seq"], None
                while True:
                    try:
                        frame = await asyncio.wait_for(ws.recv(), 1)
                    except asyncio.TimeoutError:
                        frame = None
                    if frame is not None:
                        t, ch, body = frame.split("\x1f", 2)
                        body = json.loads(body)
                        if t == "INFO":
                            self.assertEqual(body["from"], seq + 1)
                            seq = body["seq"]
                        elif ch.startswith("evt:"):
                            for k, v in body.items():
                                if v is None:
                                    nulls += 1
                                    events.pop(k, None)
                                else:
                                    kinds.add(v["live"])
                                    events[k] = v
                        else:
                            kinds.add("odds")
                    if done is None and "finished" in srv.log():
                        # The source is done; the final seq is the one that stops moving.
                        a = h.status(port, "all")["seq"]
                        await asyncio.sleep(0.3)
                        if h.status(port, "all")["seq"] == a:
                            done = a
                    if done is not None and seq >= done:
                        return events, nulls, kinds

        async def all_three():
            return await asyncio.gather(one("only-live"), one("only-prematch"), one("no-odds"), one("only-odds"))

        (live, live_nulls, live_kinds), (pre, pre_nulls, pre_kinds), (both, _, both_kinds), (_, _, odds_kinds) = \
            h.run_async(all_three(), 180)

        def rest_list(path):
            out = {}
            for group in json.loads(h.request(port, path, "all")[1])["data"].values():
                out.update(group)
            return out

        rest_live, rest_pre = rest_list("/v1/live"), rest_list("/v1/prematch")
        self.assertTrue(rest_live and rest_pre)
        self.assertEqual(live, rest_live)
        self.assertEqual(pre, rest_pre)
        self.assertEqual(both, {**rest_live, **rest_pre})
        self.assertEqual(live_kinds, {True})     # never a pre-match event, never a price
        self.assertEqual(pre_kinds, {False})     # never a live event
        self.assertEqual(both_kinds, {True, False})
        self.assertEqual(odds_kinds, {"odds"})  # prices only
        self.assertGreater(pre_nulls, 0)         # kick-offs left the pre-match view
        self.assertGreater(live_nulls, 0)        # removals left the live view


if __name__ == "__main__":
    h.main()
