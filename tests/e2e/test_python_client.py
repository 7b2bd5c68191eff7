"""The Python client (clients/python/oddsclient) against the real server,
through tests/e2e/fault_proxy.py: `python3 -m oddsclient follow --verify`
on a replayed feed while the proxy flips one price digit in one odds:
frame (the next INFO's digest catches it: digest_mismatch, then a fresh
snapshot), cuts the connection (resumed, no snapshot) and black-holes it
for longer than two ping intervals (stale, then resumed). At the end its
--out equals /v1/odds for its events at its seq, digest included."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import harness as h
from fault_proxy import FaultProxy
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, StreamState, rest

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python")
PRICE = re.compile(rb'":\[(\d+),')


class Follower:
    """The CLI as a subprocess; its stdout lines and its last progress seq."""

    def __init__(self, port, out):
        env = dict(os.environ, PYTHONPATH=CLIENT)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oddsclient", "follow", "--url", f"http://127.0.0.1:{port}", "--key", KEY,
             "--verify", "--out", out, "--ping-interval", "0.4", "--progress", "0.2"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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

    def wait(self, what, timeout=30, **kv):
        before = self.count(**kv)
        return lambda: h.wait_until(lambda: self.count(**kv) > before, timeout, what)


class PythonClient(StreamState):
    def test_the_cli_repairs_a_corrupted_frame_survives_cuts_and_ends_equal_to_rest(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        h.gen_feed(feed, 6000, "seed=11,events=30,rate=400")
        with open(feed) as f:
            last_at = max(json.loads(line)["at"] for line in f if line.startswith('{"at"'))
        end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
        with open(feed, "a") as f:
            f.write(json.dumps(end) + "\n")
        out = os.path.join(self.dir, "out.json")
        with h.Server("--feed", f"replay:{feed},speed=3", "--keys", self.keys, "--progress", "0",
                      "--ws-ping", "400") as srv:
            srv.wait_for(r"serving http://")
            proxy = FaultProxy(srv.port)
            client = Follower(proxy.port, out)
            try:
                h.wait_until(lambda: client.count(state="live"), 30, "the client live")
                # One price digit flipped in one odds: frame, until the client notices.
                flipped = []

                def flip(data):
                    i = data.find(b"\x1fodds:")
                    j = data.find(b"\x1f", i + 1) if i >= 0 else -1
                    m = PRICE.search(data, j + 1) if j >= 0 else None
                    if not m or b"\x1f" in data[j + 1:m.start()] or flipped:
                        return None
                    k = m.end(1) - 1
                    flipped.append(data[m.start(1):m.end(1)])
                    proxy.tamper = None
                    return data[:k] + bytes([ord("0") + (data[k] - ord("0") + 1) % 10]) + data[k + 1:]
                for _ in range(5):  # the flipped market may be replaced before its INFO: flip again
                    flipped.clear()
                    proxy.tamper = flip
                    try:
                        h.wait_until(lambda: client.count(resync="digest_mismatch"), 3, "digest_mismatch")
                        break
                    except AssertionError:
                        continue
                self.assertEqual(client.count(resync="digest_mismatch"), 1, client.lines)
                h.wait_until(lambda: client.lines[-1].get("state") == "live", 10, "live again after the resync")
                # A cut: resumed, no snapshot.
                resumed = h.status(srv.port, KEY)["relay"]["resumed"]
                live = client.count(state="live")
                proxy.cut()
                h.wait_until(lambda: client.count(state="live") > live, 15, "live after the cut")
                h.wait_status(srv.port, KEY, lambda s: s["relay"]["resumed"] > resumed, "the cut resumed")
                # A black hole past two ping intervals: stale, then resumed once it heals.
                proxy.blackhole()
                h.wait_until(lambda: client.count(state="stale"), 10, "stale")
                proxy.heal()
                live = client.count(state="live")
                h.wait_until(lambda: client.count(state="live") > live, 15, "live after the black hole")
                final = h.wait_status(srv.port, KEY, lambda s: s["feed"]["done"], "the end of the replay", 120)["seq"]
                h.wait_until(lambda: client.seq == final, 30, "the client at the last seq")
            finally:
                client.proc.send_signal(signal.SIGTERM)
                rc = client.proc.wait(30)
                client.proc.stdout.close()
                client.proc.stderr.close()
                proxy.close()
            print("  client lines:", client.lines, "flipped price", flipped, f"final seq {final}")
            self.assertEqual(rc, 0)
            resyncs = [l["resync"] for l in client.lines if "resync" in l]
            self.assertEqual(resyncs, ["digest_mismatch"], client.lines)  # every cut resumed
            with open(out) as f:
                got = json.load(f)
            self.assertEqual(got["seq"], final)
            keys = sorted(got["data"])
            self.assertTrue(keys)
            want, total = {}, 0
            for chunk in (keys[i:i + 100] for i in range(0, len(keys), 100)):
                ans = rest(srv.port, "/v1/odds?digest=1&ids=" + ",".join(chunk))
                self.assertEqual((ans["seq"], ans["epoch"]), (final, got["epoch"]))
                want.update(ans["data"])
                total += int(ans["digest"], 16)
            self.assertEqual(json.dumps(got["data"], sort_keys=True), json.dumps(want, sort_keys=True))
            self.assertEqual(got["digest"], f"{total % 2 ** 64:016x}")


if __name__ == "__main__":
    h.main()
