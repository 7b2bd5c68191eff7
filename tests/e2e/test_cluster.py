"""The bus as a cluster (docs/bus.md "A cluster of servers"), through the
real binaries and Debian's nats-server on loopback: three servers with routes
between them, the streams with three replicas, an ingest on the simulator at
1,000 records/s given every server, and two edges each given a different
server first, with /pt-ws and /ws clients on both. Each server is killed with
SIGKILL in turn and brought back, then the stream leader's server: the
clients see no gap and no close, each edge is back at the ingest's seq within
5 s, and at the end every edge's digest and REST answers equal the ingest's.
An edge partitioned from the bus by the fault proxy (fault_proxy.py, a black
hole for 20 s) keeps serving, says upstream_ready false within --bus-stale-after + 1 s,
and catches up with no gap for its clients once the partition heals. The
fault proxy's own faults are checked first against an echo server.
Skips, saying why, when nats-server is not installed."""
import asyncio
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

import websockets

import harness as h
from fault_proxy import FaultProxy
from test_nats import NATS, bus_digest, stopped

KEY = "cluster-key"
KEYS = {"keys": [{"key": KEY, "name": "cluster", "ws_connections": 20,
                  "permissions": ["live", "prematch", "odds", "scores"]}]}
STALE_MS = 800  # --bus-stale-after of the partitioned edge
PARTITION_S = 20  # how long its bus connection is black-holed
ELECTION_S = 20  # a stream leader lost: nats-server 2.9 elects another after 4-9 s
FAILOVER_S = 10  # any other server lost: measured 1.5-8.5 s on a loaded 2-core machine (docs/bus.md)
# Under ASan+UBSan every node runs several times slower: the release suite
# holds the documented 10 s, the sanitizer suite the election's bound (an
# ASan run beside two CPU hogs took 11.8 s).
FAILOVER_SANITIZED_S = ELECTION_S
# An election under ASan+UBSan: once (a CI-like run beside the rest of the
# sanitizer suite) the two servers left answered "JetStream system
# temporarily unavailable" for all of the 20 s; alone, elections there
# took 4-6 s and catching up 6,000-9,000 records another 5-9 s.
ELECTION_SANITIZED_S = 30
# The stream leader lost, the bound is on our part: from the new leader's
# election (its `new stream leader` line) to the edges' lag under 1 s. The
# election is nats-server's own, 4-9 s by its Raft's timeouts, and took 18 s
# twice with two cluster tests (or this one and the rest of the suite)
# sharing the 2 cores; it is printed, and bounded only by RECOVERY_CAP_S.
AFTER_ELECTION_S = 10
AFTER_ELECTION_SANITIZED_S = 15
RECOVERY_CAP_S = 45
SEP = "\x1f"


