"""The legacy and add-on channels through the real binary: POST /rdstn
(every op, key pattern, bound and error) and the stream add-on (covered,
uncovered and unknown events, permission, and a signed URL that works until
it expires and fails once tampered with)."""
import json
import os
import shutil
import tempfile
import time
import unittest

import harness as h

KEY = "channels-key"


class Channels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-channels-")
        keys = os.path.join(cls.dir, "keys.json")
        with open(keys, "w") as f:
            json.dump({"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds", "scores", "stream"]},
                                {"key": "live-only", "permissions": ["live"]},
                                {"key": "scores-only", "permissions": ["scores"]}]}, f)
        cls.srv = h.Server("--feed", "sim:seed=4,events=150,rate=100", "--keys", keys, "--progress", "0",
                           "--stream-sports", "1,2", "--stream-ttl", "2")
        cls.srv.wait_for(r"serving http://")
        time.sleep(0.5)

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rc == 0, log

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
        full = self.rdstn([["gf", [f"bm1_{eid}"]], ["ga", ["bm1_el1"]]])
        self.assertEqual(set(full[0][f"bm1_{eid}"]), {"event", "odds", "score"})
        self.assertIn("1001", full[0][f"bm1_{eid}"]["odds"])
        self.assertEqual(set(full[1]["bm1_el1"][eid]), {"event", "odds", "score"})
        go = self.rdstn([["go", [f"bm1_{eid}", f"bm1_{eid}@99999999999999"]]])
        self.assertIsNotNone(go[0][f"bm1_{eid}"])
        v = go[0]["v"]
        self.assertIsInstance(v, int)
        self.assertIsNone(go[1][f"bm1_{eid}@99999999999999"])  # unchanged since that version
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
        st, d = self.call("GET", f"/v1/stream?id={eid}")
        self.assertEqual(st, 200, d)
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
        time.sleep(3.2)  # --stream-ttl 2
        self.assertEqual(self.call("GET", path, key=None), (403, {"error": "Stream URL expired"}))

    def test_stream_coverage_and_permission(self):
        tennis = self.live_event(5)  # not in --stream-sports 1,2
        self.assertEqual(self.call("GET", f"/v1/stream?id={tennis}"), (404, {"error": "No stream coverage for this event"}))
        self.assertEqual(self.call("GET", "/v1/stream?id=987654321"), (404, {"error": "Event not found"}))
        self.assertEqual(self.call("GET", "/v1/stream")[0], 400)
        self.assertEqual(self.call("GET", f"/v1/stream?id={self.live_event(1)}", key="live-only")[0], 403)


if __name__ == "__main__":
    h.main()
