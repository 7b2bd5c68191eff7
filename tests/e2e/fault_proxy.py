"""A TCP proxy of the tests' own, put between a node and one bus server to
make the network misbehave on loopback: delay (fixed + jitter, each way, order
kept), a bandwidth cap, a cut (every connection closed at once) or a black
hole (connections stay open but nothing moves, new ones hang, until heal()),
or a change to the bytes going to the client (tamper: a corrupted frame).
test_cluster.py partitions an edge with it. A NATS server tells its clients
the other cluster members' addresses, so a cluster behind this proxy needs
`no_advertise: true` in its cluster block, or the client goes around it."""
import collections
import random
import re
import socket
import threading
import time


class _Pipe:
    """One direction of one connection: a reader that stamps each chunk and
    a writer that sends it when its delay has passed, at the capped rate."""

    def __init__(self, proxy, src, dst, downstream=False):
        self.proxy, self.src, self.dst, self.downstream = proxy, src, dst, downstream
        self.queue = collections.deque()
        self.cond = threading.Condition()
        self.closed = False
        self.due = 0.0  # when the last chunk queued is due: jitter never reorders
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=self.write, daemon=True).start()

    def read(self):
        try:
            while True:
                self.proxy.wait_open()
                data = self.src.recv(65536)
                if not data:
                    break
                p = self.proxy
                if self.downstream and p.tamper:
                    data = p.tamper(data) or data
                due = max(self.due, time.monotonic() + p.delay + random.uniform(-p.jitter, p.jitter))
                self.due = due
                with self.cond:
                    self.queue.append((due, data))
                    self.cond.notify()
        except OSError:
            pass
        with self.cond:
            self.closed = True
            self.cond.notify()

    def write(self):
        try:
            while True:
                with self.cond:
                    while not self.queue and not self.closed:
                        self.cond.wait(0.5)
                    if not self.queue:
                        break
                    due, data = self.queue.popleft()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                self.proxy.wait_open()
                rate = self.proxy.rate
                step = max(1, rate // 50) if rate else len(data)  # ~20 ms slices under a cap
                for i in range(0, len(data), step):
                    self.dst.sendall(data[i:i + step])
                    if rate:
                        time.sleep(min(step, len(data) - i) / rate)
        except OSError:
            pass
        for s in (self.src, self.dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class FaultProxy:
    """Listens on 127.0.0.1:<port> and forwards to 127.0.0.1:<upstream>."""

    def __init__(self, upstream, host="127.0.0.1"):
        self.upstream = (host, upstream)
        self.delay = self.jitter = 0.0
        self.rate = 0  # bytes per second each way; 0 = no cap
        # Called with each chunk read from the upstream (server to client);
        # returns the bytes to forward instead, or None to keep them.
        self.tamper = None
        self.open = threading.Event()
        self.open.set()
        self.conns = []
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def wait_open(self):
        while not self.open.wait(0.2):
            pass

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self.connect, args=(client,), daemon=True).start()

    def connect(self, client):
        self.wait_open()  # a black hole: the client's connect hangs, as across a partition
        try:
            server = socket.create_connection(self.upstream, timeout=5)
            server.settimeout(None)
        except OSError:
            client.close()
            return
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            self.conns.append((client, server))
        _Pipe(self, client, server)
        _Pipe(self, server, client, downstream=True)

    def set_delay(self, fixed_s, jitter_s=0.0):
        """Each chunk waits fixed_s +- jitter_s (uniform) each way."""
        self.delay, self.jitter = fixed_s, min(jitter_s, fixed_s)

    def set_bandwidth(self, bytes_per_s):
        self.rate = int(bytes_per_s)

    def blackhole(self):
        """Nothing moves and nothing closes: a partition."""
        self.open.clear()

    def heal(self):
        self.open.set()

    def cut(self):
        """Closes every connection now (a reset); new ones still work."""
        with self.lock:
            conns, self.conns = self.conns, []
        for pair in conns:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self):
        self.heal()
        self.listener.close()
        self.cut()


PRICE = re.compile(rb'":\[(\d+),')


def price_flipper(proxy, flipped):
    """A tamper function: one price digit of the first odds: frame it sees
    changed (0-9 -> the next digit), once; the price's text goes into
    `flipped` and the proxy's tamper is cleared."""
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
    return flip