class NatsCluster:
    """Three nats-servers, one JetStream cluster on loopback: a generated
    config each (routes to the other two, no_advertise so that a client
    behind the fault proxy stays behind it); restartable on the same ports."""

    def __init__(self, root):
        self.root = root
        self.client = [h.free_port() for _ in range(3)]
        self.route = [h.free_port() for _ in range(3)]
        self.mon = [h.free_port() for _ in range(3)]
        self.procs = [None] * 3
        for i in range(3):
            routes = "\n".join(f"    nats-route://127.0.0.1:{self.route[j]}" for j in range(3) if j != i)
            with open(self.conf(i), "w") as f:
                f.write(f"server_name: n{i + 1}\nlisten: 127.0.0.1:{self.client[i]}\n"
                        f"http: 127.0.0.1:{self.mon[i]}\n"
                        f"jetstream {{ store_dir: \"{root}/js{i + 1}\" }}\n"
                        f"cluster {{\n  name: oddsrelay\n  listen: 127.0.0.1:{self.route[i]}\n"
                        f"  no_advertise: true\n  routes: [\n{routes}\n  ]\n}}\n")
        for i in range(3):
            self.start(i, wait=False)
        for i in range(3):
            self.wait_ready(i, 0)

    def conf(self, i):
        return os.path.join(self.root, f"n{i + 1}.conf")

    def log(self, i):
        return os.path.join(self.root, f"nats{i + 1}.log")

    def log_tails(self, n=12):
        """What each server said last about JetStream, Raft and leaders,
        for a failure message (the nodes' own lines say only what they saw)."""
        out = []
        for i in range(3):
            keep = [l for l in self.output(i).splitlines()
                    if re.search(r"JetStream|RAFT|[Ll]eader|[Ee]lect|[Qq]uorum|catchup|Catchup", l)]
            out.append(f"--- nats n{i + 1}:\n" + "\n".join(l[:200] for l in keep[-n:]))
        return "\n".join(out)

    def output(self, i):
        with open(self.log(i)) as f:
            return f.read()

    def start(self, i, wait=True):
        mark = os.path.getsize(self.log(i)) if os.path.exists(self.log(i)) else 0
        with open(self.log(i), "a") as log:
            self.procs[i] = subprocess.Popen([NATS, "-c", self.conf(i)], stdout=log, stderr=log)
        if wait:
            self.wait_ready(i, mark)

    def wait_ready(self, i, mark):
        h.wait_until(lambda: "Server is ready" in self.output(i)[mark:], 30, f"nats n{i + 1} ready")

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(timeout=10)

    def stop_all(self):
        for p in self.procs:
            if p and p.poll() is None:
                p.kill()
                p.wait()

    def url(self, first, stream="ODDS"):
        """Every server, `first` first, as an edge or the ingest is given them."""
        order = [first] + [j for j in range(3) if j != first]
        return "nats://" + ",".join(f"127.0.0.1:{self.client[j]}" for j in order) + "/" + stream

    def stream_cluster(self, stream="ODDS"):
        """The stream's leader and replicas as its leader sees them (another
        server's view of the replicas may be stale)."""
        for i in range(3):
            if self.procs[i].poll() is not None:
                continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.mon[i]}/jsz?streams=true", timeout=2) as r:
                    d = json.load(r)
            except OSError:
                continue
            for a in d.get("account_details", []):
                for s in a.get("stream_detail", []):
                    c = s.get("cluster", {})
                    if s["name"] == stream and c.get("leader") == f"n{i + 1}":
                        return c
        return None

    def meta_leader(self):
        """The index of the server leading the cluster's metadata group
        (which places consumers), or None."""
        for i in range(3):
            if self.procs[i].poll() is not None:
                continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.mon[i]}/jsz", timeout=2) as r:
                    m = json.load(r).get("meta_cluster", {})
            except OSError:
                continue
            if m.get("leader") == f"n{i + 1}":
                return i
        return None

    def local_last_seq(self, i, stream="ODDS"):
        """The last sequence server i's own copy of the stream holds, or
        None (not running, not answering, no copy)."""
        if self.procs[i].poll() is not None:
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.mon[i]}/jsz?streams=true", timeout=2) as r:
                d = json.load(r)
        except OSError:
            return None
        for a in d.get("account_details", []):
            for s in a.get("stream_detail", []):
                if s["name"] == stream:
                    return s.get("state", {}).get("last_seq")
        return None

    def all_current(self, stream="ODDS"):
        """The stream's replicas and the cluster's metadata group (which
        places consumers) each have all three members current, and each
        server's own copy of the stream holds what the leader held a moment
        before. The leader reports a server it just restarted as current
        before that server has caught up; losing the leader then left the
        other two without a stream leader for over 20 s (once, in the Release
        suite)."""
        c = self.stream_cluster(stream)
        if not (c and len(c.get("replicas", [])) == 2 and all(r.get("current") for r in c["replicas"])):
            return False
        held = self.local_last_seq(int(c["leader"][1:]) - 1, stream)
        if held is None or any((self.local_last_seq(i, stream) or 0) < held for i in range(3)):
            return False
        for i in range(3):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.mon[i]}/jsz", timeout=2) as r:
                    m = json.load(r).get("meta_cluster", {})
            except OSError:
                return False
            if m.get("leader") == f"n{i + 1}":
                return len(m.get("replicas", [])) == 2 and all(r.get("current") for r in m["replicas"])
        return False


