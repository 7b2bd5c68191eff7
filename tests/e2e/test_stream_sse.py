"""/pt-sse, the push relay over Server-Sent Events, with real clients:
`curl -N` sees the 200 text/event-stream head, `retry: 1000`, and the
ready INFO as an event with `id: <epoch>:<seq>`; a curl process follows a
scripted feed, leaves, and a second one resumes with Last-Event-ID and ends
with REST's state; a Python client that
applies every event's `data:` (the /pt-ws frame text) leaves, resumes with
Last-Event-ID as EventSource does, and ends with REST's state for what its
filter admits; a bad Last-Event-ID gets the snapshot with the reason."""
import contextlib
import http.client
import json
import os
import subprocess
import time

import harness as h
import test_stream_filters as filters
from scripted_feed import ScriptedFeed, market_removed
from test_relay_state import KEY, StreamState, apply_frame


def read_events(fp):
    """(id, data) per event of an SSE byte stream, skipping comments."""
    ev_id, data = None, None
    while True:
        line = fp.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line == "":
            if data is not None:
                yield ev_id, data
            ev_id, data = None, None
        elif line.startswith("id: "):
            ev_id = line[4:]
        elif line.startswith("data: "):
            data = line[6:]


def scripted_records(test, n):
    """A ScriptedFeed and n simulated records to write through it, with the
    ids of their live and prematch events (for removals)."""
    feed = h.gen_feed(os.path.join(test.dir, "feed.jsonl"), n, "seed=5,events=60,rate=400")
    with open(feed) as f:
        records = [json.loads(line) for line in f if line.startswith('{"at"')]
    ids = lambda live: list(dict.fromkeys(r["id"] for r in records if r["op"] == "event" and r["event"]["live"] == live))
    fifo = ScriptedFeed(os.path.join(test.dir, "feed.fifo"))
    test.addCleanup(fifo.close)
    return fifo, records, ids(True), ids(False)


@contextlib.contextmanager
def scripted_server(test, fifo, first):
    """A server on the scripted feed, serving the records `first` once it yields."""
    with h.Server("--feed", f"replay:{fifo.path},speed=max", "--keys", test.keys, "--progress", "0") as srv:
        srv.wait_for(r"serving http://")
        fifo.open()
        at = fifo.write(*first)
        h.wait_status(srv.port, KEY, lambda s: s["last_update"] == at, "the first records")
        yield srv


