"""What the client e2e tests share (test_python_client.py,
test_cpp_client.py): a client CLI as a subprocess (`oddsclient follow`, the
Python package's or the C++ binary, same flags and lines), a replayed feed
that ends on a record of its own, the faults a tests/e2e/fault_proxy.py
puts between the CLI and the server (one flipped price digit, inside a
deflated message on a compressed stream, a cut, a
black hole longer than two ping intervals, the server killed with -9 and
restarted on its --data-dir), and the final check: the CLI's --out equals
/v1/odds?ids=..&digest=1 for its events at its seq, byte for byte after
sorting keys."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import harness as h
from fault_proxy import DeflateFlipper, FaultProxy, price_flipper
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, rest  # noqa: F401 (KEY: the tests use it through here)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def python_cli(port, out, *extra):
    """The Python CLI's command line and environment."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "clients", "python"))
    return [sys.executable, "-m", "oddsclient", *follow_args(port, out, *extra)], env


def cpp_cli(port, out, *extra):
    """The C++ CLI's (build/oddsclient)."""
    return [h.binary("oddsclient"), *follow_args(port, out, *extra)], dict(os.environ)


def follow_args(port, out, *extra):
    return ["follow", "--url", f"http://127.0.0.1:{port}", "--key", KEY, "--verify", "--out", out,
            "--ping-interval", "0.4", "--progress", "0.2", *extra]


