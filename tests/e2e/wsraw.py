"""A minimal WebSocket client on a plain socket, for what a well-behaved
library will not do: never answer pings, send unmasked or invalid frames,
stop reading. Written from RFC 6455 for the tests; the conformance checks
use real clients (Python websockets, Node ws)."""
import base64
import os
import socket
import struct
import time


class RawWs:
    def __init__(self, port, path, rcvbuf=None, timeout=10, headers=""):
        self.s = socket.socket()
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.settimeout(timeout)
        self.s.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{headers}\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed during handshake: %r" % self.buf)
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ")[1])
        self.head = head.decode()

    def send_frame(self, opcode, payload, fin=True, mask=True, rsv=0):
        b0 = (0x80 if fin else 0) | rsv | opcode
        n = len(payload)
        if n < 126:
            hdr = struct.pack("!BB", b0, (0x80 if mask else 0) | n)
        elif n < 65536:
            hdr = struct.pack("!BBH", b0, (0x80 if mask else 0) | 126, n)
        else:
            hdr = struct.pack("!BBQ", b0, (0x80 if mask else 0) | 127, n)
        if mask:
            m = os.urandom(4)
            payload = bytes(c ^ m[i % 4] for i, c in enumerate(payload))
            hdr += m
        self.s.sendall(hdr + payload)

    def _fill(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk

    def recv_frame(self):
        """(opcode, payload bytes); raises ConnectionError at EOF."""
        self._fill(2)
        b0, b1 = self.buf[0], self.buf[1]
        assert not (b1 & 0x80), "server frames must not be masked"
        n, off = b1 & 0x7F, 2
        if n == 126:
            self._fill(4)
            n, off = struct.unpack("!H", self.buf[2:4])[0], 4
        elif n == 127:
            self._fill(10)
            n, off = struct.unpack("!Q", self.buf[2:10])[0], 10
        self._fill(off + n)
        payload = self.buf[off:off + n]
        self.buf = self.buf[off + n:]
        return b0 & 0x0F, payload

    def until_close(self, timeout=10):
        """Reads until a close frame; returns (code, reason, frames seen before it)."""
        deadline = time.time() + timeout
        seen = []
        while time.time() < deadline:
            op, p = self.recv_frame()
            if op == 8:
                code = struct.unpack("!H", p[:2])[0] if len(p) >= 2 else None
                return code, p[2:].decode(), seen
            seen.append((op, p))
        raise AssertionError("no close frame within %ss" % timeout)

    def close(self):
        self.s.close()


def reset_after_first_frame(raws, hold=0.3):
    """Each stream's first frame read, then nothing more for `hold` seconds
    (the server's writes pile up unread), then every socket closed with a
    reset (SO_LINGER 0): peers that vanish mid-stream."""
    for r in raws:
        r.recv_frame()
        r.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    time.sleep(hold)
    for r in raws:
        r.close()
