"""Scale-out on NATS JetStream, through the real binaries and Debian's
nats-server on loopback: an ingest node publishes the log, edges follow it.
Late join (the stream's start already dropped by retention), identical
answers and digests on ingest and edges at one seq, a bus restart (edges keep
serving with upstream_ready false, then catch up with no gap), edges that
rejoin by themselves after a hole (the ingest bridged one with a snapshot; an
edge paused while retention dropped what it had not read), an edge
restart, the ingest going down, a second ingest fenced off the stream,
oddsfeed publish, and an adapter in another language (this file, speaking
the raw NATS protocol) feeding edges by the documented contract.
Skips, saying why, when nats-server is not installed."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import harness as h
from wsraw import RawWs

NATS = shutil.which("nats-server") or next(
    (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if os.access(p, os.X_OK)), None)
KEY = "bus-key"
KEYS = {"keys": [{"key": KEY, "name": "bus", "permissions": ["live", "prematch", "odds", "scores"]}]}


class Nats:
    """nats-server -js on a free loopback port, its store in `store`;
    restartable on the same ports."""

    def __init__(self, store, conf=None):
        self.store = store
        self.port, self.mport = h.free_port(), h.free_port()
        fd, self.logpath = tempfile.mkstemp(suffix=".nats.log")
        os.close(fd)
        self.conf = []
        if conf:  # a configuration file (accounts, permissions); the flags below win over it
            self.conf = ["-c", os.path.join(store, "nats.conf")]
            with open(self.conf[1], "w") as f:
                f.write(conf)
        self.proc = None
        self.start()

    def start(self):
        mark = os.path.getsize(self.logpath)
        with open(self.logpath, "a") as log:
            self.proc = subprocess.Popen([NATS, *self.conf, "-js", "-a", "127.0.0.1", "-p", str(self.port),
                                          "-m", str(self.mport), "-sd", self.store], stdout=log, stderr=log)
        wait_until(lambda: "Server is ready" in self.output()[mark:], "nats-server ready", 30)

    def output(self):
        with open(self.logpath) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def consumers(self, name):
        """The stream's consumers, with what each was delivered."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/jsz?streams=true&consumers=true", timeout=10) as r:
            d = json.load(r)
        for a in d.get("account_details", []):
            for s in a.get("stream_detail", []):
                if s["name"] == name:
                    return s.get("consumer_detail", [])
        return []

    def url(self, stream):
        return f"nats://127.0.0.1:{self.port}/{stream}"

    def stream(self, name):
        """The stream's state from the server's own monitoring endpoint."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/jsz?streams=true", timeout=10) as r:
            d = json.load(r)
        for a in d.get("account_details", []):
            for s in a.get("stream_detail", []):
                if s["name"] == name:
                    return s["state"]
        return None


def wait_until(fn, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = fn()
        except OSError:
            v = None
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout}s")


def stopped(log):
    m = re.search(r"stopped; state seq=(\d+) digest=([0-9a-f]{16}) epoch=(\S+)", log)
    assert m, "no final state line in:\n" + log[-2000:]
    return int(m.group(1)), m.group(2), m.group(3)


def status(port):
    """/v1/status once the node is ready (a node still recovering answers 503 first)."""
    return h.status(port, KEY, ready_within=60)


def bus_digest(url):
    rc, out, err = h.run([h.binary("oddsfeed"), "digest", url])
    assert rc == 0, err
    m = re.search(r"epoch=(\S+) seq=(\d+) .*digest=([0-9a-f]{16})", out)
    return int(m.group(2)), m.group(3), m.group(1)


class NatsNodes:
    """A JetStream server and the oddsrelay nodes a test starts on it
    (self.keys), all stopped after the test. `node_args` go to every node;
    `wait_serving` waits for a node to serve before it is handed back."""
    node_args = ()
    wait_serving = False

    def start_nats(self, store, conf=None):
        self.nats = Nats(store, conf)
        self.servers = []

    def stop_nats(self):
        for s in self.servers:
            s.__exit__()
        self.nats.stop(signal.SIGKILL)
        os.unlink(self.nats.logpath)

    def node(self, *extra):
        s = h.Server("--keys", self.keys, "--progress", "0", *self.node_args, *extra)
        self.servers.append(s)
        if self.wait_serving:
            s.wait_for(r"serving http://", 60)
        return s


class Cluster(NatsNodes, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = h.scratch("nats")
        cls.keys = h.write_keys(cls.dir, KEYS)
        cls.feed = os.path.join(cls.dir, "feed.jsonl")
        h.gen_feed(cls.feed, 20000, "seed=9,events=120,rate=500,minute=100")
        with open(cls.feed) as f:
            cls.lines = f.read().splitlines()
        cls.records = cls.lines[1:]
        ids = []
        for line in cls.records:
            i = json.loads(line)["id"]
            if i not in ids:
                ids.append(i)
        cls.ids = ",".join(ids[:100])
        cls.file_digest = h.file_digest(cls.feed)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def setUp(self):
        self.store = tempfile.mkdtemp(prefix="js-", dir=self.dir)
        self.start_nats(self.store)

    def tearDown(self):
        self.stop_nats()

    def edge(self, stream="ODDS"):
        e = self.node("--feed", self.nats.url(stream))
        e.wait_for(r"serving http://")
        return e

    def answers(self, port):
        """What clients see, byte for byte (every timestamp in them is the
        engine's clock, so two relays at one seq answer the same bytes)."""
        out = {}
        for path in ("/v1/live", "/v1/prematch", "/v1/odds?ids=" + self.ids, "/v1/scores?ids=" + self.ids,
                     "/v1/settlements?ids=" + self.ids):
            r, body = h.request(port, path, KEY)
            self.assertEqual(r.status, 200, (path, body[:200]))
            out[path] = body
        return out

    def wait_seq(self, port, seq, timeout=90):
        return wait_until(lambda: status(port)["seq"] == seq and status(port), f"seq {seq} on :{port}", timeout)

    def wait_replayed(self, ingest):
        """Until the ingest replayed the feed and the bus stored all of it."""
        n = len(self.records)
        return wait_until(lambda: (st := status(ingest.port))["seq"] == n and st["bus"]["acked_seq"] == n and st,
                          "replay published", 120)

    def test_late_join_after_retention_answers_identically(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", f"replay:{self.feed},speed=max", "--publish", url,
                           "--publish-snapshot-every", "2000", "--publish-snapshot-interval", "1",
                           "--publish-max-bytes", "1M")
        ingest.wait_for(r"serving http://")
        st = self.wait_replayed(ingest)
        epoch, seq = st["epoch"], st["seq"]
        self.assertEqual(st["bus"]["state"], "publishing")
        # The log went quiet: its final state goes on the bus after the interval.
        st = wait_until(lambda: (s := status(ingest.port)) and s["bus"]["last_snapshot_seq"] == seq and s,
                        "final snapshot", 60)
        self.assertGreaterEqual(st["bus"]["snapshots"], 2, st["bus"])
        # The stream no longer holds the log's start: a late edge needs the snapshot.
        log = wait_until(lambda: (s := self.nats.stream("ODDS")) and s["first_seq"] > 1 and s, "retention", 30)
        self.assertLessEqual(log["bytes"], 1 << 20)
        edges = [self.edge(), self.edge()]
        for e in edges:
            m = e.wait_for(r"joined log (\w+) at seq (\d+) from a snapshot")
            self.assertEqual((m.group(1), int(m.group(2))), (epoch, seq))
            est = self.wait_seq(e.port, seq)
            self.assertEqual(est["epoch"], epoch)
            self.assertTrue(est["upstream_ready"])
            self.assertEqual(est["bus"]["role"], "edge")
            self.assertTrue(est["bus"]["following"], est["bus"])
        want = self.answers(ingest.port)
        self.assertIn(b'"data"', want["/v1/live"])
        self.assertGreater(len(json.loads(want["/v1/odds?ids=" + self.ids])["data"]), 0)
        for e in edges:
            got = self.answers(e.port)
            for path in want:
                self.assertEqual(got[path], want[path], path)
        self.assertEqual(bus_digest(url), (seq, self.file_digest, epoch))
        for s in [ingest] + edges:
            rc, out = s.stop()
            self.assertEqual(rc, 0, out)
            self.assertEqual(stopped(out), (seq, self.file_digest, epoch))

    def test_bus_restart_edges_keep_serving_then_catch_up_without_gap(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", "sim:seed=4,events=60,rate=400", "--publish", url)
        ingest.wait_for(r"serving http://")
        edge = self.edge()
        wait_until(lambda: status(edge.port)["seq"] > 500, "edge following", 60)
        self.nats.stop(signal.SIGKILL)
        down = wait_until(lambda: (st := status(edge.port)) and not st["upstream_ready"] and st, "upstream_ready false", 60)
        self.assertFalse(down["bus"]["connected"])
        # The edge keeps serving its last state; the ingest keeps applying and buffers.
        frozen = status(edge.port)["seq"]
        r, _ = h.request(edge.port, "/v1/live", KEY)
        self.assertEqual(r.status, 200)
        before = status(ingest.port)["seq"]
        ist = wait_until(lambda: (st := status(ingest.port)) and st["seq"] > before + 200 and
                         st["bus"]["buffered_messages"] > 0 and not st["bus"]["connected"] and st, "ingest buffering", 60)
        self.assertEqual(status(edge.port)["seq"], frozen)
        self.assertTrue(ist["upstream_ready"])
        self.nats.start()
        wait_until(lambda: status(edge.port)["upstream_ready"], "upstream_ready true again", 60)
        wait_until(lambda: status(ingest.port)["bus"]["state"] == "publishing", "ingest publishing again", 60)
        rc, out = ingest.stop()
        self.assertEqual(rc, 0, out)
        seq, digest, epoch = stopped(out)
        self.assertNotIn("not stored on the bus", out)
        est = self.wait_seq(edge.port, seq)
        # Every position on the way was checked: a gap would have stopped the edge.
        self.assertTrue(est["bus"]["following"], est["bus"])
        self.assertEqual(est["bus"]["error"], "")
        self.assertGreaterEqual(est["bus"]["disconnects"], 1)
        rc, out = edge.stop()
        self.assertEqual(stopped(out), (seq, digest, epoch))
        self.assertEqual(bus_digest(url), (seq, digest, epoch))
        ilog = ingest.log()
        self.assertGreaterEqual(len(re.findall(r"bus: publishing log", ilog)), 2, ilog[-2000:])
        self.assertNotIn("the stream ends at seq", ilog)
        self.assertNotIn("buffer full", ilog)

    def test_bus_down_past_the_buffer_is_a_gap_edges_rejoin_across(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", "sim:seed=7,events=60,rate=4000", "--publish", url, "--publish-buffer", "1M")
        ingest.wait_for(r"serving http://")
        old = self.edge()
        wait_until(lambda: status(old.port)["seq"] > 500, "edge following", 60)
        self.nats.stop(signal.SIGKILL)
        ingest.wait_for(r"buffer full \(1048576 bytes\)", 120)
        self.nats.start()
        m = ingest.wait_for(r"the stream ends at seq (\d+), this node's log continues at (\d+)", 60)
        stored, resumed = int(m.group(1)), int(m.group(2))
        self.assertGreater(resumed, stored + 1)
        # The edge that was following meets the hole after `stored` and, by
        # itself, rejoins from the snapshot the ingest put after it.
        old.wait_for(r"does not follow seq %d of \w+: gap; rejoining from the newest snapshot" % stored, 60)
        m = old.wait_for(r"rejoined log (\w+) at seq (\d+) from a snapshot", 120)
        self.assertGreaterEqual(int(m.group(2)), resumed - 1)
        # Ready again once it has caught up with the stream (it fell behind
        # while the bus was down; a slow edge reads a while after the rejoin).
        st = wait_until(lambda: (s := status(old.port)) and s["seq"] > int(m.group(2)) and s["upstream_ready"] and s,
                        "following again, caught up", 60)
        self.assertEqual(st["epoch"], m.group(1))
        self.assertTrue(st["upstream_ready"])
        self.assertTrue(st["bus"]["following"], st["bus"])
        # One rejoin per hole the ingest bridged: one here, unless a slow
        # (sanitized, loaded) ingest overflowed its 1 MB buffer again while
        # catching up with the bus, which bridges another one; each is
        # logged, and the edge holds the newest.
        gaps = status(ingest.port)["bus"]["gaps"]
        rejoined = re.findall(r"rejoined log \w+ at seq (\d+) from a snapshot", old.log())
        self.assertEqual((st["bus"]["rejoins"], st["bus"]["rejoining"]), (len(rejoined), False))
        self.assertEqual(st["bus"]["joined_seq"], int(rejoined[-1]))
        self.assertEqual(len(rejoined), gaps)
        self.assertIn("gap", st["bus"]["error"])
        # A new edge joins from the same kind of snapshot.
        new = self.edge()
        m = new.wait_for(r"joined log \w+ at seq (\d+) from a snapshot")
        self.assertGreaterEqual(int(m.group(1)), resumed - 1)
        ist = status(ingest.port)
        self.assertEqual(ist["bus"]["gaps"], gaps)
        self.assertGreater(ist["bus"]["dropped_records"], 0)
        rc, out = ingest.stop()
        seq, digest, epoch = stopped(out)
        for e in (old, new):
            self.wait_seq(e.port, seq)
        self.assertEqual(self.answers(old.port), self.answers(new.port))
        for e in (old, new):
            rc, out = e.stop()
            self.assertEqual(stopped(out), (seq, digest, epoch))

    def test_edge_paused_past_the_retention_rejoins_by_itself(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", "sim:seed=8,events=60,rate=3000", "--publish", url,
                           "--publish-max-bytes", "1M", "--publish-snapshot-every", "1000")
        ingest.wait_for(r"serving http://")
        edge = self.node("--feed", url, "--ws-ping", "600000")
        edge.wait_for(r"serving http://")
        wait_until(lambda: status(edge.port)["seq"] > 2000, "edge following", 60)
        # A stream client of the edge, there before the pause, reading all along.
        raw = RawWs(edge.port, f"/pt-ws?api_key={KEY}&protocol=v2", timeout=300)
        self.assertEqual(raw.status, 101)
        op, p = raw.recv_frame()
        ready = json.loads(p.decode().split("\x1f", 2)[2])
        epoch = ready["epoch"]
        closed = {}

        def read():
            try:
                closed["code"], closed["reason"], frames = raw.until_close(300)
                infos = [json.loads(f.decode().split("\x1f", 2)[2]) for op, f in frames if f.startswith(b"INFO")]
                closed["seq"] = infos[-1]["seq"] if infos else ready["seq"]
            except (OSError, AssertionError) as e:
                closed["error"] = repr(e)
        reader = threading.Thread(target=read)
        reader.start()
        edge.proc.send_signal(signal.SIGSTOP)
        try:
            # Retention drops every message the server could have sent the
            # edge before it stopped, and more.
            def dropped():
                s, consumers = self.nats.stream("ODDS"), self.nats.consumers("ODDS")
                return consumers and all(c["delivered"]["stream_seq"] + 2 < s["first_seq"] for c in consumers)
            wait_until(dropped, "retention past the edge's consumer", 120)
        finally:
            edge.proc.send_signal(signal.SIGCONT)
        m = edge.wait_for(r"rejoined log (\w+) at seq (\d+) from a snapshot", 120)
        self.assertEqual(m.group(1), epoch)
        rejoined = int(m.group(2))
        self.assertRegex(edge.log(), r"does not follow seq \d+ of %s: gap; rejoining from the newest snapshot" % epoch)
        reader.join(120)
        raw.close()
        self.assertFalse(reader.is_alive(), "the stream was not closed after the rejoin")
        self.assertNotIn("error", closed)
        # The stream was closed for the new state: a reconnect gets its snapshot.
        self.assertEqual((closed["code"], closed["reason"]), (1012, "state replaced: reconnect"))
        self.assertLess(closed["seq"], rejoined)
        raw = RawWs(edge.port, f"/pt-ws?api_key={KEY}&protocol=v2&resume={epoch}:{closed['seq']}")
        op, p = raw.recv_frame()
        again = json.loads(p.decode().split("\x1f", 2)[2])
        self.assertEqual((again["ready"], again["resumed"], again["reason"]), (True, False, "too_old"))
        self.assertGreaterEqual(again["seq"], rejoined)
        op, p = raw.recv_frame()
        self.assertTrue(p.startswith(b"P\x1fevt:"), p[:40])
        raw.close()
        # After the rejoin the edge reads the stream from the snapshot's
        # position on: ready again once it has caught up with that backlog
        # (a loaded sanitizer run can still hold hundreds of messages here).
        # The status is the one read at that moment: an edge on a machine
        # too loaded to keep up with 3,000 records/s can fall past the
        # retention again later, and rejoin again, as it should.
        st = wait_until(lambda: (s := status(edge.port))["upstream_ready"] and s,
                        "the edge caught up after the rejoin", 60)
        self.assertEqual((st["bus"]["rejoins"], st["bus"]["following"], st["upstream_ready"]), (1, True, True),
                         (st["bus"], edge.log()[-3000:]))
        self.assertEqual(st["relay"]["closed_restart"], 1)
        # Without a restart, the edge ends where the ingest does, answering
        # as an edge that joined afterwards.
        rc, out = ingest.stop()
        self.assertEqual(rc, 0, out)
        seq, digest, epoch = stopped(out)
        late = self.edge()
        for e in (edge, late):
            self.wait_seq(e.port, seq)
        self.assertEqual(self.answers(edge.port), self.answers(late.port))
        for e in (edge, late):
            rc, out = e.stop()
            self.assertEqual(stopped(out), (seq, digest, epoch))

    def test_edge_restart_rejoins_and_ingest_down_leaves_edges_serving(self):
        url = self.nats.url("ODDS")
        ingest = self.node("--feed", "sim:seed=5,events=60,rate=300", "--publish", url,
                           "--publish-snapshot-every", "500")
        ingest.wait_for(r"serving http://")
        a, b = self.edge(), self.edge()
        wait_until(lambda: status(a.port)["seq"] > 1500, "edges following", 60)
        # An edge stamps records as the bus delivers them (docs/api.md
        # "Latency stamps on INFO"): its INFOs carry arrived_us, before the
        # engine applied them.
        raw = RawWs(b.port, f"/pt-ws?api_key={KEY}&protocol=v2")
        groups = []
        while len(groups) < 20:
            op, p = raw.recv_frame()
            if op == 1 and p.startswith(b"INFO"):
                body = json.loads(p.decode().split("\x1f", 2)[2])
                if "ready" not in body:
                    groups.append(body)
        raw.close()
        for g in groups:
            self.assertLessEqual(g["arrived_us"], g["applied_us"], g)
        # Each role's bus counters in /metrics come from the table that
        # writes its /v1/status fields (tools/oddsrelay/bus_node.cc).
        for port, families in ((b.port, ("# TYPE oddsrelay_bus_pending_messages gauge",
                                         "# TYPE oddsrelay_bus_stalls_total counter")),
                               (ingest.port, ("# TYPE oddsrelay_bus_buffered_bytes gauge",))):
            text = h.request(port, "/metrics", KEY)[1].decode()
            for family in families:
                self.assertIn(family, text)
        rc, out = a.stop()
        self.assertEqual(rc, 0, out)
        a = self.edge()
        m = a.wait_for(r"joined log (\w+) at seq (\d+) from a snapshot")
        self.assertGreater(int(m.group(2)), 0)
        wait_until(lambda: status(a.port)["seq"] > int(m.group(2)), "restarted edge follows", 60)
        # The ingest dies; the edges stay up and serve where the bus ends.
        ingest.proc.send_signal(signal.SIGKILL)
        ingest.proc.wait()
        seq, digest, epoch = bus_digest(url)
        for e in (a, b):
            st = self.wait_seq(e.port, seq)
            self.assertEqual(st["epoch"], epoch)
            self.assertTrue(st["upstream_ready"])
        self.assertEqual(self.answers(a.port), self.answers(b.port))
        for e in (a, b):
            rc, out = e.stop()
            self.assertEqual(stopped(out), (seq, digest, epoch))

    def test_ingest_restart_with_data_dir_continues_the_same_log(self):
        url = self.nats.url("ODDS")
        data = os.path.join(self.dir, "ingest-data")
        half = len(self.records) // 2
        part1, part2 = os.path.join(self.dir, "r1.jsonl"), os.path.join(self.dir, "r2.jsonl")
        with open(part1, "w") as f:
            f.write(self.lines[0] + "\n" + "\n".join(self.records[:half]) + "\n")
        with open(part2, "w") as f:
            f.write(self.lines[0] + "\n" + "\n".join(self.records[half:]) + "\n")
        first = self.node("--feed", f"replay:{part1},speed=max", "--data-dir", data, "--publish", url)
        first.wait_for(r"serving http://")
        wait_until(lambda: (st := status(first.port))["seq"] == half and st["bus"]["acked_seq"] == half, "part 1", 120)
        edge = self.edge()
        m = edge.wait_for(r"joined log (\w+) at seq (\d+)")
        epoch = m.group(1)
        self.wait_seq(edge.port, half)
        rc, out = first.stop()
        self.assertEqual(rc, 0, out)
        # The same data dir: the same log, continued after what the bus holds.
        second = self.node("--feed", f"replay:{part2},speed=max", "--data-dir", data, "--publish", url)
        second.wait_for(r"bus: publishing log %s to \S+ from seq %d " % (epoch, half + 1))
        n = len(self.records)
        wait_until(lambda: (st := status(second.port))["seq"] == n and st["bus"]["acked_seq"] == n, "part 2", 120)
        st = self.wait_seq(edge.port, n)
        self.assertTrue(st["bus"]["following"], st["bus"])
        self.assertEqual(st["epoch"], epoch)
        self.assertEqual(self.answers(edge.port), self.answers(second.port))
        for s in (second, edge):
            rc, out = s.stop()
            self.assertEqual(stopped(out), (n, self.file_digest, epoch))

    def test_without_consumers_an_edge_reads_on_by_sequence(self):
        """No consumer can be placed (as while the cluster elects its
        metadata leader): here the server refuses to create any. An edge
        follows the whole log by reading on by sequence: by batches of
        direct gets from the stream the ingest made (AllowDirect), one
        message at a time from the leader of a stream made without it."""
        self.stop_nats()
        store = tempfile.mkdtemp(prefix="js-noconsumers-", dir=self.dir)
        self.start_nats(store, conf="""
accounts: { APP: { jetstream: enabled, users: [{user: app, password: app, permissions: {
  publish: {deny: ["$JS.API.CONSUMER.CREATE.>", "$JS.API.CONSUMER.DURABLE.CREATE.>"]}}}] } }
no_auth_user: app
""")
        with RawNats(self.nats.port) as nc:  # as an operator may have made it
            ack = nc.request("$JS.API.STREAM.CREATE.PLAIN", json.dumps(
                {"name": "PLAIN", "subjects": ["PLAIN.log"], "storage": "file", "max_age": 0}).encode())
            self.assertNotIn("error", ack, ack)
            self.assertFalse(ack["config"].get("allow_direct", False), ack)
        for stream, one_at_a_time in (("ODDS", False), ("PLAIN", True)):
            url = self.nats.url(stream)
            ingest = self.node("--feed", f"replay:{self.feed},speed=20", "--publish", url)
            ingest.wait_for(r"serving http://")
            wait_until(lambda: status(ingest.port)["bus"]["acked_seq"] > 0, "the ingest publishing", 60)
            edge = self.edge(stream)
            st = self.wait_replayed(ingest)
            try:
                bus = self.wait_seq(edge.port, st["seq"], 60)["bus"]
            except AssertionError as e:
                raise AssertionError(f"{stream}: {e}\n{status(edge.port)['bus']}\n{edge.log()[-3000:]}") from None
            self.assertEqual((bus["resubscribes"], bus["old_messages"], bus["rejoins"]), (0, 0, 0), bus)
            self.assertGreaterEqual(bus["read_on"], 1, bus)
            # Every message it applied was read on (no consumer delivered any).
            self.assertEqual(bus["read_on_messages"], bus["messages"], bus)
            # More than one batch of direct gets (32; the ingest's messages
            # are bigger and fewer under ASan: 89 in one run).
            self.assertGreater(bus["messages"], 32, bus)
            # At the stream's end nothing is pending (a message read on
            # counts 1 until a read past it finds nothing).
            wait_until(lambda: status(edge.port)["bus"]["pending"] == 0, "pending 0 at the stream's end", 10)
            self.assertIn("reading on by sequence meanwhile", edge.log())
            self.assertEqual("reading on one message at a time" in edge.log(), one_at_a_time, edge.log()[-2000:])
            self.assertEqual(self.answers(edge.port), self.answers(ingest.port))
            for s in (ingest, edge):
                rc, out = s.stop()
                self.assertEqual(rc, 0, out)
                self.assertEqual(stopped(out), (st["seq"], self.file_digest, st["epoch"]))

    def test_second_ingest_is_fenced_off_the_stream(self):
        url = self.nats.url("ODDS")
        first = self.node("--feed", f"replay:{self.feed},speed=max", "--publish", url)
        first.wait_for(r"serving http://")
        st = self.wait_replayed(first)
        last = self.nats.stream("ODDS")["last_seq"]
        second = self.node("--feed", "sim:seed=6,events=30,rate=500", "--publish", url)
        second.wait_for(r"not publishing: stream ODDS carries log " + st["epoch"])
        # Fenced off the stream, it still applies its own feed and serves
        # it; its first record may come after the line (an ASan run read
        # seq 0 right after it).
        sst = wait_until(lambda: (s := status(second.port))["seq"] > 0 and s, "the fenced ingest applying its feed", 30)
        self.assertEqual(sst["bus"]["state"], "fenced")
        time.sleep(0.5)
        self.assertEqual(self.nats.stream("ODDS")["last_seq"], last)
        self.assertEqual(bus_digest(url), (len(self.records), self.file_digest, st["epoch"]))

    def test_oddsfeed_publish_feeds_edges(self):
        url = self.nats.url("FEED")
        edge = self.node("--feed", url)
        edge.wait_for(r"cannot join yet: stream FEED does not exist yet")
        # The listener comes first (docs/architecture.md "Start-up and
        # readiness"): an edge waiting for its log answers 503 on every route.
        r, body = h.request(edge.port, "/healthz")
        self.assertEqual((r.status, json.loads(body)["status"]), (503, "starting"))
        r, _ = h.request(edge.port, "/v1/status", key=KEY)
        self.assertEqual(r.status, 503)
        half = len(self.records) // 2
        part1, part2 = os.path.join(self.dir, "p1.jsonl"), os.path.join(self.dir, "p2.jsonl")
        with open(part1, "w") as f:
            f.write(self.lines[0] + "\n" + "\n".join(self.records[:half]) + "\n")
        with open(part2, "w") as f:
            f.write(self.lines[0] + "\n" + "\n".join(self.records[half:]) + "\n")
        rc, out, err = h.run([h.binary("oddsfeed"), "publish", part1, url])
        self.assertEqual(rc, 0, err)
        m = re.search(r"published=(\d+) .*from=1 epoch=(\w+) seq=(\d+)", out)
        self.assertEqual((int(m.group(1)), int(m.group(3))), (half, half))
        epoch = m.group(2)
        edge.wait_for(r"serving http://")
        r, body = h.request(edge.port, "/healthz")
        self.assertEqual((r.status, json.loads(body)["status"]), (200, "ok"))
        self.wait_seq(edge.port, half)
        st = status(edge.port)
        self.assertEqual((st["seq"], st["feed"]["source"], st["upstream_ready"]), (half, "bus", True))
        # The rest continues the same log, from standard input.
        with open(part2) as f:
            p = subprocess.run([h.binary("oddsfeed"), "publish", "-", url], stdin=f, capture_output=True, text=True,
                               timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"from={half + 1} epoch={epoch} seq={len(self.records)}", p.stdout)
        self.assertIn(f"digest={self.file_digest}", p.stdout)
        self.wait_seq(edge.port, len(self.records))
        late = self.edge("FEED")
        late.wait_for(r"joined log \w+ at seq %d from a snapshot" % len(self.records))
        self.assertEqual(self.answers(edge.port), self.answers(late.port))
        for e in (edge, late):
            rc, out = e.stop()
            self.assertEqual(stopped(out), (len(self.records), self.file_digest, epoch))

    def test_adapter_in_another_language_by_the_contract(self):
        """docs/bus.md, done by hand: create the stream, then HPUB each group
        of record lines with Nats-Msg-Id <epoch>:<last position> and
        Nats-Expected-Last-Sequence, waiting for each JetStream ack."""
        n = 3000
        with RawNats(self.nats.port) as nc:
            ack = nc.request("$JS.API.STREAM.CREATE.RAW", json.dumps(
                {"name": "RAW", "subjects": ["RAW.log"], "storage": "file", "max_age": 0}).encode())
            self.assertNotIn("error", ack, ack)
            pos, stream_seq = 0, 0
            for i in range(0, n, 100):
                lines = self.records[i:i + 100]
                pos += len(lines)
                ack = nc.request("RAW.log", ("\n".join(lines) + "\n").encode(),
                                 {"Nats-Msg-Id": f"rawlog1:{pos}", "Nats-Expected-Last-Sequence": str(stream_seq)})
                self.assertEqual(ack.get("seq"), stream_seq + 1, ack)
                stream_seq += 1
            # A resend of a stored message is a duplicate, not a second copy.
            ack = nc.request("RAW.log", ("\n".join(self.records[n - 100:n]) + "\n").encode(),
                             {"Nats-Msg-Id": f"rawlog1:{n}", "Nats-Expected-Last-Sequence": str(stream_seq - 1)})
            self.assertTrue(ack.get("duplicate"), ack)
            # A second writer that does not follow the stream's last message is refused.
            ack = nc.request("RAW.log", (self.records[n] + "\n").encode(),
                             {"Nats-Msg-Id": f"rawlog1:{n + 1}", "Nats-Expected-Last-Sequence": "1"})
            self.assertEqual(ack.get("error", {}).get("err_code"), 10071, ack)
        edge = self.edge("RAW")
        edge.wait_for(r"joined log rawlog1 at seq 0 from the log's start")
        self.wait_seq(edge.port, n)
        prefix = os.path.join(self.dir, "raw.jsonl")
        with open(prefix, "w") as f:
            f.write(self.lines[0] + "\n" + "\n".join(self.records[:n]) + "\n")
        rc, out = edge.stop()
        self.assertEqual(stopped(out), (n, h.file_digest(prefix), "rawlog1"))


class RawNats:
    """The NATS client protocol over a socket: enough to create a stream and
    publish with headers, as an adapter in any language would."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.line()  # INFO
        self.sock.sendall(b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\nSUB _INBOX.raw.* 1\r\n')
        self.n = 0

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def take(self, size):
        while len(self.buf) < size + 2:
            self.buf += self.sock.recv(65536)
        data, self.buf = self.buf[:size], self.buf[size + 2:]
        return data

    def request(self, subject, payload, headers=None):
        self.n += 1
        reply = f"_INBOX.raw.{self.n}"
        if headers:
            hdr = ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
            self.sock.sendall(f"HPUB {subject} {reply} {len(hdr)} {len(hdr) + len(payload)}\r\n".encode() + hdr +
                              payload + b"\r\n")
        else:
            self.sock.sendall(f"PUB {subject} {reply} {len(payload)}\r\n".encode() + payload + b"\r\n")
        while True:
            line = self.line()
            if line == "PING":
                self.sock.sendall(b"PONG\r\n")
                continue
            if line.startswith("MSG ") or line.startswith("HMSG "):
                parts = line.split()
                data = self.take(int(parts[-1]))
                if line.startswith("HMSG "):
                    data = data[int(parts[-2]):]
                if parts[1] == reply:
                    return json.loads(data)
            elif line.startswith("-ERR"):
                raise AssertionError(line)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()


if __name__ == "__main__":
    if NATS is None:
        print("test_nats: SKIPPED: nats-server is not installed (scripts/install-deps.sh installs it)")
        sys.exit(0)
    h.main()