class Follower:
    """A CLI as a subprocess; its stdout lines and its last progress seq."""

    def __init__(self, cli, port, out, *extra):
        cmd, env = cli(port, out, *extra)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines, self.seq, self.lock = [], None, threading.Lock()
        threading.Thread(target=self.read_out, daemon=True).start()
        threading.Thread(target=self.read_err, daemon=True).start()

    def read_out(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

    def read_err(self):
        for line in self.proc.stderr:
            m = re.search(r" seq (\d+) ", line)
            if m:
                self.seq = int(m.group(1))

    def count(self, **kv):
        with self.lock:
            return sum(all(l.get(k) == v for k, v in kv.items()) for l in self.lines)

    def last(self):
        with self.lock:
            return self.lines[-1] if self.lines else {}

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


def feed_with_end(directory, records=6000, sim="seed=11,events=30,rate=400"):
    """A simulated feed ending on a record of ours whose `at` no other has:
    the INFO with that `at` closes the last batch there is."""
    feed = os.path.join(directory, "feed.jsonl")
    h.gen_feed(feed, records, sim)
    with open(feed) as f:
        last_at = max(json.loads(line)["at"] for line in f if line.startswith('{"at"'))
    end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
    with open(feed, "a") as f:
        f.write(json.dumps(end) + "\n")
    return feed


def flip_a_price(test, proxy, client):
    """One price digit flipped in one odds: frame on its way to the client,
    until the client notices at the next INFO (digest_mismatch). Returns
    the price that was flipped."""
    flipped = []
    for _ in range(5):  # the flipped market may be replaced before its INFO: flip again
        flipped.clear()
        if isinstance(proxy.connection_filter, DeflateFlipper):  # a compressed stream
            proxy.connection_filter.arm(flipped)
        else:
            proxy.tamper = price_flipper(proxy, flipped)
        try:
            h.wait_until(lambda: client.count(resync="digest_mismatch"), 3, "digest_mismatch")
            break
        except AssertionError:
            continue
    test.assertEqual(client.count(resync="digest_mismatch"), 1, client.lines)
    h.wait_until(lambda: client.last().get("state") == "live", 10, "live again after the resync")
    return flipped


def cut_and_resume(test, srv, proxy, client):
    """A cut: live again, resumed (the server counts it), no snapshot."""
    resumed = h.status(srv.port, KEY)["relay"]["resumed"]
    live = client.count(state="live")
    proxy.cut()
    h.wait_until(lambda: client.count(state="live") > live, 15, "live after the cut")
    h.wait_status(srv.port, KEY, lambda s: s["relay"]["resumed"] > resumed, "the cut resumed")


def black_hole(test, proxy, client):
    """Silence past two ping intervals: stale, then live once it heals."""
    proxy.blackhole()
    h.wait_until(lambda: client.count(state="stale"), 10, "stale")
    proxy.heal()
    live = client.count(state="live")
    h.wait_until(lambda: client.count(state="live") > live, 15, "live after the black hole")


def assert_out_equals_rest(test, port, out, final):
    """--out at seq `final` equals /v1/odds for its events, digest included."""
    with open(out) as f:
        got = json.load(f)
    test.assertEqual(got["seq"], final)
    keys = sorted(got["data"])
    test.assertTrue(keys)
    want, total = {}, 0
    for chunk in (keys[i:i + 100] for i in range(0, len(keys), 100)):
        ans = rest(port, "/v1/odds?digest=1&ids=" + ",".join(chunk))
        test.assertEqual((ans["seq"], ans["epoch"]), (final, got["epoch"]))
        want.update(ans["data"])
        total += int(ans["digest"], 16)
    test.assertEqual(json.dumps(got["data"], sort_keys=True), json.dumps(want, sort_keys=True))
    test.assertEqual(got["digest"], f"{total % 2 ** 64:016x}")
    return got


def follow_through_faults(test, cli, extra=(), faults=("flip", "cut", "cut", "cut", "blackhole"), speed=3):
    """A replayed feed followed by `cli` through a fault proxy: each fault
    in turn (a cut as many times as listed, a second apart), then the end
    of the replay; the resyncs are exactly the flipped frame's (every cut
    resumed) and --out equals REST."""
    feed = feed_with_end(test.dir)
    out = os.path.join(test.dir, "out.json")
    with h.Server("--feed", f"replay:{feed},speed={speed}", "--keys", test.keys, "--progress", "0",
                  "--ws-ping", "400") as srv:
        srv.wait_for(r"serving http://")
        proxy = FaultProxy(srv.port)
        if "--compress" in extra:  # the odds: text is inside deflated messages
            proxy.connection_filter = DeflateFlipper()
        if extra and extra[0] == "--events":  # a filter on live events the server holds now
            h.wait_until(lambda: rest(srv.port, "/v1/live")["data"].get("1"), 30, "live events")
            ids = sorted(rest(srv.port, "/v1/live")["data"]["1"])[:extra[1]]
            extra = ("--events", ",".join(ids), *extra[2:])
        client = Follower(cli, proxy.port, out, *extra)
        flipped, final = None, None
        try:
            h.wait_until(lambda: client.count(state="live"), 30, "the client live")
            if "flip" in faults:
                flipped = flip_a_price(test, proxy, client)
            for _ in range(faults.count("cut")):
                cut_and_resume(test, srv, proxy, client)
                time.sleep(1)
            if "blackhole" in faults:
                black_hole(test, proxy, client)
            final = h.wait_done(srv.port, KEY)["seq"]  # done, and the engine has applied the last record
            h.wait_until(lambda: client.seq == final, 30, "the client at the last seq")
        finally:
            rc = client.stop()
            proxy.close()
        print(f"  {extra} client lines:", client.lines, "flipped price", flipped, f"final seq {final}")
        test.assertEqual(rc, 0)
        resyncs = [l["resync"] for l in client.lines if "resync" in l]
        test.assertEqual(resyncs, ["digest_mismatch"] if "flip" in faults else [], client.lines)
        return assert_out_equals_rest(test, srv.port, out, final)


def follow_through_kill9(test, cli):
    """The server killed with -9 mid-follow and restarted on its --data-dir
    (a new port behind the same proxy): the client reconnects, resumes or
    syncs again, and ends equal to REST at the restarted server's seq."""
    feed = feed_with_end(test.dir)
    out = os.path.join(test.dir, "out-kill9.json")
    data = os.path.join(test.dir, "data-kill9")
    common = ("--keys", test.keys, "--progress", "0", "--ws-ping", "400", "--data-dir", data)
    first = h.Server("--feed", f"replay:{feed},speed=3", *common)
    with first:
        first.wait_for(r"serving http://")
        proxy = FaultProxy(first.port)
        client = Follower(cli, proxy.port, out)
        try:
            h.wait_until(lambda: client.count(state="live"), 30, "the client live")
            h.wait_until(lambda: (client.seq or 0) > 500, 60, "the client past seq 500")
            lines_before = len(client.lines)
            first.proc.send_signal(signal.SIGKILL)
            first.proc.wait()
            h.wait_until(lambda: client.count(state="connecting") or client.count(state="stale"), 10, "the cut seen")
            # The restart replays the feed again on top of what the dir holds
            # (as tests/e2e/test_log_crash.py): records keep coming, so a
            # snapshot asked for after a refused resume is closed by an INFO.
            with h.Server("--feed", f"replay:{feed},speed=6", *common) as second:
                second.wait_for(r"serving http://")
                proxy.upstream = ("127.0.0.1", second.port)
                final = h.wait_done(second.port, KEY)["seq"]  # done, and the engine has applied the last record
                h.wait_until(lambda: client.seq == final and client.last().get("state") == "live", 60,
                             "the client live at the restarted server's last seq")
                rc = client.stop()
                after = client.lines[lines_before:]
                print("  kill -9: client lines after the kill:", after, f"final seq {final}")
                test.assertEqual(rc, 0)
                test.assertTrue(any(l.get("state") == "live" for l in after), after)
                # Only a refused resume may have thrown the replica away.
                for l in after:
                    if "resync" in l:
                        test.assertTrue(l["resync"].startswith("resume_refused:"), after)
                assert_out_equals_rest(test, second.port, out, final)
        finally:
            if client.proc.poll() is None:
                client.stop()
            proxy.close()
