"""A TCP proxy of the tests' own, put between a node and one bus server to
make the network misbehave on loopback: delay (fixed + jitter, each way, order
kept), a bandwidth cap, a cut (every connection closed at once) or a black
hole (connections stay open but nothing moves, new ones hang, until heal()),
or a change to the bytes going to the client (tamper: a corrupted frame;
DeflateFlipper: the same inside a compressed WebSocket message).
test_cluster.py partitions an edge with it. A NATS server tells its clients
the other cluster members' addresses, so a cluster behind this proxy needs
`no_advertise: true` in its cluster block, or the client goes around it."""
import collections
import random
import re
import socket
import struct
import threading
import time
import zlib


class _Pipe:
    """One direction of one connection: a reader that stamps each chunk and
    a writer that sends it when its delay has passed, at the capped rate."""

    def __init__(self, proxy, src, dst, downstream=False):
        self.proxy, self.src, self.dst, self.downstream = proxy, src, dst, downstream
        self.queue = collections.deque()
        self.cond = threading.Condition()
        self.closed = False
        self.due = 0.0  # when the last chunk queued is due: jitter never reorders
        # Per connection, server to client: a filter that follows the stream
        # from its first byte (proxy.connection_filter, a factory).
        self.filter = proxy.connection_filter() if downstream and proxy.connection_filter else None
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
                if self.filter:
                    data = self.filter(data)
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
        # Makes, for each new connection, a function of each chunk from the
        # upstream returning the bytes to forward (e.g. DeflateFlipper).
        self.connection_filter = None
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


def flip_price_digit(data):
    """`data` with one price digit of its first odds: frame changed (0-9 ->
    the next digit), and the price's text; None when it holds none."""
    i = data.find(b"\x1fodds:")
    j = data.find(b"\x1f", i + 1) if i >= 0 else -1
    m = PRICE.search(data, j + 1) if j >= 0 else None
    if not m or b"\x1f" in data[j + 1:m.start()]:
        return None
    k = m.end(1) - 1
    return data[:k] + bytes([ord("0") + (data[k] - ord("0") + 1) % 10]) + data[k + 1:], data[m.start(1):m.end(1)]


def price_flipper(proxy, flipped):
    """A tamper function: one price digit of the first odds: frame it sees
    changed, once; the price's text goes into `flipped` and the proxy's
    tamper is cleared."""
    def flip(data):
        done = None if flipped else flip_price_digit(data)
        if not done:
            return None
        flipped.append(done[1])
        proxy.tamper = None
        return done[0]
    return flip


class DeflateFlipper:
    """A connection filter for permessage-deflate streams, whose odds: text
    a byte tamper cannot see: it follows the server's WebSocket frames
    from the 101 on and, once armed (`arm(flipped)`), flips one price digit
    in the first compressed odds: message that arrives whole within one
    chunk: inflated, changed, deflated again and re-framed. The server
    compresses each message on its own (server_no_context_takeover), so
    one message can be replaced without touching the others."""

    def __init__(self):
        self.flipped = None  # armed: the list the flipped price goes to

    def arm(self, flipped):
        self.flipped = flipped

    def __call__(self):
        state = {"header": True, "skip": 0, "carry": b""}
        return lambda data: self._filter(state, data)

    def _filter(self, st, data):
        pos = 0
        if st["header"]:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                return data
            st["header"], pos = False, end + 4
        out = [data[:pos]]
        buf = st["carry"] + data[pos:]
        base = len(st["carry"])  # buf[base:] is this chunk's; carried bytes were forwarded already
        st["carry"] = b""
        i = min(st["skip"], len(buf))
        st["skip"] -= i
        out.append(buf[base:max(base, i)])
        while i < len(buf):
            head = frame_header(buf, i)
            if head is None:  # a header split across chunks: parsed with the next one
                st["carry"] = buf[i:]
                out.append(buf[max(base, i):])
                break
            hlen, plen, rsv1 = head
            end = i + hlen + plen
            frame = buf[i:min(end, len(buf))]
            if end <= len(buf) and i >= base and rsv1 and self.flipped is not None and not self.flipped:
                frame = self._flip(frame, hlen) or frame
            out.append(frame[max(0, base - i):] if i < base else frame)
            st["skip"] = max(0, end - len(buf))
            i = end
        return b"".join(out)

    def _flip(self, frame, hlen):
        text = zlib.decompressobj(-15).decompress(frame[hlen:] + b"\x00\x00\xff\xff")
        done = flip_price_digit(text) if text.startswith(b"P\x1fodds:") else None
        if not done:
            return None
        self.flipped.append(done[1])
        c = zlib.compressobj(wbits=-15)
        payload = (c.compress(done[0]) + c.flush(zlib.Z_SYNC_FLUSH))[:-4]
        n = len(payload)
        size = bytes([n]) if n < 126 else (bytes([126]) + struct.pack(">H", n) if n < 65536
                                           else bytes([127]) + struct.pack(">Q", n))
        return bytes([frame[0]]) + size + payload


def frame_header(buf, i):
    """(header length, payload length, RSV1) of the unmasked frame at buf[i], or None if cut short."""
    if len(buf) - i < 2:
        return None
    n, hlen = buf[i + 1] & 0x7F, 2
    if n == 126:
        if len(buf) - i < 4:
            return None
        n, hlen = struct.unpack_from(">H", buf, i + 2)[0], 4
    elif n == 127:
        if len(buf) - i < 10:
            return None
        n, hlen = struct.unpack_from(">Q", buf, i + 2)[0], 10
    return hlen, n, bool(buf[i] & 0x40)
