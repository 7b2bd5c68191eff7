"""/pt-ws shaped by the consumer, with real clients on a replayed feed:
events= and markets= filters (a filtered connection never receives an
event or a market outside its filter: connect snapshot, live frames, a
resumed catch-up) and conflate_ms (at most one frame per channel between
two INFOs, INFOs at least the interval apart); each client's state after
the last INFO equals what REST serves for what it admits, and a bad
parameter is a 400 naming it."""
import time
import asyncio
import json
import os
import unittest

import websockets

import harness as h
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, StreamState, apply_frame, number_of, rest

UNKNOWN = 987654321  # an event the feed never has: allowed, never sent
UP = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
      "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


class Filters(StreamState):
    def make_feed(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        rc, out, err = h.run([h.binary("oddsfeed"), "gen", "-o", feed, "--records", "20000",
                              "--sim", "seed=5,events=60,rate=400"])
        self.assertEqual(rc, 0, err)
        ids, last_at = [], 0
        with open(feed) as f:
            for line in f:
                if not line.startswith('{"at"'):
                    continue
                r = json.loads(line)
                last_at = max(last_at, r["at"])
                if r["op"] == "event" and r["id"] not in ids:
                    ids.append(r["id"])
        # A last record whose `at` no other has: the INFO with that `at`
        # closes the last batch (as test_relay_state does).
        end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
        with open(feed, "a") as f:
            f.write(json.dumps(end) + "\n")
        return feed, ids, end["at"]

    def follow(self, port, query, end_at, admit_event, admit_market, resume_after=None):
        """Applies every frame of a filtered stream until the INFO of the
        last record, checking each against the filter; with resume_after,
        leaves after that many INFOs and resumes where it stood."""
        async def go():
            events, odds = {}, {}
            url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2&{query}"
            infos, seq, epoch, resume = 0, None, None, ""
            groups, channels = [], []  # (arrival, channels before it) per INFO
            while True:
                async with websockets.connect(url + resume, max_size=None, max_queue=None) as ws:
                    t, ch, ready = h.split_frame(await ws.recv())
                    self.assertTrue(ready["ready"])
                    if resume:
                        self.assertTrue(ready["resumed"], ready)
                    else:
                        seq, epoch = ready["seq"], ready["epoch"]
                    while True:
                        t, ch, body = h.split_frame(await asyncio.wait_for(ws.recv(), 60))
                        if t == "INFO":
                            self.assertEqual(body["from"], seq + 1, "a batch is missing")
                            seq = body["seq"]
                            infos += 1
                            groups.append((time.monotonic(), channels))
                            channels = []
                            if body["at"] == end_at:
                                return events, odds, groups
                            if infos == resume_after:
                                break
                            continue
                        channels.append(ch)
                        kind, sport, *num = ch.split(":")
                        if kind == "evt":
                            for k in body:
                                self.assertTrue(admit_event(number_of(k)), (query, ch, k))
                        else:
                            self.assertTrue(admit_event(int(num[0])), (query, ch))
                            for m in body:
                                self.assertTrue(admit_market(int(m)), (query, ch, m))
                        apply_frame(events, odds, ch, body, self)
                resume = f"&resume={epoch}:{seq}"
        return h.run_async(go(), 180)

    def assert_filtered_rest_state(self, port, events, odds, admit_event, admit_market):
        """REST's events and live odds, cut to the filter, are what the client rebuilt."""
        listed = {k: v for path in ("/v1/live", "/v1/prematch")
                  for evs in rest(port, path)["data"].values() for k, v in evs.items()}
        self.assertEqual(events, {k: v for k, v in listed.items() if admit_event(number_of(k))})
        live = sorted(k for k, v in events.items() if v["live"])
        self.assertTrue(live)
        books = {}
        for chunk in (live[i:i + 100] for i in range(0, len(live), 100)):
            books.update(rest(port, "/v1/odds?ids=" + ",".join(chunk))["data"])
        for k in live:
            cut = {m: lines for m, lines in books.get(k, {}).items() if admit_market(int(m))}
            self.assertEqual(odds.get(number_of(k), {}), cut, k)

    def test_filtered_streams_see_only_their_filter_and_end_equal_to_rest(self):
        feed, ids, end_at = self.make_feed()
        picked = ids[:2] + ids[len(ids) // 2:len(ids) // 2 + 2]
        numbers = {number_of(k) for k in picked}
        # Every id form: a full key, a numeric tail, a live binding, a key without channel.
        forms = [picked[0], str(number_of(picked[1])), picked[2].replace("-", "_l", 1),
                 f"s7-{number_of(picked[3])}", str(UNKNOWN)]
        in_events = lambda n: n in numbers
        in_markets = lambda m: m in (1001, 1011)
        anything = lambda _: True
        shapes = [("events=" + ",".join(forms), in_events, anything, None),
                  ("markets=1011,1001", anything, in_markets, None),
                  ("events=" + ",".join(forms) + "&markets=1001,1011", in_events, in_markets, None),
                  ("events=" + ",".join(forms) + "&markets=1001,1011", in_events, in_markets, 40)]
        with h.Server("--feed", f"replay:{feed},speed=12", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port

            async def all_of():
                return await asyncio.gather(*(asyncio.to_thread(self.follow, port, q, end_at, e, m, r)
                                              for q, e, m, r in shapes))
            results = asyncio.run(all_of())
            h.wait_status(port, KEY, lambda s: s["feed"]["done"], "the end of the replay")
            for (q, e, m, r), (events, odds, _) in zip(shapes, results):
                with self.subTest(query=q, resumed=r is not None):
                    if e is in_events:
                        self.assertEqual({number_of(k) for k in events} - numbers, set())
                    self.assert_filtered_rest_state(port, events, odds, e, m)

    def test_conflated_stream_sends_the_latest_state_at_most_every_interval(self):
        feed, ids, end_at = self.make_feed()
        anything = lambda _: True
        with h.Server("--feed", f"replay:{feed},speed=12", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            events, odds, groups = self.follow(port, "conflate_ms=250", end_at, anything, anything)
            h.wait_status(port, KEY, lambda s: s["feed"]["done"], "the end of the replay")
            self.assertGreater(len(groups), 5)
            for t, chans in groups[1:]:  # the first also holds the connect snapshot
                self.assertEqual(len(chans), len(set(chans)), "a channel twice in one interval")
            # Arrivals jitter; the server's flushes are 250 ms apart at least.
            gaps = [b[0] - a[0] for a, b in zip(groups, groups[1:])]
            self.assertGreaterEqual(min(gaps), 0.15, gaps)
            span = groups[-1][0] - groups[0][0]
            self.assertLessEqual(len(groups) - 1, span / 0.25 + 1, (len(groups), span))
            self.assert_filtered_rest_state(port, events, odds, anything, anything)

    def test_bad_lists_are_400_naming_the_parameter(self):
        with h.Server("--feed", "sim:rate=50", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            too_many = ",".join(str(i) for i in range(1, 102))
            for query, param in (("events=abc", "events"), ("events=7,,8", "events"), (f"events={too_many}", "events"),
                                 ("markets=0", "markets"), ("markets=1001,", "markets"),
                                 ("markets=" + ",".join(str(i) for i in range(1, 66)), "markets"),
                                 ("conflate_ms=60001", "conflate_ms"), ("conflate_ms=x", "conflate_ms")):
                r, body = h.request(srv.port, f"/pt-ws?api_key={KEY}&{query}", headers=UP)
                self.assertEqual(r.status, 400, query)
                self.assertIn(f"Invalid {param} parameter", json.loads(body)["error"], query)


if __name__ == "__main__":
    h.main()
