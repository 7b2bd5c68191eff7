"""GET /metrics through the real binary (docs/metrics.md): on the main port
with a key, or on --metrics-listen without one; the values agree with
/v1/status and move by what the test did (requests by route and code, a
rate-limit refusal, a refused stream, a subscriber and the deliveries it
gets); Debian's `promtool check metrics` accepts the text; and a real
Prometheus server (Debian's, on a free loopback port, scraping both
servers every second) stores a sample the test reads back from its query
API. The promtool and Prometheus parts skip, saying why, only when
/usr/bin/promtool or /usr/bin/prometheus is absent (scripts/install-deps.sh
installs both)."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import websockets
from websockets.exceptions import ConnectionClosed

import harness as h

KEY = "metrics-key"
LIMITED = "metrics-limited"
ONE_STREAM = "metrics-one-stream"
KEYS = {"keys": [
    {"key": KEY, "name": "ops", "ws_connections": 10, "permissions": ["live", "prematch", "odds", "scores"]},
    {"key": LIMITED, "name": "limited", "rate_limit": 2, "permissions": ["live"]},
    {"key": ONE_STREAM, "name": "one-stream", "ws_connections": 1, "permissions": ["live", "odds"]},
]}
PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse(text):
    """{series: value} of an exposition; checks that every sample's family
    was declared (# TYPE) before it and that no family is declared twice."""
    values, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in types, f"family {name} declared twice"
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1)
        name = series.split("{", 1)[0]
        family = next((f for f in (name, name.rsplit("_", 1)[0]) if f in types), None)
        assert family, f"sample before its # TYPE: {line}"
        assert series not in values, f"series twice: {series}"
        values[series] = float(value)
    return values


def scrape(port, key=None, query=""):
    """(status, content type, text) of GET /metrics."""
    r, data = h.request(port, "/metrics" + query, key)
    return r.status, r.getheader("Content-Type"), data.decode()


def metrics(port, key=KEY):
    status, ctype, text = scrape(port, key)
    assert status == 200, (status, text)
    return parse(text)


def requests(m, route, code):
    return m.get(f'oddsrelay_http_requests_total{{route="{route}",code="{code}"}}', 0)


