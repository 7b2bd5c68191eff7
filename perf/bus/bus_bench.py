"""The bus's figures (perf/bus/run.sh), each against the direct path in the
same run, each run checking its answers first:
  1. follow rate: a generated feed of N records (300 events) replayed by one
     oddsrelay at max speed (direct), versus an edge that joins the same log
     on the bus from its first position and follows all of it (its snapshot
     stream deleted, so it must read every record); plus the publish rate of
     `oddsfeed publish` and the late-join time from the final snapshot. The
     digests of the direct replay, the publisher, the edge and the file agree.
     The ratio is the median of three direct/edge pairs run back to back.
  2. latency: an ingest node on the simulator at 1,000 odds records/s
     publishing to the bus and an edge following it; oddsload subscribes to
     /pt-ws on both for the same seconds and reports record-to-subscriber
     delivery percentiles (record `at` = the ingest's wall clock). The edge's
     digest equals the ingest's at the end. Twice: the bus on one server
     (R1), then on a three-server cluster with --publish-replicas 3 (R3).
  3. a far edge: an edge reaching the server through the tests' fault proxy
     (tests/e2e/fault_proxy.py) at 50 +- 20 ms each way and 4 MB/s, beside
     its ingest as in 2; then the proxy cuts it off for CUT seconds and the
     time until its lag is under 1 s again after the link is back.
Loopback only; everything started here is stopped here."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

BUILD = sys.argv[1]
RECORDS = int(sys.argv[2])
SECONDS = int(sys.argv[3])
CUT = int(sys.argv[4])
PAIRS = 3  # direct/edge pairs of the follow rate
NATS = shutil.which("nats-server") or "/usr/sbin/nats-server"
KEY = "perf-bus-key"
work = tempfile.mkdtemp(prefix="oddsrelay-perf-bus-")
procs = []


def die(msg):
    print("perf/bus: " + msg, file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name, cmd):
    log = open(os.path.join(work, name + ".log"), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=log)
    p.logname = log.name
    procs.append(p)
    return p


def output(p):
    with open(p.logname) as f:
        return f.read()


def wait_for(p, pattern, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = re.search(pattern, output(p))
        if m:
            return m
        if p.poll() is not None:
            break
        time.sleep(0.02)
    die(f"no /{pattern}/ from {p.args[0]}: {output(p)[-1500:]}")


def status(port):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/status", headers={"X-API-Key": KEY})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    m = re.search(r"stopped; state seq=(\d+) digest=([0-9a-f]{16})", output(p))
    if not m:
        die("no final state from " + p.logname)
    return int(m.group(1)), m.group(2)


def relay(name, *args):
    port = free_port()
    p = start(name, [os.path.join(BUILD, "oddsrelay"), "--listen", f"127.0.0.1:{port}", "--keys", keys,
                     "--progress", "0", *args])
    p.port = port
    return p


def load(ports):
    """One /pt-ws subscriber (oddsload) on each port for the same SECONDS:
    its delivery percentiles; a seq gap in any stream ends the run."""
    loads = [(name, subprocess.Popen(
        [os.path.join(BUILD, "oddsload"), "--connect", f"127.0.0.1:{port}", "--key", KEY, "--connections", "1",
         "--duration", str(SECONDS), "--warmup", "2", "--progress", "0", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for name, port in ports.items()]
    results = {}
    for name, p in loads:
        out, err = p.communicate(timeout=SECONDS + 60)
        if p.returncode != 0:
            die(f"oddsload {name}: {err[-500:]}")
        results[name] = json.loads(out.strip().splitlines()[-1])
        if results[name].get("gaps"):
            die(f"{name}: seq gaps in the stream: {results[name]}")
    return results


def js_api(nats_port, subject, payload=b""):
    """One JetStream API request over the raw NATS protocol."""
    with socket.create_connection(("127.0.0.1", nats_port), timeout=10) as s:
        f = s.makefile("rb")
        f.readline()
        s.sendall(b'CONNECT {"verbose":false}\r\nSUB _INBOX.perf 1\r\n' +
                  f"PUB {subject} _INBOX.perf {len(payload)}\r\n".encode() + payload + b"\r\n")
        while True:
            line = f.readline().decode().strip()
            if line.startswith("MSG"):
                return json.loads(f.read(int(line.split()[-1])))
            if line == "PING":
                s.sendall(b"PONG\r\n")


try:
    keys = os.path.join(work, "keys.json")
    with open(keys, "w") as f:
        json.dump({"keys": [{"key": KEY, "name": "perf", "permissions": ["live", "prematch", "odds", "scores"],
                             "rate_limit": 100000000}]}, f)
    nport = free_port()
    nats = start("nats", [NATS, "-js", "-a", "127.0.0.1", "-p", str(nport), "-sd", os.path.join(work, "js")])
    wait_for(nats, "Server is ready")
    url = f"nats://127.0.0.1:{nport}/PERF"

    # 1. Follow rate.
    feed = os.path.join(work, "feed.jsonl")
    subprocess.run([os.path.join(BUILD, "oddsfeed"), "gen", "-o", feed, "--records", str(RECORDS), "--sim",
                    "seed=7,events=300,rate=1000"], check=True, capture_output=True)
    want = re.search(r"digest=([0-9a-f]{16})", subprocess.run([os.path.join(BUILD, "oddsfeed"), "digest", feed],
                     check=True, capture_output=True, text=True).stdout).group(1)

    def direct_run():
        t0 = time.time()
        direct = relay("direct", "--feed", f"replay:{feed},speed=max", "--exit-after-replay")
        direct.wait(timeout=600)
        t = time.time() - t0
        if not re.search(rf"stopped; state seq={RECORDS} digest={want}", output(direct)):
            die("direct replay ended at the wrong state: " + output(direct)[-500:])
        return t

    # Without snapshots the edge reads the log from position 1: every record.
    def edge_run():
        t0 = time.time()
        edge = relay("edge", "--feed", url)
        wait_for(edge, "joined log \\w+ at seq 0 from the log's start")
        wait_for(edge, "serving http://")
        while status(edge.port)["seq"] < RECORDS:
            if edge.poll() is not None:
                die("edge died: " + output(edge)[-500:])
            time.sleep(0.01)
        t = time.time() - t0
        if stop(edge) != (RECORDS, want):
            die("edge differs from the feed")
        return t

    t_direct = [direct_run()]
    t0 = time.time()
    pub = subprocess.run([os.path.join(BUILD, "oddsfeed"), "publish", feed, url], capture_output=True, text=True,
                         timeout=600)
    t_pub = time.time() - t0
    if pub.returncode != 0 or f"seq={RECORDS} " not in pub.stdout or f"digest={want}" not in pub.stdout:
        die("publish: " + pub.stdout + pub.stderr[-500:])
    messages = int(re.search(r"messages=(\d+)", pub.stdout).group(1))

    late = relay("late", "--feed", url)
    m = wait_for(late, r"joined log \w+ at seq (\d+) from a snapshot \((\d+) events, (\d+) bytes, (\d+) chunks\) in (\d+) ms")
    if int(m.group(1)) != RECORDS:
        die("late join at the wrong seq: " + m.group(0))
    join = m
    wait_for(late, "serving http://")
    if stop(late) != (RECORDS, want):
        die("late edge differs")

    js_api(nport, "$JS.API.STREAM.DELETE.PERF_SNAP")
    # A single pair swings with the machine (rates move by up to 1.5x
    # between runs here), so the ratio is the median of PAIRS pairs run
    # back to back, each pair direct then edge.
    t_edge = [edge_run()]
    for _ in range(PAIRS - 1):
        t_direct.append(direct_run())
        t_edge.append(edge_run())
    ratios = sorted(d / e for d, e in zip(t_direct, t_edge))
    print(f"follow: {RECORDS:,} records, 300 events, {messages:,} bus messages; {PAIRS} pairs (direct, edge), "
          "process start included")
    print(f"  oddsfeed publish (file -> bus, acked):     {RECORDS / t_pub:>10,.0f} rec/s  ({t_pub:.2f} s)")
    for i, (d, e) in enumerate(zip(t_direct, t_edge)):
        print(f"  pair {i + 1}: direct replay (file -> engine) {RECORDS / d:>10,.0f} rec/s ({d:.2f} s); "
              f"edge following the bus from position 1 {RECORDS / e:>10,.0f} rec/s ({e:.2f} s) = {d / e:.2f}x")
    print(f"  edge / direct: median {ratios[len(ratios) // 2]:.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f}x)")
    print(f"  late join from the final snapshot: {int(join.group(2)):,} events, {int(join.group(3)) / 1e6:.1f} MB in "
          f"{join.group(4)} chunks, {join.group(5)} ms")
    print(f"  digests: file = direct = publisher = edge = late edge = {want}")

    # 2. Latency at 1,000 records/s: through one server (R1), then through a
    # three-server cluster with both streams replicated three times (R3).
    def latency(tag, bus_url, *publish):
        ingest = relay("ingest" + tag, "--feed", "sim:seed=3,events=300,rate=1000", "--publish", bus_url, *publish)
        wait_for(ingest, "serving http://")
        wait_for(ingest, "bus: publishing log")
        edge = relay("edge" + tag, "--feed", bus_url)
        wait_for(edge, "serving http://")
        results = load({"direct": ingest.port, "edge": edge.port})
        rate = status(ingest.port)["feed"]["records_applied"] / max(1, status(ingest.port)["uptime"])
        seq, digest = stop(ingest)
        deadline = time.time() + 60
        while status(edge.port)["seq"] != seq and time.time() < deadline:
            time.sleep(0.05)
        if stop(edge) != (seq, digest):
            die(f"edge{tag} differs from the ingest at the end of the latency run")
        return results, rate, seq, digest

    runs = [("R1", latency("", url.replace("PERF", "LIVE")))]
    # Three servers on loopback, routes between them (docs/deploy.md).
    client, route = [free_port() for _ in range(3)], [free_port() for _ in range(3)]
    for i in range(3):
        conf = os.path.join(work, f"n{i + 1}.conf")
        with open(conf, "w") as f:
            routes = ", ".join(f"nats-route://127.0.0.1:{route[j]}" for j in range(3) if j != i)
            f.write(f'server_name: n{i + 1}\nlisten: 127.0.0.1:{client[i]}\njetstream {{ store_dir: "{work}/c{i + 1}" }}\n'
                    f"cluster {{ name: perf, listen: 127.0.0.1:{route[i]}, no_advertise: true, routes: [{routes}] }}\n")
        start(f"nats{i + 1}", [NATS, "-c", conf])
    for p in procs[-3:]:
        wait_for(p, "Server is ready")
    cluster = "nats://" + ",".join(f"127.0.0.1:{c}" for c in client) + "/LIVE3"
    runs.append(("R3", latency("3", cluster, "--publish-replicas", "3")))
    print(f"latency: sim at 1,000 odds records/s, one /pt-ws subscriber on the ingest (direct) and one on an edge, "
          f"{SECONDS} s each; the bus on one server (R1), then on three with both streams replicated (R3)")
    for tag, (results, rate, seq, digest) in runs:
        for name in ("direct", "edge"):
            r = results[name]
            print(f"  {tag} {name:>6}: p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  p99.9 {r['p999_ms']:.3f} ms"
                  f"  ({r['latency_samples']} samples, {rate:,.0f} records/s in all)")
        d, e = results["direct"], results["edge"]
        print(f"  {tag} the bus adds: p50 {e['p50_ms'] - d['p50_ms']:+.3f} ms, p99 {e['p99_ms'] - d['p99_ms']:+.3f} ms;"
              f" digests: ingest = edge = {digest} at seq {seq}")

    # 3. A far edge: behind the tests' fault proxy at 50 +- 20 ms each way and
    # 4 MB/s, beside the ingest; then a cut of CUT seconds and its catch-up.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
    from fault_proxy import FaultProxy
    ingest = relay("ingest_far", "--feed", "sim:seed=3,events=300,rate=1000", "--publish", url.replace("PERF", "FAR"))
    wait_for(ingest, "bus: publishing log")
    proxy = FaultProxy(nport)
    proxy.set_delay(0.05, 0.02)
    proxy.set_bandwidth(4_000_000)
    edge = relay("edge_far", "--feed", f"nats://127.0.0.1:{proxy.port}/FAR")
    wait_for(edge, "serving http://")
    results = load({"direct": ingest.port, "far edge": edge.port})
    print(f"far edge: link 50 +- 20 ms each way (order kept), 4 MB/s each way; sim at 1,000 odds records/s, "
          f"{SECONDS} s")
    for name, r in results.items():
        print(f"  {name:>8}: p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  p99.9 {r['p999_ms']:.3f} ms  "
              f"({r['latency_samples']} samples)")
    d, e = results["direct"], results["far edge"]
    print(f"  the far edge adds: p50 {e['p50_ms'] - d['p50_ms']:+.3f} ms, p99 {e['p99_ms'] - d['p99_ms']:+.3f} ms")
    proxy.blackhole()
    proxy.cut()
    time.sleep(CUT)
    behind = status(ingest.port)["seq"] - status(edge.port)["seq"]
    proxy.heal()
    t0 = time.monotonic()
    while status(edge.port)["seq"] < status(ingest.port)["seq"] - 1000:  # lag under 1 s at 1,000 records/s
        if time.monotonic() - t0 > 300:
            die("the far edge did not catch up within 300 s")
        time.sleep(0.1)
    print(f"  a {CUT} s cut: {behind:,} records behind at the heal, lag under 1 s {time.monotonic() - t0:.2f} s later;"
          f" rejoins {status(edge.port)['bus']['rejoins']}")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(work, ignore_errors=True)
