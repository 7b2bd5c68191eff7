"""The legacy and add-on channels through the real binary: POST /rdstn
(every op, key pattern, bound and error; the `go` loop across a real change,
made deterministic by restarting on the same --data-dir with more records)
and the stream add-on (covered, uncovered and unknown events, permission,
and a signed URL that works until it expires and fails once tampered with)."""
import json
import os
import shutil
import time
import unittest

import harness as h

KEY = "channels-key"


class Channels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("channels")
        keys = h.write_keys(cls.dir, {"keys": [
            {"key": KEY, "permissions": ["live", "prematch", "odds", "scores", "stream"]},
            {"key": "live-only", "permissions": ["live"]},
            {"key": "scores-only", "permissions": ["scores"]}]})
        cls.srv = h.Server("--feed", "sim:seed=4,events=150,rate=100", "--keys", keys, "--progress", "0",
                           "--stream-sports", "1,2", "--stream-ttl", "2")
        cls.srv.wait_for(r"serving http://")
        # The simulator lists its events over time: wait for live ones in the
        # sports the tests use.
        live = lambda: json.loads(h.request(cls.srv.port, "/v1/live", KEY)[1])["data"]
        h.wait_until(lambda: all(live().get(s) for s in ("1", "2", "5")), 60, "live events in sports 1, 2 and 5")

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def call(self, method, path, body=None, key=KEY):
        r, data = h.request(self.srv.port, path, key, method, {"Content-Type": "application/json"}, body)
        return r.status, json.loads(data)

    def rdstn(self, cmds, status=200, key=KEY):
        st, body = self.call("POST", "/rdstn", json.dumps(cmds) if not isinstance(cmds, str) else cmds, key)
        self.assertEqual(st, status, body)
        return body

    def live_event(self, sport):
        st, d = self.call("GET", f"/v1/live?sport={sport}")
        return next(iter(d["data"]))

    def test_rdstn_ops_and_keys(self):
        eid = self.live_event(1)
        out = self.rdstn([["sl"], ["sp"], ["g", ["bm1_sl", "bm1_el1", "bm1_ep1", f"bm1_{eid}", "bm1_nothing", "junk"]]])
        self.assertEqual([list(o)[0] for o in out],
                         ["sl", "sp", "bm1_sl", "bm1_el1", "bm1_ep1", f"bm1_{eid}", "bm1_nothing", "junk"])
        sl = out[0]["sl"]
        self.assertEqual(json.loads(sl["1"])[:2], [1, "Soccer"])  # the value is a JSON string "[id, name, count]"
        self.assertEqual(out[2]["bm1_sl"], sl)
        self.assertIn(eid, out[3]["bm1_el1"])
        self.assertTrue(all(not e["live"] for e in out[4]["bm1_ep1"].values()))
        self.assertEqual(out[5][f"bm1_{eid}"]["sport"], 1)  # g: the event object
        self.assertIsNone(out[6]["bm1_nothing"])
        self.assertIsNone(out[7]["junk"])
        # A sport outside the table names nothing, as an unknown event does;
        # a known sport with no events is an empty map.
        odd = self.rdstn([["g", ["bm1_el999", "bm1_el0", "bm1_el8", "bm1_ep-1", "bm1_el19"]]])
        self.assertEqual([o[k] for o in odd for k in o], [None, None, None, None, {}])
        full = self.rdstn([["gf", [f"bm1_{eid}"]], ["ga", ["bm1_el1"]]])
        self.assertEqual(set(full[0][f"bm1_{eid}"]), {"event", "odds", "score"})
        self.assertIn("1001", full[0][f"bm1_{eid}"]["odds"])
        self.assertEqual(set(full[1]["bm1_el1"][eid]), {"event", "odds", "score"})
        go = self.rdstn([["go", [f"bm1_{eid}", f"bm1_{eid}@99999999999999", "bm1_nothing"]]])
        self.assertEqual(go[0][f"bm1_{eid}"]["sport"], 1)
        self.assertIsInstance(go[0]["v"], int)
        self.assertIsNone(go[1][f"bm1_{eid}@99999999999999"])  # nothing is newer than a far-future version
        self.assertEqual(go[2], {"bm1_nothing": None, "v": go[2]["v"]})
        # gf answers carry prices and scores: refused whole without them (docs/api.md "Permissions").
        no_odds = self.rdstn([["g", [f"bm1_{eid}"]], ["gf", [f"bm1_{eid}"]]], 403, key="live-only")
        self.assertEqual(no_odds, {"error": "API key lacks the 'odds' permission"})

    def test_rdstn_errors(self):
        for bad in ("not json", "{}", '[["zz", []]]', '[["g"]]', '[["g", "bm1_sl"]]', '[["g", [1]]]',
                    '[["sl", ["x"]]]', '[[]]'):
            body = self.rdstn(bad, 400)
            self.assertIn("error", body)
        many = self.rdstn([["g", [f"bm1_{i}" for i in range(201)]]], 400)
        self.assertEqual(many, {"error": "Too many keys: at most 200 per request"})
        self.rdstn([["sl"]] * 51, 400)
        self.rdstn([["sl"]], 401, key="nope")
        self.rdstn([["sl"]], 403, key="scores-only")
        st, body = self.call("GET", "/rdstn")
        self.assertEqual(st, 405)

    def test_stream_signed_url(self):
        eid = self.live_event(1)
        before = int(time.time())
        st, d = self.call("GET", f"/v1/stream?id={eid}")
        self.assertEqual(st, 200, d)
        self.assertTrue(before + 2 <= d["data"]["expires_at"] <= int(time.time()) + 2, d)  # now + --stream-ttl
        url = d["data"]["url"]
        self.assertEqual(d["data"]["event_id"], eid)
        self.assertGreater(d["data"]["expires_at"], time.time())
        path = url.split(f":{self.srv.port}", 1)[1]
        st, ok = self.call("GET", path, key=None)  # no API key: the signature is the credential
        self.assertEqual((st, ok["event_id"]), (200, eid))
        sig = path.rsplit("=", 1)[1]
        tampered = path[: -len(sig)] + ("0" if sig[0] != "0" else "1") + sig[1:]
        self.assertEqual(self.call("GET", tampered, key=None), (403, {"error": "Invalid stream signature"}))
        other = path.replace(f"event={eid}", "event=s7-999")
        self.assertEqual(self.call("GET", other, key=None)[0], 403)
        # Valid through second `expires_at`, expired after it: poll until it
        # expires (--stream-ttl 2; the deadline is generous) and check when.
        answers = set()
        while True:
            st, body = self.call("GET", path, key=None)
            received = time.time()
            if st != 200:
                break
            answers.add(body["event_id"])
            self.assertLess(received, d["data"]["expires_at"] + 5 * 2 + 5, "never expired")
            time.sleep(0.1)
        self.assertEqual((st, body), (403, {"error": "Stream URL expired"}))
        self.assertGreaterEqual(received, d["data"]["expires_at"] + 1)  # not before it expired
        self.assertEqual(answers, {eid})

    def test_stream_coverage_and_permission(self):
        tennis = self.live_event(5)  # not in --stream-sports 1,2
        self.assertEqual(self.call("GET", f"/v1/stream?id={tennis}"), (404, {"error": "No stream coverage for this event"}))
        self.assertEqual(self.call("GET", "/v1/stream?id=987654321"), (404, {"error": "Event not found"}))
        self.assertEqual(self.call("GET", "/v1/stream")[0], 400)
        self.assertEqual(self.call("GET", f"/v1/stream?id={self.live_event(1)}", key="live-only")[0], 403)