class Watcher:
    """Clients of one edge on a thread of their own: a /pt-ws client that
    checks every INFO runs on from the last (no gap) and a /ws client that
    checks seq never goes back; both record any close."""

    def __init__(self, port):
        self.port = port
        self.pt_seq = self.ws_seq = None
        self.gaps, self.closes, self.errors = [], [], []
        self.infos = 0
        self.stop_at = None  # final seq: set, the clients leave once the edge is quiet
        self.quiet = False  # set when the test itself stops the edge
        self.done = threading.Event()
        self.connected = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self.main()), daemon=True)
        self.thread.start()

    def url(self, path, extra=""):
        return f"ws://127.0.0.1:{self.port}{path}?api_key={KEY}{extra}"

    async def main(self):
        try:
            async with websockets.connect(self.url("/pt-ws", "&protocol=v2"), max_size=None, max_queue=None) as pt, \
                    websockets.connect(self.url("/ws"), max_size=None, max_queue=None) as ws:
                self.connected.set()
                await asyncio.gather(self.watch(self.pt, pt), self.watch(self.ws, ws))
        except Exception as e:  # noqa: BLE001: reported by the test
            self.errors.append(repr(e))
        finally:
            self.connected.set()
            self.done.set()

    async def watch(self, fn, conn):
        try:
            await fn(conn)
        except websockets.ConnectionClosed as e:
            if not self.quiet:
                self.closes.append((e.code, e.reason))

    async def recv(self, conn):
        """The next message; None once the test's final seq is set and the
        edge has been quiet for 3 s (a /ws client gets nothing when no live
        event changes). recv() is safe to cancel: polled each second."""
        quiet = 0
        while True:
            try:
                return await asyncio.wait_for(conn.recv(), 1)
            except asyncio.TimeoutError:
                quiet += 1
                if (self.stop_at is not None and quiet >= 3) or quiet >= 60:
                    if self.stop_at is None:
                        raise
                    return None

    def finished(self, seq):
        return self.stop_at is not None and seq is not None and seq >= self.stop_at

    async def pt(self, conn):
        while not self.finished(self.pt_seq) and (raw := await self.recv(conn)) is not None:
            if not raw.startswith("INFO"):
                continue
            body = json.loads(raw.split(SEP, 2)[2])
            if body.get("ready"):
                if self.pt_seq is not None:
                    self.gaps.append(("snapshot again", body))
                self.pt_seq = body["seq"]
                continue
            if body["from"] != self.pt_seq + 1:
                self.gaps.append((self.pt_seq, body["from"], body["seq"]))
            self.pt_seq = body["seq"]
            self.infos += 1

    async def ws(self, conn):
        while not self.finished(self.ws_seq) and (raw := await self.recv(conn)) is not None:
            m = json.loads(raw)
            if "seq" in m:
                if self.ws_seq is not None and m["seq"] < self.ws_seq:
                    self.gaps.append(("ws went back", self.ws_seq, m["seq"]))
                self.ws_seq = m["seq"]


def status(port):
    r, body = h.request(port, "/v1/status", KEY)
    assert r.status == 200, body[:300]
    return json.loads(body)


def healthz(port):
    r, body = h.request(port, "/healthz")
    return r.status, json.loads(body)


