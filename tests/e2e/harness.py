"""Shared helpers for the end-to-end tests: run the real binaries built in
--build-dir, on loopback only, with bounded waits; every helper kills what it
started. Each test file is one ctest test and exits non-zero on failure."""
import argparse
import asyncio
import contextlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import openapi_check

ARGS = None
# Set ODDSRELAY_E2E_CONTRACT=0 to look at a failure without the contract check.
CONTRACT = os.environ.get("ODDSRELAY_E2E_CONTRACT", "1") != "0"


def args():
    global ARGS
    if ARGS is None:
        p = argparse.ArgumentParser()
        p.add_argument("--build-dir", required=True)
        p.add_argument("--fixtures", required=True)
        # Appended to every oddsrelay the tests start, e.g.
        # --server-arg=--relay-threads=2 (scripts/test.sh, TSan stage).
        p.add_argument("--server-arg", action="append", default=[])
        ARGS, rest = p.parse_known_args()
        sys.argv = [sys.argv[0]] + rest
    return ARGS


def binary(name):
    return os.path.join(args().build_dir, name)


def sanitized():
    """True when --build-dir is a sanitizer build (memory figures mean nothing there)."""
    try:
        with open(os.path.join(args().build_dir, "CMakeCache.txt")) as f:
            return any(l.startswith("ODDSRELAY_SANITIZE:") and l.strip().split("=", 1)[1] for l in f)
    except OSError:
        return False


def fixture(name):
    return os.path.join(args().fixtures, name)


_handed_out = set()