def feed_file(path, *records):
    with open(path, "w") as f:
        f.write(json.dumps({"op": "header", "format": "oddsfeed", "version": 1, "provider": "s7"}) + "\n")
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def event(n, at, live, home="Home", sport=1):
    return {"at": at, "op": "event", "id": f"s7-101.{n}",
            "event": {"c": [1, "England", 1, "GB"], "t": [1001, "Premier League", 1], "g": 11, "ts": 1767225000,
                      "h": home, "a": f"Away {n}", "co": 101, "map": {f"s7_l101.{n}": {"p": 0}}, "s": 0, "live": live,
                      "sport": sport}}


class RdstnGoLoop(unittest.TestCase):
    """The client loop of `go`: ask, get the value and `v`; ask again with
    that `v` and get null while nothing changed; after a change get the new
    value and a newer `v`. The change comes from a second run of the server
    on the same --data-dir (the journal restores the first run's state, the
    replay adds the change), so no answer depends on timing."""

    T = 1767225600000

    def setUp(self):
        self.dir = h.scratch("go")
        self.keys = h.write_keys(self.dir, {"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds"]}]})
        self.srv = None

    def tearDown(self):
        rc, log = self.srv.stop() if self.srv else (0, "")
        if self.srv:
            self.srv.__exit__()
        shutil.rmtree(self.dir)
        self.assertEqual(rc, 0, log)

    def serve(self, name, *records):
        path = os.path.join(self.dir, name)
        feed_file(path, *records)
        if self.srv:
            rc, log = self.srv.stop()
            self.srv.__exit__()
            self.assertEqual(rc, 0, log)
        self.srv = h.Server("--feed", f"replay:{path},speed=max", "--keys", self.keys,
                            "--data-dir", os.path.join(self.dir, "data"), "--progress", "0")
        self.srv.wait_for(r"serving http://")
        last = records[-1]["at"]
        h.wait_until(lambda: json.loads(h.request(self.srv.port, "/v1/status", KEY)[1])["last_update"] == last,
                     30, "the last record served")

    def go(self, *keys):
        r, body = h.request(self.srv.port, "/rdstn", KEY, "POST", {"Content-Type": "application/json"},
                            json.dumps([["go", list(keys)]]))
        self.assertEqual(r.status, 200, body)
        out = json.loads(body)
        self.assertEqual([list(o)[0] for o in out], list(keys))
        return [(o[k], o["v"]) for o, k in zip(out, keys)]

    def test_go_returns_changes_only(self):
        T = self.T
        self.serve("one.jsonl", event(9001, T + 100, True), event(9002, T + 200, True, home="Quiet"),
                   event(9003, T + 300, False))
        (ev, v), (quiet, qv), (lst, lv) = self.go("bm1_9001", "bm1_s7-101.9002", "bm1_el1")
        self.assertEqual((ev["h"], v), ("Home", T + 100))  # v: the event's updated_at (the at of its last record)
        self.assertEqual((quiet["h"], qv), ("Quiet", T + 200))
        self.assertEqual((sorted(lst), lv), (["s7-101.9001", "s7-101.9002"], T + 200))  # a list: its newest event
        # Sent back unchanged: null, and the same v.
        self.assertEqual(self.go(f"bm1_9001@{v}", f"bm1_s7-101.9002@{qv}", f"bm1_el1@{lv}"),
                         [(None, v), (None, qv), (None, lv)])
        # An older v: the value again.
        self.assertEqual(self.go(f"bm1_9001@{v - 1}")[0], (ev, v))

        # The change: 9001 renamed, then 9003 goes live. 9002 untouched.
        self.serve("two.jsonl", event(9001, T + 5000, True, home="Renamed"), event(9003, T + 6000, True))
        (ev2, v2), (q2, qv2), (lst2, lv2), (ev3, v3) = self.go(f"bm1_9001@{v}", f"bm1_9002@{qv}", f"bm1_el1@{lv}",
                                                               "bm1_9003@0")
        self.assertEqual((ev2["h"], v2), ("Renamed", T + 5000))
        self.assertGreater(v2, v)
        self.assertEqual((q2, qv2), (None, qv))  # unchanged: still null
        self.assertEqual((sorted(lst2), lv2), (["s7-101.9001", "s7-101.9002", "s7-101.9003"], T + 6000))
        self.assertTrue(ev3["live"])
        self.assertEqual(v3, T + 6000)
        # And the loop goes on from the new versions.
        self.assertEqual(self.go(f"bm1_9001@{v2}", f"bm1_el1@{lv2}"), [(None, v2), (None, lv2)])


if __name__ == "__main__":
    h.main()
