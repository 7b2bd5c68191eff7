"""What a fast REST poller relies on, through the real binary on loopback:
the rate-limit headers on every counted answer (and on none other), the
CORS exposure of those headers and of ETag and Retry-After, the weak ETag
of GET /v1/odds with 304 exactly while none of the asked events changed,
and the answer caches behind /v1/odds, /v1/live and /v1/prematch: an
answer changes exactly when the state it shows does, is encoded (and
gzip-compressed) once per version however often it is asked, and its gzip
and plain forms hold the same JSON. The feed is a FIFO the test writes
(scripted_feed.py), so each change, and the absence of any other, is the
test's own."""
import gzip
import http.client
import json
import os
import re
import time
import unittest

import harness as h
from scripted_feed import ScriptedFeed, event_rec, key_of, market_rec

FULL = "poll-full-key"
KEYS = {"keys": [
    {"key": FULL, "name": "full", "sandbox": True, "permissions": ["live", "prematch", "odds", "scores"]},
    {"key": "counted-key", "name": "counted", "rate_limit": 100000, "permissions": ["live", "prematch", "odds"]},
    {"key": "tiny-key", "name": "tiny", "rate_limit": 2, "permissions": ["live"]},
    {"key": "etag-key", "name": "etag", "rate_limit": 100000, "permissions": ["live", "odds"]},
]}
WINDOW_S = 3600  # --rate-window: long, so a run rarely straddles a window (and a straddle is detected)
EXPOSED = ["ETag", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
A, B, C = key_of(5001), key_of(5002), key_of(5003)
MORE = [key_of(6000 + i) for i in range(12)]  # with A and B: an answer over the 1 KiB gzip threshold


class Polling(unittest.TestCase):
    EXTRA = ()  # more server options (test_rest_threads.py runs all of this with --http-threads 2)

    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("poll")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.fifo = ScriptedFeed(os.path.join(cls.dir, "feed.fifo"))
        cls.srv = h.Server("--feed", f"replay:{cls.fifo.path},speed=max", "--keys", cls.keys,
                           "--rate-window", str(WINDOW_S), "--progress", "0", *cls.EXTRA)
        cls.srv.wait_for(r"serving http://")
        cls.fifo.open()
        cls.write(event_rec(A, True), event_rec(B, True), event_rec(C, False), *(event_rec(k, True) for k in MORE),
                  *(market_rec(k, m) for k in (A, B, C, *MORE) for m in (1001, 1007)))

    @classmethod
    def tearDownClass(cls):
        cls.fifo.close()
        h.shut_down(cls.srv, cls.dir)

    @classmethod
    def write(cls, *records):
        """Feeds the records and waits until the engine serves the last one."""
        at = cls.fifo.write(*records)
        h.wait_until(lambda: json.loads(h.request(cls.srv.port, "/v1/status", FULL)[1])["last_update"] == at,
                     60, "the records applied")

    def req(self, path, key=FULL, **kw):
        return h.request(self.srv.port, path, key, **kw)

    def rate(self, r):
        return tuple(r.getheader(n) for n in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"))

    # -- rate-limit headers
    def test_every_counted_answer_carries_the_rate_state(self):
        """Limit is the key's rate_limit; Remaining falls by one per request,
        whatever the answer (200, 400, 404); Reset is the seconds to the end
        of the clock-aligned window, on the server's clock second."""
        paths = ["/v1/live", "/v1/odds", "/v1/event?id=424242", "/v1/prematch?limit=0", "/v1/live?sport=1"]
        for _ in range(3):
            seen = []
            for p in paths:
                sent = time.time()
                r, _ = self.req(p, key="counted-key")
                received = time.time()
                seen.append((r.status, *self.rate(r), sent, received))
            if len({int(s[4]) // WINDOW_S for s in seen} | {int(s[5]) // WINDOW_S for s in seen}) == 1:
                break  # all in one window; else a window ended mid-run: again
        else:
            self.fail("no run fitted in one rate window")
        self.assertEqual([s[0] for s in seen], [200, 400, 404, 400, 200])
        self.assertEqual({s[1] for s in seen}, {"100000"})
        remaining = [int(s[2]) for s in seen]
        self.assertEqual(remaining, list(range(remaining[0], remaining[0] - len(paths), -1)), remaining)
        self.assertLess(remaining[0], 100000)
        for status, _, _, reset, sent, received in seen:
            end = (int(sent) // WINDOW_S + 1) * WINDOW_S
            self.assertTrue(end - int(received) <= int(reset) <= end - int(sent), (reset, sent, received))

    def test_refused_answer_says_nothing_remains_and_when_it_resets(self):
        for _ in range(3):
            start = time.time()
            got = [self.req("/v1/live", key="tiny-key")[0] for _ in range(3)]
            if int(start) // WINDOW_S == int(time.time()) // WINDOW_S:
                break
        statuses = [r.status for r in got]
        self.assertEqual(statuses[-1], 429, statuses)
        r = got[-1]
        self.assertEqual(self.rate(r)[:2], ("2", "0"))
        self.assertEqual(self.rate(r)[2], r.getheader("Retry-After"))
        self.assertTrue(1 <= int(r.getheader("Retry-After")) <= WINDOW_S)

    def test_unlimited_and_unadmitted_answers_carry_none(self):
        for key, path, status in ((FULL, "/v1/live", 200),           # sandbox: no limit
                                  ("nobody", "/v1/live", 401),        # not a key
                                  ("tiny-key", "/v1/odds?ids=1", 403),  # refused before counting
                                  (None, "/healthz", 200)):            # needs no key
            r, _ = self.req(path, key=key)
            self.assertEqual(r.status, status, (key, path))
            self.assertEqual(self.rate(r), (None, None, None), (key, path))

    # -- CORS
    def test_cors_exposes_the_poller_headers_and_admits_if_none_match(self):
        r, data = self.req("/v1/odds", key=None, method="OPTIONS",
                           headers={"Origin": "http://example.test", "Access-Control-Request-Method": "GET",
                                    "Access-Control-Request-Headers": "x-api-key, if-none-match"})
        self.assertEqual((r.status, data), (204, b""))
        allowed = [x.strip().lower() for x in r.getheader("Access-Control-Allow-Headers").split(",")]
        self.assertEqual(sorted(allowed), ["content-type", "if-none-match", "x-api-key"])
        for key, path, status in (("counted-key", "/v1/live", 200), ("nobody", "/v1/live", 401),
                                  ("etag-key", "/v1/odds?ids=" + A, 200)):
            r, _ = self.req(path, key=key, headers={"Origin": "http://example.test"})
            self.assertEqual(r.status, status)
            self.assertEqual(r.getheader("Access-Control-Allow-Origin"), "*")
            exposed = [x.strip() for x in r.getheader("Access-Control-Expose-Headers").split(",")]
            self.assertEqual(sorted(exposed), sorted(EXPOSED), path)

    # -- conditional GET /v1/odds
    def odds(self, ids, etag=None, gz=False, key="etag-key"):
        hdrs = {}
        if etag:
            hdrs["If-None-Match"] = etag
        if gz:
            hdrs["Accept-Encoding"] = "gzip"
        r, data = self.req("/v1/odds?ids=" + ids, key=key, headers=hdrs)
        if r.getheader("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        return r, data

    def test_odds_etag_304_until_an_asked_event_changes(self):
        ids = f"{A},{B}"
        r, data = self.odds(ids)
        self.assertEqual(r.status, 200)
        tag = r.getheader("ETag")
        self.assertRegex(tag, r'^W/"[0-9a-f]{16}"$')
        self.assertEqual(r.getheader("Cache-Control"), "no-cache")
        self.assertEqual(sorted(json.loads(data)["data"]), [A, B])
        # Unchanged: 304, empty, the same tag, still counted.
        r2, data2 = self.odds(ids, etag=tag)
        self.assertEqual((r2.status, data2, r2.getheader("ETag")), (304, b"", tag))
        self.assertEqual(int(self.rate(r2)[1]), int(self.rate(r)[1]) - 1)
        # Weak comparison; a list; "*"; gzip asked: all name the same answer.
        for inm in (tag[2:], f'"0000000000000000", {tag}', "*"):
            self.assertEqual(self.odds(ids, etag=inm)[0].status, 304, inm)
        self.assertEqual(self.odds(ids, etag=tag, gz=True)[0].status, 304)
        self.assertEqual(self.odds(ids, etag='W/"0000000000000000"')[0].status, 200)
        # Another order is another answer (other bytes): another tag.
        r3, _ = self.odds(f"{B},{A}")
        self.assertNotEqual(r3.getheader("ETag"), tag)
        # A change to an event not asked for: still 304.
        self.write(market_rec(C, 1001, 222))
        self.assertEqual(self.odds(ids, etag=tag)[0].status, 304)
        self.assertEqual(self.odds(ids)[0].getheader("ETag"), tag)
        # A change to an asked event: 200 with the new price and a new tag,
        # which is then 304 in turn.
        self.write(market_rec(B, 1001, 777))
        r4, data4 = self.odds(ids, etag=tag)
        self.assertEqual(r4.status, 200)
        self.assertEqual(json.loads(data4)["data"][B]["1001"]["s"]["2001"][0], 777)
        tag2 = r4.getheader("ETag")
        self.assertNotEqual(tag2, tag)
        self.assertEqual(self.odds(ids, etag=tag2)[0].status, 304)
        # gzip and plain answers hold the same JSON under the same tag.
        big = ",".join([A, B, *MORE])
        rg, dg = self.odds(big, gz=True)
        rp, dp = self.odds(big)
        self.assertEqual((rg.getheader("Content-Encoding"), rp.getheader("Content-Encoding")), ("gzip", None))
        self.assertGreater(len(dp), 1024)
        self.assertEqual(rg.getheader("ETag"), rp.getheader("ETag"))
        self.assertEqual(json.loads(dg), json.loads(dp))
        self.assertEqual(len(json.loads(dp)["data"]), 2 + len(MORE))
        self.assertEqual(self.odds(big, etag=rp.getheader("ETag"), gz=True)[0].status, 304)

    def test_odds_post_has_no_etag_and_ignores_if_none_match(self):
        body = json.dumps({"market": 1001, "events": [A]})
        for inm in (None, "*"):
            hdrs = {"Content-Type": "application/json", **({"If-None-Match": inm} if inm else {})}
            r, data = self.req("/v1/odds", key="etag-key", method="POST", body=body, headers=hdrs)
            self.assertEqual(r.status, 200)
            self.assertIsNone(r.getheader("ETag"))
            self.assertEqual(list(json.loads(data)), [A])


    # -- answer caches
    def status_cache(self):
        return json.loads(self.req("/v1/status")[1])["rest_cache"]

    def test_lists_change_exactly_with_the_state_and_are_built_once_per_state(self):
        # One connection: every request lands on the same REST loop, whose
        # cache the counters then describe whatever --http-threads is.
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        self.addCleanup(conn.close)

        def get(path, gz=False):
            hdrs = {"X-API-Key": FULL, **({"Accept-Encoding": "gzip"} if gz else {})}
            conn.request("GET", path, headers=hdrs)
            r = conn.getresponse()
            data = r.read()
            self.assertEqual(r.status, 200, data)
            self.assertEqual(r.getheader("Content-Encoding"), "gzip" if gz else None, path)
            return json.loads(gzip.decompress(data) if gz else data), data

        self.write(market_rec(C, 1007, 302))  # a state no list was built for yet
        before = self.status_cache()
        live, raw = get("/v1/live")
        self.assertGreater(len(raw), 1024)  # gzip applies
        for _ in range(5):
            self.assertEqual(get("/v1/live")[1], raw)  # the same bytes
            self.assertEqual(get("/v1/live", gz=True)[0], live)  # gzip and plain: the same JSON
        pre, _ = get("/v1/prematch?limit=5")
        self.assertEqual(get("/v1/prematch?limit=5", gz=False)[0], pre)
        after = self.status_cache()
        self.assertEqual(after["lists_built"] - before["lists_built"], 2)  # /v1/live once, /v1/prematch once
        self.assertEqual(after["lists_gzipped"] - before["lists_gzipped"], 1)
        # A new state whose listing is the same (an odds change): the same answer.
        self.write(market_rec(A, 1007, 301))
        self.assertEqual(get("/v1/live")[0], live)
        # A new live event: the answer shows it at once, plain and gzip alike.
        d = key_of(5100)
        self.write(event_rec(d, True))
        live2, _ = get("/v1/live")
        self.assertEqual(sorted(live2["data"]["1"]), sorted(list(live["data"]["1"]) + [d]))
        self.assertEqual(get("/v1/live", gz=True)[0], live2)
        self.assertEqual(get("/v1/live?sport=1", gz=True)[0]["data"], live2["data"]["1"])
        end = self.status_cache()
        # One build per state and parameter set asked: after the odds change,
        # after the new event, and /v1/live?sport=1 once.
        self.assertEqual(end["lists_built"] - after["lists_built"], 3)
        self.assertEqual(end["lists_gzipped"] - after["lists_gzipped"], 2)

    def test_odds_are_encoded_and_deflated_once_per_event_version(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        self.addCleanup(conn.close)
        events = [key_of(7000 + i) for i in range(10)]
        self.write(*(event_rec(k, True) for k in events), *(market_rec(k, m) for k in events for m in (1001, 1007)))
        ids = ",".join(events)

        def get(gz):
            conn.request("GET", "/v1/odds?ids=" + ids,
                         headers={"X-API-Key": FULL, **({"Accept-Encoding": "gzip"} if gz else {})})
            r = conn.getresponse()
            data = r.read()
            self.assertEqual((r.status, r.getheader("Content-Encoding")), (200, "gzip" if gz else None))
            return json.loads(gzip.decompress(data) if gz else data)

        before = self.status_cache()
        plain = get(False)
        self.assertEqual(list(plain["data"]), events)
        for _ in range(4):
            self.assertEqual(get(True), plain)
            self.assertEqual(get(False), plain)
        mid = self.status_cache()
        self.assertEqual(mid["odds_encoded"] - before["odds_encoded"], 10)
        self.assertEqual(mid["odds_deflated"] - before["odds_deflated"], 10)
        self.write(market_rec(events[3], 1001, 555))  # one event, one new version
        changed = get(True)
        self.assertEqual(changed["data"][events[3]]["1001"]["s"]["2001"][0], 555)
        self.assertEqual({k: v for k, v in changed["data"].items() if k != events[3]},
                         {k: v for k, v in plain["data"].items() if k != events[3]})
        self.assertEqual(get(False), changed)
        end = self.status_cache()
        self.assertEqual(end["odds_encoded"] - mid["odds_encoded"], 1)
        self.assertEqual(end["odds_deflated"] - mid["odds_deflated"], 1)


if __name__ == "__main__":
    h.main()