class SseReader:
    """A minimal EventSource: yields (id, data) per event, skipping comments."""
    def __init__(self, port, query, last_id=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Last-Event-ID": last_id} if last_id else {}
        self.conn.request("GET", f"/pt-sse?api_key={KEY}&{query}", headers=headers)
        self.resp = self.conn.getresponse()

    def events(self):
        return read_events(self.resp.fp)

    def close(self):
        self.conn.close()


class Sse(StreamState):
    make_feed = filters.Filters.make_feed
    assert_filtered_rest_state = filters.Filters.assert_filtered_rest_state

    def test_curl_sees_the_head_retry_and_the_ready_info(self):
        with h.Server("--feed", "sim:rate=50", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            p = subprocess.run(["curl", "-sN", "-D", "-", "--max-time", "2",
                                f"http://127.0.0.1:{srv.port}/pt-sse?api_key={KEY}"],
                               capture_output=True, timeout=30)
            out = p.stdout.decode()
            head, _, body = out.partition("\r\n\r\n")
            self.assertTrue(head.startswith("HTTP/1.1 200"), head)
            self.assertIn("Content-Type: text/event-stream", head)
            self.assertIn("X-Accel-Buffering: no", head)
            self.assertTrue(body.startswith("retry: 1000\n\nid: "), body[:80])
            first = body.split("\n\n")[1].split("\n")
            t, ch, ready = h.split_frame(first[1][len("data: "):])
            self.assertEqual((t, ch), ("INFO", "PUB"))
            self.assertEqual(first[0], f"id: {ready['epoch']}:{ready['seq']}")
            r, b = h.request(srv.port, f"/pt-sse?api_key={KEY}&markets=0")
            self.assertEqual((r.status, json.loads(b)["error"][:26]), (400, "Invalid markets parameter:"))
            r, b = h.request(srv.port, "/pt-sse?api_key=nope")
            self.assertEqual(r.status, 401)

    def test_curl_follows_the_stream_then_resumes_with_last_event_id(self):
        """Two real `curl -N` processes on a scripted feed: the first applies
        the snapshot and every event up to a known record, then leaves; the
        second sends that last INFO's id as Last-Event-ID, is resumed, and
        its catch-up on the first's state ends equal to REST."""
        fifo, records, live, _ = scripted_records(self, 9000)
        with scripted_server(self, fifo, records[:3000]) as srv:
            port = srv.port

            def curl(*extra):
                p = subprocess.Popen(["curl", "-sN", "--max-time", "120", *extra,
                                      f"http://127.0.0.1:{port}/pt-sse?api_key={KEY}"], stdout=subprocess.PIPE)
                self.addCleanup(lambda: (p.kill(), p.wait(), p.stdout.close()))
                return p, read_events(p.stdout)

            def until(stream, end_at, events, odds, seq):
                """Applies events up to the INFO of the record at end_at; returns (seq, its id)."""
                for ev_id, data in stream:
                    t, ch, body = h.split_frame(data)
                    if t == "INFO":
                        self.assertEqual(body["from"], seq + 1, "a batch is missing")
                        seq = body["seq"]
                        if body["at"] == end_at:
                            return seq, ev_id
                    else:
                        apply_frame(events, odds, ch, body, self)
                self.fail("curl's stream ended early")

            first, stream = curl()
            _, data = next(stream)
            ready = h.split_frame(data)[2]
            self.assertEqual((ready["ready"], ready.get("resumed")), (True, None))  # no resume asked
            events, odds = {}, {}
            at = fifo.write(*records[3000:6000])
            seq, last_id = until(stream, at, events, odds, ready["seq"])
            self.assertEqual(last_id, f"{ready['epoch']}:{seq}")
            first.kill()
            # While no one reads: more records, and removals.
            fifo.write(*records[6000:])
            at = fifo.write(*(market_removed(k, 1001) for k in live[:3]), {"op": "remove", "id": live[3]})
            second, stream = curl("-H", f"Last-Event-ID: {last_id}")
            _, data = next(stream)
            ready = h.split_frame(data)[2]
            self.assertEqual((ready["ready"], ready["resumed"]), (True, True), ready)
            seq, _ = until(stream, at, events, odds, seq)  # the catch-up's first INFO follows the id's seq
            self.assertEqual(h.status(port, KEY)["seq"], seq)
            self.assert_rest_state(port, events, odds)

    def test_a_client_resumes_with_last_event_id_and_ends_equal_to_rest(self):
        feed, ids, end_at = self.make_feed()
        admit_market = lambda m: m in (1001, 1011)
        anything = lambda _: True
        with h.Server("--feed", f"replay:{feed},speed=12", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            port = srv.port
            events, odds, last_id, infos, seq = {}, {}, None, 0, None
            deadline = time.monotonic() + 120
            done = False
            while not done:
                self.assertLess(time.monotonic(), deadline)
                r = SseReader(port, "markets=1001,1011", last_id)
                self.assertEqual(r.resp.status, 200)
                stream = r.events()
                _, data = next(stream)
                t, ch, ready = h.split_frame(data)
                self.assertTrue(ready["ready"])
                if last_id:
                    self.assertTrue(ready["resumed"], ready)
                else:
                    seq = ready["seq"]
                for ev_id, data in stream:
                    t, ch, body = h.split_frame(data)
                    if t == "INFO":
                        self.assertEqual(body["from"], seq + 1, "a batch is missing")
                        seq = body["seq"]
                        self.assertEqual(ev_id, f"{ready['epoch']}:{seq}")
                        last_id, infos = ev_id, infos + 1
                        if body["at"] == end_at:
                            done = True
                            break
                        if infos == 30:
                            break  # leave; come back as EventSource would
                    else:
                        self.assertIsNone(ev_id)
                        for m in body if ch.startswith("odds") else ():
                            self.assertTrue(admit_market(int(m)))
                        apply_frame(events, odds, ch, body, self)
                r.close()
            self.assertGreater(infos, 30)
            h.wait_status(port, KEY, lambda s: s["feed"]["done"], "the end of the replay")
            self.assert_filtered_rest_state(port, events, odds, anything, admit_market)
            r = SseReader(port, "", "not-a-position")
            _, data = next(r.events())
            t, ch, ready = h.split_frame(data)
            self.assertEqual((ready["resumed"], ready["reason"]), (False, "malformed"))
            r.close()


if __name__ == "__main__":
    h.main()