def histogram(m, name):
    """(cumulative bucket counts in order of le, count, sum)."""
    buckets = sorted(((float(s.split('le="', 1)[1].split('"')[0]), v) for s, v in m.items()
                      if s.startswith(name + "_bucket{")), key=lambda b: b[0])
    return [v for _, v in buckets], m[name + "_count"], m[name + "_sum"]


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("metrics")
        cls.keys = h.write_keys(cls.dir, KEYS)
        # A replay that ends: its values stay put, so they compare exactly.
        cls.keyed = h.Server("--feed", f"replay:{h.fixture('rest.jsonl')},speed=max", "--keys", cls.keys,
                             "--data-dir", os.path.join(cls.dir, "data"), "--progress", "0")
        # A live feed, /metrics on a listener of its own.
        cls.metrics_port = h.free_port()
        cls.live = h.Server("--feed", "sim:seed=5,events=60,rate=300", "--keys", cls.keys, "--progress", "0",
                            "--metrics-listen", f"127.0.0.1:{cls.metrics_port}")
        for srv in (cls.keyed, cls.live):
            srv.wait_for(r"serving http://")
        h.wait_until(lambda: h.status(cls.keyed.port, KEY)["feed"]["done"], 60, "the replay's end")

    @classmethod
    def tearDownClass(cls):
        logs = []
        for srv in (cls.keyed, cls.live):
            rc, log = srv.stop()
            srv.__exit__()
            logs.append((rc, log))
        shutil.rmtree(cls.dir)
        for rc, log in logs:
            assert rc == 0, log[-3000:]

    # -- where /metrics is served, and to whom

    def test_main_port_needs_a_key_and_the_metrics_listener_none(self):
        st, ctype, text = scrape(self.keyed.port)
        self.assertEqual(st, 401, text)
        st, ctype, text = scrape(self.keyed.port, "not-a-key")
        self.assertEqual(st, 401, text)
        for key, query in ((KEY, ""), (None, f"?api_key={KEY}")):  # the header, or Prometheus's `params`
            st, ctype, text = scrape(self.keyed.port, key, query)
            self.assertEqual((st, ctype), (200, CONTENT_TYPE), text)
            self.assertIn("\noddsrelay_records_applied_total ", text)
        st, ctype, text = scrape(self.metrics_port)
        self.assertEqual((st, ctype), (200, CONTENT_TYPE), text)
        self.assertIn("\noddsrelay_records_applied_total ", text)
        # With --metrics-listen the main port has no /metrics, even with a key.
        st, _, text = scrape(self.live.port, KEY)
        self.assertEqual(st, 404, text)
        r, body = h.request(self.metrics_port, "/v1/status", contract=False)
        self.assertEqual(r.status, 404, body)

    # -- values

    def test_values_agree_with_status(self):
        # The journal's fdatasync runs within 200 ms of the last write.
        h.wait_until(lambda: metrics(self.keyed.port)["oddsrelay_journal_unsynced_records"] == 0, 30,
                     "the journal synced")
        st = h.status(self.keyed.port, KEY)
        m = metrics(self.keyed.port)
        feed = st["feed"]
        self.assertGreater(feed["records_applied"], 0)
        self.assertEqual(m["oddsrelay_ready"], 1)
        self.assertEqual(m["oddsrelay_records_applied_total"], feed["records_applied"])
        self.assertEqual(m['oddsrelay_records_skipped_total{reason="unknown_event"}'], feed["records_skipped"])
        self.assertEqual(m["oddsrelay_feed_malformed_lines_total"], feed["malformed"])
        self.assertEqual(m["oddsrelay_engine_batches_total"], feed["batches"])
        self.assertEqual(m["oddsrelay_log_position"], st["seq"])
        self.assertEqual(m["oddsrelay_feed_clock_seconds"], st["feed_clock"] / 1000)
        for state in ("live", "prematch", "ended", "other"):
            self.assertEqual(m[f'oddsrelay_events{{state="{state}"}}'], st["events"][state], state)
        self.assertEqual(sum(m[f'oddsrelay_events{{state="{s}"}}'] for s in ("live", "prematch", "ended", "other")),
                         st["events"]["held"])
        self.assertEqual(m["oddsrelay_events_evicted_total"], st["events"]["evicted"])
        self.assertEqual(m["oddsrelay_state_bytes"], st["state_bytes"])
        self.assertEqual(m['oddsrelay_stream_subscribers{stream="pt-ws"}'], st["relay"]["pt_ws_connections"])
        self.assertEqual(m['oddsrelay_stream_subscribers{stream="ws"}'], st["relay"]["ws_connections"])
        self.assertEqual(m["oddsrelay_stream_frames_delivered_total"], st["relay"]["deliveries"])
        self.assertEqual(m["oddsrelay_stream_frames_conflated_total"], st["relay"]["conflated"])
        self.assertEqual(m["oddsrelay_journal_unwritten_records"], 0)
        self.assertEqual(m["oddsrelay_journal_write_errors_total"], st["log"]["write_errors"])
        self.assertLessEqual(abs(m["oddsrelay_uptime_seconds"] - st["uptime"]), 2)
        self.assertGreater(m["process_resident_memory_bytes"], 1 << 20)
        self.assertGreater(m["process_open_fds"], 3)
        # The engine timed every batch it took off its queue (those it
        # published, and any of skipped records only); buckets are cumulative.
        buckets, count, total = histogram(m, "oddsrelay_batch_apply_seconds")
        self.assertGreaterEqual(count, feed["batches"])
        self.assertGreater(count, 0)
        self.assertEqual(buckets[-1], count)
        self.assertEqual(buckets, sorted(buckets))
        self.assertGreater(total, 0)
        # No bus here: no bus series.
        self.assertFalse([s for s in m if s.startswith("oddsrelay_bus_")])

    def test_requests_by_route_and_code_move_by_what_was_sent(self):
        before = metrics(self.keyed.port)
        for _ in range(5):
            r, _ = h.request(self.keyed.port, "/v1/live", KEY)
            self.assertEqual(r.status, 200)
        self.assertEqual(h.request(self.keyed.port, "/v1/no-such-route/7", KEY)[0].status, 404)
        self.assertEqual(h.request(self.keyed.port, "/v1/event?id=s7-999.1", KEY)[0].status, 404)
        self.assertEqual(h.request(self.keyed.port, "/v1/live")[0].status, 401)
        after = metrics(self.keyed.port)
        self.assertEqual(requests(after, "/v1/live", 200) - requests(before, "/v1/live", 200), 5)
        self.assertEqual(requests(after, "other", 404) - requests(before, "other", 404), 1)
        self.assertEqual(requests(after, "/v1/event", 404) - requests(before, "/v1/event", 404), 1)
        self.assertEqual(requests(after, "/v1/live", 401) - requests(before, "/v1/live", 401), 1)
        # A scrape is counted once it is answered: `before` shows in `after`.
        self.assertEqual(requests(after, "/metrics", 200) - requests(before, "/metrics", 200), 1)
        self.assertFalse([s for s in after if "no-such-route" in s])  # raw paths are never labels
        # Every answer so far is in the counts: /v1/status counts the
        # requests it has parsed, itself included, and nothing else runs.
        st = h.status(self.keyed.port, KEY)
        m = metrics(self.keyed.port)
        self.assertEqual(sum(v for s, v in m.items() if s.startswith("oddsrelay_http_requests_total{")),
                         st["http"]["requests"])

    def test_rate_limit_refusals(self):
        before = metrics(self.keyed.port)
        codes = []
        while 429 not in codes and len(codes) < 10:  # the limit is 2 a window; a window may turn over once
            codes.append(h.request(self.keyed.port, "/v1/live", LIMITED)[0].status)
        self.assertEqual(codes[-1], 429, codes)
        after = metrics(self.keyed.port)
        limited = 'oddsrelay_rate_limited_total{limit="requests"}'
        self.assertEqual(after[limited] - before[limited], 1)
        self.assertEqual(requests(after, "/v1/live", 429) - requests(before, "/v1/live", 429), 1)
        self.assertEqual(requests(after, "/v1/live", 200) - requests(before, "/v1/live", 200), len(codes) - 1)

    def test_streams_subscribers_deliveries_and_a_refused_stream(self):
        port = self.live.port
        m0 = metrics(self.metrics_port, None)
        if m0['oddsrelay_stream_subscribers{stream="pt-ws"}'] == 0 and m0["oddsrelay_stream_accepted_total"] == 0:
            # Turns without subscribers are not timed.
            self.assertEqual(histogram(m0, "oddsrelay_stream_delivery_seconds")[1], 0)
        slots = 'oddsrelay_rate_limited_total{limit="stream_slots"}'

        async def go():
            url = f"ws://127.0.0.1:{port}/pt-ws?api_key={ONE_STREAM}"
            async with websockets.connect(url, max_queue=None) as first:
                frames = 0
                while frames < 20:  # the connect snapshot, then live deltas
                    await first.recv()
                    frames += 1
                m1 = metrics(self.metrics_port, None)
                st = h.status(port, KEY)
                # The second stream of a key allowed one: the handshake
                # completes, gets the error, and is closed 1008.
                async with websockets.connect(url) as second:
                    msg = await second.recv()
                    self.assertIn("error", msg)
                    with self.assertRaises(ConnectionClosed) as closed:
                        await second.recv()
                    self.assertEqual(closed.exception.code, 1008)
                # Deliveries to the first stream are timed from here on.
                count1 = histogram(m1, "oddsrelay_stream_delivery_seconds")[1]
                h.wait_until(lambda: histogram(metrics(self.metrics_port, None),
                                               "oddsrelay_stream_delivery_seconds")[1] > count1, 30,
                             "a delivery observed")
                # Live deltas reach the subscriber while it is connected (the
                # connect snapshot is not counted; a turn may carry only an
                # INFO, so this is waited for, not read at one moment).
                delivered = "oddsrelay_stream_frames_delivered_total"
                h.wait_until(lambda: metrics(self.metrics_port, None)[delivered] > m0[delivered], 30,
                             "live frames delivered")
                return m1, st

        m1, st = h.run_async(go())
        self.assertEqual(m1['oddsrelay_stream_subscribers{stream="pt-ws"}'], 1)
        self.assertEqual(st["relay"]["pt_ws_connections"], 1)
        self.assertLessEqual(m1["oddsrelay_stream_frames_delivered_total"], st["relay"]["deliveries"])
        self.assertEqual(m1["oddsrelay_stream_accepted_total"] - m0["oddsrelay_stream_accepted_total"], 1)
        self.assertEqual(requests(m1, "/pt-ws", 101) - requests(m0, "/pt-ws", 101), 1)
        m2 = metrics(self.metrics_port, None)
        self.assertEqual(m2[slots] - m0[slots], 1)
        self.assertEqual(requests(m2, "/pt-ws", 101) - requests(m0, "/pt-ws", 101), 2)
        self.assertGreater(m2["oddsrelay_stream_frames_delivered_total"], m0["oddsrelay_stream_frames_delivered_total"])
        buckets, count, total = histogram(m2, "oddsrelay_stream_delivery_seconds")
        self.assertGreater(count, 0)
        self.assertEqual(buckets[-1], count)
        self.assertGreater(total, 0)
        h.wait_until(lambda: metrics(self.metrics_port, None)['oddsrelay_stream_subscribers{stream="pt-ws"}'] == 0,
                     30, "the stream gone from the gauge")

    # -- Debian's Prometheus tools

    def test_promtool_accepts_the_exposition(self):
        if not os.path.exists(PROMTOOL):
            self.skipTest(f"{PROMTOOL} is absent (Debian package prometheus; scripts/install-deps.sh)")
        # Something in every family: a subscriber-free server still has all
        # of them, histograms and labelled counters included.
        for port, key in ((self.keyed.port, KEY), (self.metrics_port, None)):
            st, _, text = scrape(port, key)
            self.assertEqual(st, 200)
            p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True,
                               timeout=60)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""), text[:3000])
        # And it does reject a broken one (the check is not a no-op).
        p = subprocess.run([PROMTOOL, "check", "metrics"], input="# TYPE a_total counter\na_total{x=} 1\n",
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)

    def test_a_prometheus_server_scrapes_both_kinds_of_listener(self):
        if not os.path.exists(PROMETHEUS):
            self.skipTest(f"{PROMETHEUS} is absent (Debian package prometheus; scripts/install-deps.sh)")
        work = tempfile.mkdtemp(prefix="oddsrelay-prom-", dir=self.dir)
        prom_port = h.free_port()
        # The keyed listener takes the key as a query parameter (Prometheus
        # sends no custom headers): the `params` of docs/metrics.md.
        config = f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: keyed
    params:
      api_key: ["{KEY}"]
    static_configs:
      - targets: ["127.0.0.1:{self.keyed.port}"]
  - job_name: listener
    static_configs:
      - targets: ["127.0.0.1:{self.metrics_port}"]