@unittest.skipIf(NATS is None, "nats-server is not installed (scripts/install-deps.sh)")
class ThreeServers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-cluster-")
        cls.keys = os.path.join(cls.dir, "keys.json")
        with open(cls.keys, "w") as f:
            json.dump(KEYS, f)
        cls.nodes = []
        cls.bus = NatsCluster(cls.dir)
        cls.ingest = cls.node("--feed", "sim:seed=5,events=200,rate=1000", "--publish", cls.bus.url(0),
                              "--publish-replicas", "3", "--publish-snapshot-interval", "5")
        cls.ingest.wait_for(r"bus: publishing log", 60)
        cls.edges = [cls.node("--feed", cls.bus.url(i + 1)) for i in range(2)]

    @classmethod
    def node(cls, *extra):
        s = h.Server("--keys", cls.keys, "--progress", "0", "--ws-update", "100", *extra)
        cls.nodes.append(s)
        s.wait_for(r"serving http://", 60)
        return s

    @classmethod
    def tearDownClass(cls):
        for s in cls.nodes:
            s.__exit__()
        cls.bus.stop_all()
        shutil.rmtree(cls.dir)

    def bus_lines(self):
        """What the nodes said about the bus lately, for a failure message."""
        out = []
        for name, n in [("ingest", self.ingest)] + [(f"edge{i + 1}", e) for i, e in enumerate(self.edges)]:
            lines = [l for l in n.log().splitlines() if "bus" in l][-8:]
            st = status(n.port)
            out.append(f"--- {name}: seq {st['seq']} {json.dumps(st['bus'])}\n" + "\n".join(lines))
        return "\n".join(out)

    def caught_up(self, edge, within=0):
        """The edge holds the position the ingest had just before, or one
        at most `within` records (ms at 1,000 records/s) behind it."""
        target = status(self.ingest.port)["seq"]
        return status(edge.port)["seq"] >= target - within

    def test_1_servers_and_streams(self):
        """Each node is on the server it was given first; both streams have
        three replicas."""
        st = status(self.ingest.port)
        self.assertEqual(st["bus"]["server"], f"nats://127.0.0.1:{self.bus.client[0]}")
        self.assertEqual(st["bus"]["stream_warning"], "")
        for i, e in enumerate(self.edges):
            self.assertEqual(status(e.port)["bus"]["server"], f"nats://127.0.0.1:{self.bus.client[i + 1]}")
            e.wait_for(rf"bus: connected to nats://127.0.0.1:{self.bus.client[i + 1]}")
        c = h.wait_until(self.bus.stream_cluster, 30, "a stream leader")
        self.assertEqual(len(c["replicas"]), 2, c)
        self.assertIsNotNone(self.bus.stream_cluster("ODDS_SNAP"))
        rc, out, err = h.run([h.binary("oddsfeed"), "digest", self.bus.url(2)])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"bus: connected to nats://127.0.0.1:{self.bus.client[2]}", err)
        # Another ingest told one replica: the R3 stream is reported, not
        # used silently (and then it is fenced off: the log is not its own).
        other = self.node("--feed", "sim", "--publish", self.bus.url(2), "--publish-replicas", "1")
        other.wait_for(r"bus: warning: stream ODDS exists with 3 replica\(s\), not 1", 30)
        h.wait_until(lambda: status(other.port)["bus"]["state"] == "fenced", 30, "the second ingest fenced")
        self.assertIn("stream ODDS exists with 3 replica(s), not 1", status(other.port)["bus"]["stream_warning"])
        other.stop()

    def test_1_oddsfeed_publish_replicas(self):
        """oddsfeed publish makes missing streams like the ingest does: with
        --publish-replicas copies (the default, one, would be a stream that
        lives on one server)."""
        url = self.bus.url(1, "PUB")
        rc, out, err = h.run([h.binary("oddsfeed"), "publish", h.fixture("small.jsonl"), url,
                              "--publish-replicas", "3"])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"published=\d+ ")
        for stream in ("PUB", "PUB_SNAP"):
            c = h.wait_until(lambda: self.bus.stream_cluster(stream), 30, f"{stream}'s leader")
            self.assertEqual(len(c["replicas"]), 2, (stream, c))
        # Published again with another count: the stream is used as made, and said so.
        rc, out, err = h.run([h.binary("oddsfeed"), "publish", h.fixture("small.jsonl"), url])
        self.assertEqual(rc, 0, err)
        self.assertIn("stream PUB exists with 3 replica(s), not 1", err)
        rc, out, err = h.run([h.binary("oddsfeed"), "publish", "-", url, "--publish-replicas", "0"], timeout=10)
        self.assertEqual((rc, "bad or missing --publish-replicas value (1..5)" in err), (2, True), err)

    def test_2_partitioned_edge(self):
        """Behind the proxy, one server only: a black hole of 20 s."""
        proxy = FaultProxy(self.bus.client[1])
        try:
            edge = self.node("--feed", f"nats://127.0.0.1:{proxy.port}/ODDS", "--bus-stale-after", str(STALE_MS))
            h.wait_until(lambda: self.caught_up(edge), 20, "the proxied edge following")
            w = Watcher(edge.port)
            self.assertTrue(w.connected.wait(10))
            h.wait_until(lambda: w.infos > 3, 20, "the client following")
            self.assertTrue(status(edge.port)["upstream_ready"])
            proxy.blackhole()
            t0 = time.monotonic()
            h.wait_until(lambda: not status(edge.port)["upstream_ready"], 10, "upstream_ready false")
            took = time.monotonic() - t0
            # Documented: --bus-stale-after + 1 s; the rest is this poll on a loaded machine.
            self.assertLess(took, STALE_MS / 1000 + 2, "documented: --bus-stale-after + 1 s\n" + edge.log()[-3000:])
            code, body = healthz(edge.port)
            self.assertEqual((code, body["status"], body["upstream_ready"]), (200, "ok", False))
            r, _ = h.request(edge.port, "/v1/live", KEY)
            self.assertEqual(r.status, 200, "the last state is still served")
            metrics = h.request(edge.port, "/metrics", KEY)[1].decode()
            self.assertIn("oddsrelay_bus_upstream_ready 0", metrics)
            held = status(edge.port)["seq"]
            h.wait_until(lambda: time.monotonic() - t0 > PARTITION_S, PARTITION_S + 5, f"{PARTITION_S} s of partition")
            self.assertLessEqual(status(edge.port)["seq"], held + 0, "nothing crosses a black hole")
            proxy.heal()
            t1 = time.monotonic()
            h.wait_until(lambda: self.caught_up(edge), 30, "the edge catching up after the heal")
            h.wait_until(lambda: status(edge.port)["upstream_ready"], 10, "upstream_ready true again")
            print(f"partition: upstream_ready false after {took:.2f} s; caught up {time.monotonic() - t1:.2f} s "
                  f"after the heal", flush=True)
            self.assertTrue(healthz(edge.port)[1]["upstream_ready"])
            st = status(edge.port)
            self.assertEqual((st["bus"]["rejoins"], st["bus"]["stalls"] >= 1), (0, True), st["bus"])
            h.wait_until(lambda: w.infos > 0 and w.pt_seq >= held + 500, 20, "the client past the partition")
            self.assertEqual((w.gaps, w.closes, w.errors), ([], [], []))
            w.quiet = True
            edge.stop()
        finally:
            proxy.close()

    def recovery(self, deadline):
        """Polls both edges against the ingest from a kill until both are
        exactly at its seq: (when the lag was back under 1 s = 1,000
        records, checked from 1.5 s on so that a frozen edge cannot pass;
        when they were exactly there; the worst lag in records; when, in
        seconds after the kill, the ingest's acknowledged seq and each edge's
        seq first moved again after standing still for 0.5 s)."""
        t0 = time.monotonic()
        back, worst = None, 0
        # Per node: [last value, when it last changed, when it moved after a stall].
        moved = {n: [None, 0.0, None] for n in ["ingest"] + [f"edge{i + 1}" for i in range(len(self.edges))]}
        nodes = [("ingest", self.ingest)] + [(f"edge{i + 1}", e) for i, e in enumerate(self.edges)]
        read = {name: len(n.log()) for name, n in nodes}
        self.timeline = []  # (seconds after the kill, node, a line it printed about the bus)

        def note(name, value, t):
            m = moved[name]
            if m[0] is not None and value != m[0] and m[2] is None and t - m[1] >= 0.5:
                m[2] = t
            if value != m[0]:
                m[0], m[1] = value, t

        while True:
            ist = status(self.ingest.port)
            target = ist["seq"]
            seqs = [status(e.port)["seq"] for e in self.edges]
            t = time.monotonic() - t0
            note("ingest", ist["bus"]["acked_seq"], t)
            for i, q in enumerate(seqs):
                note(f"edge{i + 1}", q, t)
            for name, n in nodes:
                text = n.log()
                self.timeline += [(t, name, l) for l in text[read[name]:].splitlines() if "bus" in l]
                read[name] = len(text)
            lag = max(target - q for q in seqs)
            worst = max(worst, lag)
            if back is None and t >= 1.5 and lag < 1000:
                back = t
            if lag <= 0 and back is not None:
                return back, t, worst, {n: m[2] for n, m in moved.items()}
            if t > deadline:
                raise AssertionError(f"edges not back at the ingest's seq within {deadline} s "
                                     f"(lag {lag}, under 1 s after {back})\n{self.bus_lines()}\n"
                                     f"{self.bus.log_tails()}")
            time.sleep(0.05)

    def elected(self, since, stream="ODDS"):
        """Seconds from `since` (wall clock) to the first 'new stream leader'
        line for `stream` any server logged after it, or None."""
        first = None
        for i in range(3):
            for line in self.bus.output(i).splitlines():
                if f"new stream leader for '$G > {stream}'" not in line:
                    continue
                m = re.search(r"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+)", line)
                if not m:
                    continue
                at = datetime.datetime.strptime(m.group(1), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                if at >= since and (first is None or at < first):
                    first = at
        return None if first is None else first - since

    def test_3_server_kills(self):
        watchers = [Watcher(e.port) for e in self.edges]
        for w in watchers:
            self.assertTrue(w.connected.wait(10))
        h.wait_until(lambda: all(w.infos > 3 for w in watchers), 20, "the clients following")
        # Each server in turn (one that does not lead the stream while there
        # is one), then the stream leader's, whichever it is then.
        remaining = [0, 1, 2]
        for round in range(4):
            h.wait_until(self.bus.all_current, 60, "all three replicas current")
            leader = int(self.bus.stream_cluster()["leader"][1:]) - 1
            if round < 3:
                victim = ([v for v in remaining if v != leader] or remaining)[0]
                remaining.remove(victim)
            else:
                victim = leader
            # Losing the stream's leader stops the stream until the other two
            # elect one: nats-server's Raft waits 4-9 s for a lost leader.
            # Losing the metadata's leader costs an election too: no consumer
            # can be placed until then (docs/bus.md), so an edge whose consumer
            # was on the lost server reads on by sequence meanwhile.
            meta = self.bus.meta_leader()
            elects = victim in (leader, meta)
            if h.sanitized():
                limit = ELECTION_SANITIZED_S if elects else FAILOVER_SANITIZED_S
            else:
                limit = ELECTION_S if elects else FAILOVER_S
            killed_at = time.time()
            self.bus.kill(victim)
            back, exact, worst, moved = self.recovery(RECOVERY_CAP_S if victim == leader else max(limit, ELECTION_S))
            elected = self.elected(killed_at) if victim == leader else None
            steps = ", ".join(f"{n} {'-' if v is None else f'{v:.2f}'}" for n, v in moved.items())
            print(f"killed n{victim + 1}{' (the stream leader)' if victim == leader else ''}"
                  f"{' (the metadata leader)' if victim == meta else ''}: worst edge lag "
                  f"{worst} records; lag under 1 s again {back:.2f} s after the kill, both edges at the ingest's "
                  f"seq {exact:.2f} s after; new stream leader "
                  f"{'-' if elected is None else f'{elected:.2f}'} s; moving again after: {steps}", flush=True)
            if victim == leader:
                for t, name, line in self.timeline[:40]:
                    print(f"  {t:6.2f} {name}: {line[:160]}", flush=True)
            if victim == leader and elected is not None:
                after = AFTER_ELECTION_SANITIZED_S if h.sanitized() else AFTER_ELECTION_S
                self.assertLessEqual(back - elected, after, f"lag under 1 s within {after} s of the new stream "
                                                            f"leader's election\n{self.bus_lines()}")
            else:
                self.assertLessEqual(back, limit, f"lag under 1 s within {limit} s of losing n{victim + 1}\n"
                                                  f"{self.bus_lines()}")
            self.bus.start(victim)
        for e, w in zip(self.edges, watchers):
            st = status(e.port)
            self.assertEqual((st["bus"]["rejoins"], st["relay"]["closed_restart"]), (0, 0), st)
        # The end: the ingest stops; every edge reaches its final state.
        rc, log = self.ingest.stop()
        self.assertEqual(rc, 0, log[-2000:])
        seq, digest, epoch = stopped(log)
        for w in watchers:
            w.stop_at = seq
        for e in self.edges:
            h.wait_until(lambda: status(e.port)["seq"] >= seq, 30, "edge at the ingest's final seq")
        for w in watchers:
            self.assertTrue(w.done.wait(30), f"the clients reach the final seq {seq}: {w.pt_seq} {w.ws_seq}")
            self.assertEqual((w.gaps, w.closes, w.errors), ([], [], []))
            self.assertEqual(w.pt_seq, seq)
            self.assertLessEqual(w.ws_seq, seq)
        # The last server restarted is back in the cluster before the bus's
        # own digest is read (a join needs both streams' leaders).
        h.wait_until(self.bus.all_current, 60, "all three replicas current")
        h.wait_until(lambda: self.bus.all_current("ODDS_SNAP"), 60, "the snapshot stream's replicas current")
        self.assertEqual(bus_digest(self.bus.url(1)), (seq, digest, epoch))
        # Both edges answer REST byte for byte alike (the ingest, stopped,
        # is matched by its digest), then stop at the ingest's digest.
        answers = [self.answers(e.port) for e in self.edges]
        self.assertEqual(answers[0], answers[1])
        for e in self.edges:
            rc, elog = e.stop()
            self.assertEqual(rc, 0)
            self.assertEqual(stopped(elog), (seq, digest, epoch))

    def answers(self, port):
        ids = []
        for path in ("/v1/live", "/v1/prematch"):
            for evs in json.loads(h.request(port, path, KEY)[1])["data"].values():
                ids += list(evs)
        self.assertGreater(len(ids), 10)
        ids = ",".join(sorted(ids)[:100])
        out = {}
        for path in ("/v1/live", "/v1/prematch", "/v1/odds?ids=" + ids, "/v1/scores?ids=" + ids):
            r, body = h.request(port, path, KEY)
            self.assertEqual(r.status, 200, (path, body[:200]))
            out[path] = body
        return out


class BadUrls(unittest.TestCase):
    """A malformed server list stops the program at start (exit 2) with the
    reason, before any connection: it used to be taken as one host."""

    def test_exit_2(self):
        for cmd, why in [
            (["oddsrelay", "--publish", "nats://127.0.0.1:27221,/ODDS"], "empty server in bus URL"),
            (["oddsrelay", "--feed", "nats://127.0.0.1:1,127.0.0.1:x/ODDS"], "bad port in bus server '127.0.0.1:x'"),
            (["oddsrelay", "--feed", "nats://a:1,a:1/S"], "listed twice"),
            (["oddsfeed", "digest", "nats://a:1,,b:2/S"], "empty server in bus URL"),
            (["oddsfeed", "publish", "-", "nats://a:1,b:2"], "bus URL needs a stream"),
        ]:
            rc, out, err = h.run([h.binary(cmd[0])] + cmd[1:], timeout=10)
            self.assertEqual(rc, 2, (cmd, err))
            self.assertIn(why, err, cmd)


@unittest.skipIf(NATS is None, "nats-server is not installed (scripts/install-deps.sh)")
class Proxy(unittest.TestCase):
    """The fault proxy itself, against an echo server."""

    def setUp(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        threading.Thread(target=self.echo, daemon=True).start()
        self.proxy = FaultProxy(self.srv.getsockname()[1])

    def tearDown(self):
        self.proxy.close()
        self.srv.close()

    def echo(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return

            def serve(c=c):
                with c:
                    while data := c.recv(65536):
                        c.sendall(data)
            threading.Thread(target=serve, daemon=True).start()

    def roundtrip(self, c, n=1):
        t0 = time.monotonic()
        c.sendall(b"x" * n)
        got = 0
        while got < n:
            got += len(c.recv(65536))
        return time.monotonic() - t0

    def quickest(self, c):
        """The least of 5 roundtrips: one descheduled thread on a loaded
        machine is not a delay the proxy added."""
        return min(self.roundtrip(c) for _ in range(5))

    def test_faults(self):
        c = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10)
        self.assertLess(self.quickest(c), 0.05)
        self.proxy.set_delay(0.05, 0.02)
        rtts = [self.roundtrip(c) for _ in range(5)]
        self.assertTrue(all(0.06 <= r < 0.5 for r in rtts), rtts)  # two ways of 50 +- 20 ms
        self.proxy.set_delay(0, 0)
        self.proxy.set_bandwidth(100_000)
        self.assertGreater(self.roundtrip(c, 100_000), 0.8)  # 100 kB at 100 kB/s, each way
        self.proxy.set_bandwidth(0)
        self.proxy.blackhole()
        c.sendall(b"y")
        c.settimeout(0.5)
        with self.assertRaises(socket.timeout):
            c.recv(1)
        self.proxy.heal()
        c.settimeout(10)
        self.assertEqual(c.recv(1), b"y")
        self.proxy.cut()
        self.assertEqual(c.recv(1), b"")  # closed
        c.close()
        with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10) as c2:
            self.assertLess(self.quickest(c2), 0.05)


if __name__ == "__main__":
    h.main()
