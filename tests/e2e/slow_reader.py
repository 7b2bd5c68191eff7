"""A hostile slow reader and a healthy client beside it (issue 42), for
tests/e2e/test_slow_readers.py and perf/slow_readers/run.sh.

The attack is slowhttptest's slow-read mode done in asyncio, bounded in
time: each connection shrinks its receive buffer, pipelines `pipeline`
GETs of a large answer, then reads `read_bytes` every `read_every`
seconds, so the server's answers wait in its memory while the connection
keeps making a little progress. The healthy client is a separate process
(so the attack's event loop does not delay it) that sends one small
request at a time on a keep-alive connection and times each answer.

Also a command: python3 slow_reader.py PORT KEY [CONNS] [SECONDS] prints
one JSON line with the attack's counts and the healthy client's latencies.
"""
import asyncio
import json
import multiprocessing
import socket
import sys
import time


def _request(path, key):
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n\r\n").encode()


async def _slow_conn(port, req, pipeline, read_every, read_bytes, until, stats):
    loop = asyncio.get_running_loop()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connect: a tiny window
    s.setblocking(False)
    try:
        await loop.sock_connect(s, ("127.0.0.1", port))
        stats["opened"] += 1
        await loop.sock_sendall(s, req * pipeline)
        first = b""
        while time.monotonic() < until:
            try:
                data = await asyncio.wait_for(loop.sock_recv(s, read_bytes), max(0.01, until - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if not data:
                stats["closed"] += 1
                break
            if len(first) < 12:
                first += data
                if len(first) >= 12 and first.startswith(b"HTTP/1.1 429"):
                    stats["refused"] += 1
            stats["read"] += len(data)
            await asyncio.sleep(min(read_every, max(0.0, until - time.monotonic())))
    except OSError:
        stats["errors"] += 1
    finally:
        s.close()


async def attack(port, key, conns, seconds, path="/v1/markets", pipeline=3, read_every=5.0, read_bytes=32,
                 rate=200, on_ramped=None):
    """Opens `conns` slow readers at `rate` a second; each lives until
    `seconds` after the start. Returns the counts: opened, refused (a 429 was
    the first answer), closed (by the server), errors, read (bytes)."""
    stats = {"opened": 0, "refused": 0, "closed": 0, "errors": 0, "read": 0}
    until = time.monotonic() + seconds
    req = _request(path, key)
    tasks = []
    for i in range(conns):
        tasks.append(asyncio.create_task(_slow_conn(port, req, pipeline, read_every, read_bytes, until, stats)))
        if rate and (i + 1) % max(1, rate // 20) == 0:
            await asyncio.sleep(0.05)
    if on_ramped:
        on_ramped()
    await asyncio.gather(*tasks)
    return stats


def healthy(port, key, seconds, path="/v1/sports", interval=0.01):
    """Latencies (ms) of one request at a time on a keep-alive connection
    for `seconds`; a request that fails or takes over 10 s ends the run and is
    counted as 10 s."""
    lat = []
    until = time.monotonic() + seconds
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    req = _request(path, key)
    try:
        while time.monotonic() < until:
            t0 = time.perf_counter()
            s.sendall(req)
            buf = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    raise OSError("closed")
                buf += chunk
                head, sep, body = buf.partition(b"\r\n\r\n")
                if not sep:
                    continue
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if len(body) >= length:
                    break
            lat.append((time.perf_counter() - t0) * 1000)
            time.sleep(interval)
    except OSError:
        lat.append(10_000.0)
    finally:
        s.close()
    return lat


def _healthy_proc(port, key, seconds, q):
    q.put(healthy(port, key, seconds))


def start_healthy(port, key, seconds):
    """The healthy client in its own process; join with .get()."""
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_healthy_proc, args=(port, key, seconds, q), daemon=True)
    p.start()

    class Handle:
        def get(self):
            lat = q.get(timeout=seconds + 30)
            p.join(5)
            return lat

    return Handle()


def summary(lat):
    """max and p99 of latencies in ms."""
    if not lat:
        return {"n": 0, "max": None, "p99": None}
    s = sorted(lat)
    return {"n": len(s), "max": round(s[-1], 2), "p99": round(s[min(len(s) - 1, int(len(s) * 0.99))], 2)}


def main():
    port, key = int(sys.argv[1]), sys.argv[2]
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    h = start_healthy(port, key, seconds)
    stats = asyncio.run(attack(port, key, conns, seconds))
    print(json.dumps({"attack": stats, "healthy": summary(h.get())}))


if __name__ == "__main__":
    main()
