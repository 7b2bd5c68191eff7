"""The slow-reader benchmark of issue 42 (perf/slow_readers/run.sh starts
the server and calls this): a healthy client alone, then beside CONNS slow
readers of one key (each pipelines three GET /v1/markets, a 490 KB answer,
and reads 32 bytes every 5 s: slowhttptest -X -k 3 -z 32 -n 5), then BIG
slow readers of a key with the default http_connections. Prints the
server's RSS growth (peak during the attack, /proc/PID/status VmRSS), the
healthy client's max and p99 latency with and without the attack, and the
refusals. Checks (exit 1): the healthy client was answered, the server is
alive, the big run was refused past the key's limit; with --goals also the
issue's goals (RSS +50 MB at most, healthy max 50 ms, p99 within 2x)."""
import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
import slow_reader  # noqa: E402


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) << 10
    return 0


def tcp_mem():
    """The kernel's TCP buffer memory, bytes (/proc/net/sockstat; the
    whole machine's, both ends of loopback included)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                fields = line.split()
                return int(fields[fields.index("mem") + 1]) * 4096
    return 0


def status(port, key):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/status", headers={"X-API-Key": key})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def _attack_proc(port, key, conns, seconds, q):
    # The attacker stands for other machines: on two shared cores it should
    # not take the healthy client's or the server's CPU.
    os.nice(10)
    q.put(asyncio.run(slow_reader.attack(port, key, conns, seconds)))


def attacked(port, pid, key, healthy_key, conns, seconds):
    """(attack counts, healthy summary, RSS before, peak RSS); prints the
    kernel's TCP memory at its peak."""
    before = peak = rss(pid)
    kernel0 = kernel = tcp_mem()
    h = slow_reader.start_healthy(port, healthy_key, max(1, seconds - 1))
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_attack_proc, args=(port, key, conns, seconds, q), daemon=True)
    p.start()
    deadline = time.monotonic() + seconds + 60
    while p.is_alive() and q.empty() and time.monotonic() < deadline:
        peak = max(peak, rss(pid))
        kernel = max(kernel, tcp_mem())
        time.sleep(0.2)
    stats = q.get(timeout=30)
    p.join(5)
    print(f"  kernel TCP memory {kernel0 >> 20} -> peak {kernel >> 20} MB")
    return stats, slow_reader.summary(h.get()), before, peak


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("pid", type=int)
    p.add_argument("--conns", type=int, default=500)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--big", type=int, default=5000)
    p.add_argument("--big-limit", type=int, default=256)
    p.add_argument("--goals", action="store_true")
    a = p.parse_args()
    ok = True
    # The baseline in a forked process too, like the runs beside the attack.
    base = slow_reader.summary(slow_reader.start_healthy(a.port, "healthy-key", min(a.seconds, 10)).get())
    print(f"healthy alone ({min(a.seconds, 10):g} s): {base['n']} requests, max {base['max']} ms, p99 {base['p99']} ms")
    stats, lat, before, peak = attacked(a.port, a.pid, "slow-wide-key", "healthy-key", a.conns, a.seconds)
    grew = (peak - before) >> 20
    print(f"{a.conns} slow readers x 3 pipelined /v1/markets, {a.seconds:g} s: RSS {before >> 20} -> {peak >> 20} MB "
          f"(+{grew} MB); healthy: {lat['n']} requests, max {lat['max']} ms, p99 {lat['p99']} ms; attack {stats}")
    if lat["n"] == 0 or lat["max"] >= 10_000:
        print("FAILED: the healthy client was not answered", file=sys.stderr)
        ok = False
    if a.goals:
        for what, good in [("RSS growth <= 50 MB", grew <= 50), ("healthy max <= 50 ms", lat["max"] <= 50),
                           ("healthy p99 within 2x of alone", lat["p99"] <= 2 * max(base["p99"], 0.05))]:
            print(f"goal {what}: {'met' if good else 'MISSED'}")
            ok = ok and good
    if a.big:
        stats, lat, before, peak = attacked(a.port, a.pid, "slow-key", "healthy-key", a.big, a.seconds)
        print(f"{a.big} slow readers of one key (http_connections {a.big_limit}), {a.seconds:g} s: RSS {before >> 20} -> "
              f"{peak >> 20} MB (+{(peak - before) >> 20} MB); refused {stats['refused']}; healthy: {lat['n']} requests, "
              f"max {lat['max']} ms, p99 {lat['p99']} ms; attack {stats}")
        if stats["refused"] < a.big - a.big_limit - stats["errors"]:
            print("FAILED: not refused past the key's limit", file=sys.stderr)
            ok = False
        if a.goals and (peak - before) >> 20 > 50:
            print("goal RSS growth <= 50 MB with the big run: MISSED")
            ok = False
    try:
        st = status(a.port, "healthy-key")["http"]
        print(f"server alive; /v1/status http: {json.dumps(st)}")
    except OSError as e:
        print(f"FAILED: the server does not answer: {e}", file=sys.stderr)
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
