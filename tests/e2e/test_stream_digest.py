"""verify=1 on /pt-ws and /pt-sse, with real clients on a replayed feed:
every INFO that closes a group carries the digest of what the client
holds (its replica, rebuilt from the frames, hashed by tests/e2e/state_digest.py
from the documented definition), for a plain, a filtered, a conflated and
a compressed stream and for SSE; at the end of the replay, REST's
/v1/odds?digest=1 at the same seq agrees with each stream's last digest
(REST has no event terms: those are added from REST's own lists)."""
import asyncio
import json
import os
import urllib.request

import websockets

import harness as h
import state_digest as sd
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, StreamState, apply_frame, number_of, rest


class Digest(StreamState):
    def make_feed(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        h.gen_feed(feed, 8000, "seed=9,events=40,rate=400")
        ids, last_at = [], 0
        with open(feed) as f:
            for line in f:
                if line.startswith('{"at"'):
                    r = json.loads(line)
                    last_at = max(last_at, r["at"])
                    if r["op"] == "event" and r["id"] not in ids:
                        ids.append(r["id"])
        # A last record whose `at` no other has: its INFO closes the last group.
        end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
        with open(feed, "a") as f:
            f.write(json.dumps(end) + "\n")
        return feed, ids, end["at"]

    def check_info(self, body, events, odds, infos):
        self.assertIn("digest", body, body)
        want = sd.hex16(sd.view_digest({number_of(k) for k in events}, odds))
        self.assertEqual(body["digest"], want, f"INFO {body['seq']}: the digest is not the replica's")
        infos.append(body)

    def follow_ws(self, port, query, end_at, compression="deflate"):
        async def go():
            events, odds, infos = {}, {}, []
            url = f"ws://127.0.0.1:{port}/pt-ws?api_key={KEY}&protocol=v2&verify=1&{query}"
            async with websockets.connect(url, max_size=None, max_queue=None, compression=compression) as ws:
                negotiated = ws.response_headers.get("Sec-WebSocket-Extensions")
                self.assertEqual(negotiated is not None, compression is not None, negotiated)
                t, ch, ready = h.split_frame(await ws.recv())
                # The ready INFO counts the snapshot's frames; its digest is
                # the replica's once they are applied.
                for _ in range(ready["frames"]):
                    t, ch, body = h.split_frame(await asyncio.wait_for(ws.recv(), 60))
                    self.assertEqual(t, "P")
                    apply_frame(events, odds, ch, body, self)
                self.check_info(ready, events, odds, [])
                seq = ready["seq"]
                while True:
                    t, ch, body = h.split_frame(await asyncio.wait_for(ws.recv(), 60))
                    if t == "INFO":
                        self.assertEqual(body["from"], seq + 1)
                        seq = body["seq"]
                        self.check_info(body, events, odds, infos)
                        if body["at"] == end_at:
                            return events, odds, infos
                    else:
                        apply_frame(events, odds, ch, body, self)
        return h.run_async(go(), 120)

    def follow_sse(self, port, query, end_at):
        events, odds, infos = {}, {}, []
        url = f"http://127.0.0.1:{port}/pt-sse?api_key={KEY}&verify=1&{query}"
        with urllib.request.urlopen(url, timeout=60) as r:
            ready, left = None, 0
            for raw in r:
                line = raw.decode().rstrip("\n")
                if not line.startswith("data: "):
                    continue
                t, ch, body = h.split_frame(line[6:])
                if ready is None:
                    ready, left = body, body["frames"]  # the snapshot's frames, counted
                elif t == "INFO":
                    self.assertLessEqual(left, 0, "an INFO inside the counted snapshot")
                    self.check_info(body, events, odds, infos)
                    if body["at"] == end_at:
                        return events, odds, infos
                else:
                    apply_frame(events, odds, ch, body, self)
                    left -= 1
                if left == 0:
                    self.check_info(ready, events, odds, [])  # the snapshot's digest, once
                    left = -1  # checked; the live groups follow
        self.fail("the SSE stream ended early")

    def rest_digest(self, port, keys):
        """REST's digest=1 over those events, chunked (sums add), and the seq it was read at."""
        total, seqs, data = 0, set(), {}
        keys = sorted(keys)
        for chunk in (keys[i:i + 100] for i in range(0, len(keys), 100)):
            ans = rest(port, "/v1/odds?digest=1&ids=" + ",".join(chunk))
            total += int(ans["digest"], 16)
            seqs.add(ans["seq"])
            data.update(ans["data"])
        self.assertEqual(len(seqs), 1, seqs)
        # REST's digest is the documented sum over its own answer.
        self.assertEqual(total & sd.MASK, sd.odds_digest({number_of(k): v for k, v in data.items()}))
        return total & sd.MASK, seqs.pop(), data

    def test_stream_digests_equal_rest_at_the_same_seq(self):
        feed, ids, end_at = self.make_feed()
        picked = ids[:2] + ids[len(ids) // 2:len(ids) // 2 + 2]
        numbers = {number_of(k) for k in picked}
        markets = {1001, 1011}
        shapes = {
            "plain": lambda p: self.follow_ws(p, "", end_at, compression=None),
            "filtered": lambda p: self.follow_ws(p, "events=" + ",".join(picked) + "&markets=1011,1001", end_at, None),
            "conflated": lambda p: self.follow_ws(p, "conflate_ms=200", end_at, None),
            "compressed": lambda p: self.follow_ws(p, "", end_at),
            "sse": lambda p: self.follow_sse(p, "", end_at),
        }
        with h.Server("--feed", f"replay:{feed},speed=8", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port

            async def all_of():
                return await asyncio.gather(*(asyncio.to_thread(f, port) for f in shapes.values()))
            results = dict(zip(shapes, asyncio.run(all_of())))
            status = h.wait_status(port, KEY, lambda s: s["feed"]["done"], "the end of the replay")
            listed = {k: v for path in ("/v1/live", "/v1/prematch")
                      for evs in rest(port, path)["data"].values() for k, v in evs.items()}
            live = [k for k, v in listed.items() if v["live"]]
            self.assertTrue(live)
            for name, (events, odds, infos) in results.items():
                with self.subTest(stream=name):
                    self.assertGreater(len(infos), 3)
                    last = infos[-1]
                    self.assertEqual(last["seq"], status["seq"], "the stream's last INFO is REST's position")
                    if name == "filtered":
                        keys = [k for k in live if number_of(k) in numbers]
                        total, seq, data = self.rest_digest(port, keys)
                        cut = {number_of(k): {m: v for m, v in book.items() if int(m) in markets}
                               for k, book in data.items()}
                        evs = {number_of(k) for k in listed if number_of(k) in numbers}
                        self.assertEqual(last["digest"], sd.hex16(sd.view_digest(evs, cut)))
                    else:
                        total, seq, _ = self.rest_digest(port, live)
                        e_terms = sum(sd.event_term(number_of(k)) for k in listed)
                        self.assertEqual(last["digest"], sd.hex16((total + e_terms) & sd.MASK))
                    self.assertEqual(seq, last["seq"])

    def test_bad_verify_is_400_and_digest_needs_1(self):
        with h.Server("--feed", "sim:seed=3,events=5", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            for path in ("/pt-sse?verify=yes", "/pt-sse?verify=2"):
                r, body = h.request(srv.port, path, KEY)
                self.assertEqual(r.status, 400)
                self.assertEqual(json.loads(body)["error"], "Invalid verify parameter: expected 0 or 1")
            st = h.wait_status(srv.port, KEY, lambda s: s["live_events"] > 0, "a live event")
            ans = rest(srv.port, "/v1/odds?ids=1")
            self.assertNotIn("digest", ans)
            ans = rest(srv.port, "/v1/odds?ids=1&digest=1")
            self.assertEqual(ans["digest"], "0000000000000000")  # nothing in the answer: the empty sum
            self.assertEqual(ans["epoch"], st["epoch"])


if __name__ == "__main__":
    h.main()