def free_port():
    """A port for a server to listen on. Not from the kernel's ephemeral
    range: a port found there (bind to 0, then close) can be given to
    another test's outgoing connection before the server binds it, and the
    server then exits with "address already in use" (a CI run saw it with
    the suite's tests in parallel). Random below that range, so that
    parallel tests rarely pick alike; free when checked, and never handed
    out twice by one process."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.SystemRandom()
    for _ in range(1000 if low > 11000 else 0):
        port = rng.randrange(10000, low)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket() as s:  # a machine whose ephemeral range starts low
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, timeout=120):
    """Runs to completion; returns (rc, stdout, stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class Server:
    """The oddsrelay binary in the background, stopped with SIGTERM."""

    def __init__(self, *extra):
        self.port = free_port()
        self.err = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        self.proc = subprocess.Popen([binary("oddsrelay"), "--listen", f"127.0.0.1:{self.port}", *extra, *args().server_arg],
                                     stdout=subprocess.DEVNULL, stderr=self.err, text=True)

    def log(self):
        with open(self.err.name) as f:
            return f.read()

    def wait_for(self, pattern, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(pattern, self.log())
            if m:
                return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no /{pattern}/ in output within {timeout}s:\n{self.log()[-3000:]}")

    def count(self, pattern):
        """How many times /pattern/ occurs in what the server printed so far."""
        return len(re.findall(pattern, self.log()))

    def wait_for_more(self, pattern, before, timeout=30):
        """Waits until /pattern/ occurs more than `before` times; returns the
        last line that holds it (for output that repeats, e.g. after SIGHUP)."""
        wait_until(lambda: self.count(pattern) > before or self.proc.poll() is not None, timeout,
                   f"/{pattern}/ more than {before} times")
        lines = [l for l in self.log().splitlines() if re.search(pattern, l)]
        assert len(lines) > before, f"server exited before /{pattern}/:\n{self.log()[-3000:]}"
        return lines[-1]

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops the server; returns (exit code, everything it printed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("server did not stop within %ss" % timeout)
        return rc, self.log()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.err.name)


def wait_until(fn, timeout=30, what="the condition", interval=0.05):
    """Polls fn until it returns something true, and returns that; a
    generous deadline that fails the test only when it never happens."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s")
        time.sleep(interval)


def request(port, path, key=None, method="GET", headers=None, body=None, contract=True):
    """One HTTP request to the server on loopback, the key in X-API-Key;
    returns (response, body bytes). The response's status and headers stay
    readable after the connection is closed. Every answer is checked against
    the contract, docs/openapi.yaml (tests/e2e/openapi_check.py): a field
    added, renamed or retyped without it fails the test that saw it.
    contract=False only for a listener that is not the API (--metrics-listen)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    hdrs = dict(headers or {})
    if key:
        hdrs["X-API-Key"] = key
    c.request(method, path, body=body, headers=hdrs)
    r = c.getresponse()
    data = r.read()
    c.close()
    if contract and CONTRACT:
        openapi_check.check(method, path, r.status, r.getheaders(), data)
    return r, data


@contextlib.contextmanager
def clean_server(test, *args):
    """Server that must also stop cleanly (exit 0: no crash, no sanitizer report at exit)."""
    with Server(*args) as srv:
        yield srv
        rc, log = srv.stop()
        test.assertEqual(rc, 0, log[-3000:])


def shut_down(srv, directory=None):
    """Stops a test class's server, removes its scratch folder and fails
    unless the server exited 0 (for tearDownClass)."""
    rc, log = srv.stop()
    srv.__exit__()
    if directory:
        shutil.rmtree(directory)
    assert rc == 0, log


def scratch(name):
    """A fresh scratch folder for one test or test class; the test removes it."""
    return tempfile.mkdtemp(prefix=f"oddsrelay-{name}-")


def write_keys(directory, keys, name="keys.json"):
    """Writes a --keys file ({"keys": [...]}) into directory; returns its path."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump(keys, f)
    return path


class WithKeys(unittest.TestCase):
    """Each test gets a scratch folder (self.dir) holding the class's KEYS as
    a keys file (self.keys); both are gone after the test."""
    KEYS = {"keys": []}
    SCRATCH = "e2e"

    def setUp(self):
        self.dir = scratch(self.SCRATCH)
        self.keys = write_keys(self.dir, self.KEYS)

    def tearDown(self):
        shutil.rmtree(self.dir)


def gen_feed(path, records, sim, timeout=120):
    """Writes `records` simulated records (oddsfeed gen --sim sim) to path; returns path."""
    rc, _, err = run([binary("oddsfeed"), "gen", "-o", path, "--records", str(records), "--sim", sim], timeout)
    assert rc == 0, err
    return path


def status(port, key, ready_within=0):
    """GET /v1/status, which must answer 200. With ready_within, a node still
    recovering (503: its listener comes first) is waited through for up to
    that many seconds, never taken."""
    deadline = time.monotonic() + ready_within
    while True:
        r, body = request(port, "/v1/status", key)
        if r.status != 503 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.status == 200, (r.status, body)
    return json.loads(body)


def wait_status(port, key, pred, what, timeout=60):
    """Polls /v1/status until pred(status) holds; returns that status."""
    deadline = time.monotonic() + timeout
    while True:
        st = status(port, key)
        if pred(st):
            return st
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s: {st}")
        time.sleep(0.05)


def wait_done(port, key, timeout=120):
    """Until the replay finished and the engine stopped moving: the same seq
    on three reads 0.2 s apart after the source said done (one pause of the
    engine, e.g. behind a snapshot write on a loaded disk, is not its end)."""
    deadline = time.time() + timeout
    last, same = None, 0
    while time.time() < deadline:
        st = status(port, key)
        same = same + 1 if st["feed"]["done"] and st["seq"] == last else 0
        if same >= 2:
            return st
        last = st["seq"] if st["feed"]["done"] else None
        time.sleep(0.2)
    raise AssertionError("replay did not finish")


def read_until_closed(sock):
    """Everything a socket receives until the peer closes it."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def run_async(coro, timeout=60):
    """Runs a test's client coroutine to completion, failing after timeout s."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


# /pt-ws text frames are "TYPE\x1fCHANNEL\x1fJSON" (docs/api.md).
SEP = "\x1f"


def split_frame(frame):
    """(type, channel, parsed body) of one /pt-ws text frame."""
    t, ch, body = frame.split(SEP, 2)
    return t, ch, json.loads(body)


def rss_kib(pid):
    """Resident set size of a process in KiB (0 when it is gone)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def stopped_digest(log):
    m = re.search(r"stopped; state seq=(\d+) digest=([0-9a-f]{16})", log)
    assert m, "no final digest line in:\n" + log[-2000:]
    return m.group(2)


def file_digest(path):
    rc, out, err = run([binary("oddsfeed"), "digest", path])
    assert rc == 0, err
    return re.search(r"digest=([0-9a-f]{16})", out).group(1)


def main():
    args()
    unittest.main(verbosity=2)