"""
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(config)
        log = open(os.path.join(work, "prometheus.log"), "w+")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={work}/prometheus.yml",
                                 f"--storage.tsdb.path={work}/data", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=log, stderr=subprocess.STDOUT)

        def query(q):
            """The instant vector's [(labels, value)], or None while the server is not answering."""
            url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    body = json.load(r)
            except OSError:
                return None
            assert body["status"] == "success", body
            return [(s["metric"], float(s["value"][1])) for s in body["data"]["result"]]

        try:
            applied = h.status(self.keyed.port, KEY)["feed"]["records_applied"]
            got = h.wait_until(lambda: query('oddsrelay_records_applied_total{job="keyed"}'), 120,
                               "a sample of the keyed server in Prometheus")
            self.assertEqual(len(got), 1, got)
            self.assertEqual(got[0][1], applied)  # the replay ended: the value is exact
            self.assertEqual(got[0][0]["instance"], f"127.0.0.1:{self.keyed.port}")
            up = h.wait_until(lambda: query('up{job="listener"} == 1'), 60, "the listener job up")
            self.assertEqual(len(up), 1, up)
            live = h.wait_until(lambda: query('oddsrelay_records_applied_total{job="listener"} > 0'), 60,
                                "a sample of the live server")
            self.assertLessEqual(live[0][1], metrics(self.metrics_port, None)["oddsrelay_records_applied_total"])
            # Its scrapes are requests the relay counted.
            scrapes = h.wait_until(
                lambda: query('oddsrelay_http_requests_total{job="keyed",route="/metrics",code="200"} > 0'), 60,
                "the keyed server counting Prometheus's scrapes")
            self.assertEqual(len(scrapes), 1, scrapes)
        except AssertionError:
            log.seek(0)
            print(log.read()[-3000:])
            raise
        finally:
            prom.terminate()
            try:
                prom.wait(timeout=30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
            log.close()


if __name__ == "__main__":
    h.main()
