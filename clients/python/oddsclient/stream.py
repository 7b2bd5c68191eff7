"""The client's stream loop: one /pt-ws connection at a time, applying its
frames into a replica.State one group at a time, and the state machine of
docs/clients.md:

  connecting -> syncing -> live -> stale -> resyncing

- connecting: opening a connection (the first, or after a cut: with
  resume=<epoch>:<seq> when it holds a replica);
- syncing: a snapshot is arriving; the replica is replaced at its last
  frame (the ready INFO counts them) or at the INFO that closes it;
- live: at an INFO boundary, verified when verify=1;
- stale: two ping intervals with neither a frame nor a ping: the prices
  may be old (a half-open connection); it reconnects;
- resyncing: the replica was found wrong (a gap, a refused resume, a bad
  frame, a digest mismatch) and a fresh snapshot is asked for.

A group's frames are held until its INFO and applied together, so the
replica (and view()) is always a state the server had at one seq."""
import asyncio
import json
import random
import time
import urllib.parse

import websockets
import websockets.exceptions
from websockets.legacy.client import WebSocketClientProtocol

from . import backoff
from .replica import BadFrame, State

SEP = "\x1f"


class _Stamped(WebSocketClientProtocol):
    """Notes when the last frame of any kind (pings included) arrived."""

    last_frame = 0.0

    async def read_frame(self, max_size):
        frame = await super().read_frame(max_size)
        self.last_frame = time.monotonic()
        return frame


class _Resync(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def stream_url(url, key, events=None, markets=None, sports=None, conflate_ms=None, verify=False):
    """The /pt-ws URL for an http(s):// or ws(s):// base URL and the filters."""
    u = urllib.parse.urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(u.scheme, u.scheme)
    q = {"api_key": key, "protocol": "v2"}
    for name, v in (("events", events), ("markets", markets), ("sports", sports)):
        if v:
            q[name] = v if isinstance(v, str) else ",".join(map(str, v))
    if conflate_ms:
        q["conflate_ms"] = str(conflate_ms)
    if verify:
        q["verify"] = "1"
    return urllib.parse.urlunsplit((scheme, u.netloc, "/pt-ws", urllib.parse.urlencode(q, safe=",:"), ""))


class Replica:
    """async with Replica(url, key, ...) as r: async for group in r: ... r.view()

    Each group is a dict: seq, epoch, events (ids changed), markets
    ([event number, market id] changed), verified (its digest was checked),
    resync (the reason, on the first group after a resync). `on_event` is
    called with each state change ({"state": ..., "epoch", "seq",
    "verified"}) and each resync ({"resync": reason, "seq"})."""

    def __init__(self, url, key, events=None, markets=None, sports=None, conflate_ms=None, compress=False,
                 verify=False, ping_interval=30.0, on_event=None, rng=None):
        self.url = stream_url(url, key, events, markets, sports, conflate_ms, verify)
        self.compress, self.verify = compress, verify
        self.ping_interval = ping_interval
        self.on_event = on_event or (lambda e: None)
        self._random = (rng or random.Random()).random
        self.state_name = "connecting"
        self.epoch, self.seq = None, None  # the replica's position (None: no replica yet)
        self.replica = State()
        self.verified = False
        self.resyncs = []
        self.groups = 0
        self._ws = None
        self._attempt = 0
        self._resume = True
        self._pending_resync = None
        self._stopping = False
        self._need_ready = True  # the connection's first frame is its ready INFO
        self._snapshot = False  # the frames until the next INFO hold a snapshot
        self._snapshot_frames = None  # how many, when the ready INFO said
        self._snapshot_digest = None  # and the view's digest once applied (verify=1)
        self._chain = None  # the seq the next INFO's `from` follows
        self._epoch = None  # the epoch of the connection's ready INFO

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        self._stopping = True
        if self._ws is not None:
            await self._ws.close()

    def stop(self):
        """From a signal handler or another task: the iteration ends (the
        replica stays at its last INFO)."""
        self._stopping = True
        if self._ws is not None:
            asyncio.ensure_future(self._ws.close())

    def view(self):
        """The replica as /v1/odds `data` ({event id: {market id: market}}),
        at the last INFO applied."""
        return self.replica.data()

    def digest(self):
        return self.replica.hex()

    def _set_state(self, name):
        if name == self.state_name:
            return
        self.state_name = name
        self.on_event({"state": name, "epoch": self._epoch or self.epoch, "seq": self.seq, "verified": self.verified})

    def _resync(self, reason):
        self.resyncs.append(reason)
        self._pending_resync = reason
        self.on_event({"resync": reason, "seq": self.seq})
        self._resume = False
        self.verified = False
        self._set_state("resyncing")

    def __aiter__(self):
        return self

    async def __anext__(self):
        while not self._stopping:
            if self._ws is None:
                if not await self._connect():
                    continue
            try:
                group = await self._next_group()
            except _Resync as r:
                self._resync(r.reason)
                await self._drop()
                continue
            except (websockets.exceptions.ConnectionClosed, OSError, asyncio.TimeoutError):
                await self._drop()
                if not self._stopping and self.state_name not in ("stale", "resyncing"):
                    self._set_state("connecting")
                continue
            if group is not None:
                return group
        raise StopAsyncIteration

    async def _drop(self):
        ws, self._ws = self._ws, None
        if ws is not None and ws.transport is not None:
            ws.transport.abort()  # no close handshake with a peer that may be gone

    async def _connect(self):
        if self.state_name not in ("resyncing", "stale"):
            self._set_state("connecting")
        if self._attempt:
            await asyncio.sleep(backoff.delay(self._attempt - 1, self._random))
        self._attempt += 1
        url = self.url
        if self._resume and self.seq is not None:
            url += f"&resume={self.epoch}:{self.seq}"
        try:
            self._ws = await asyncio.wait_for(websockets.connect(
                url, max_size=None, max_queue=None, ping_interval=None, create_protocol=_Stamped,
                compression="deflate" if self.compress else None), 10)
        except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException):
            self._ws = None
            return False
        self._ws.last_frame = time.monotonic()
        self._need_ready = True
        return True

    async def _recv(self):
        """The next message; stale after two ping intervals without any frame."""
        ws = self._ws
        while True:
            left = ws.last_frame + 2 * self.ping_interval - time.monotonic()
            if left <= 0:
                self._set_state("stale")
                raise asyncio.TimeoutError()
            try:
                return await asyncio.wait_for(ws.recv(), left)
            except asyncio.TimeoutError:
                continue  # a ping may have come meanwhile: recheck

    @staticmethod
    def _split(msg):
        if not isinstance(msg, str):
            raise _Resync("bad_frame")
        try:
            t, ch, body = msg.split(SEP, 2)
            return t, ch, json.loads(body)
        except ValueError:
            raise _Resync("bad_frame") from None

    async def _next_group(self):
        """Reads frames up to the next INFO that closes a group and applies
        them, all at once; returns the group. A snapshot whose frames the
        ready INFO counted closes at its last frame."""
        if self._need_ready:
            await self._read_ready()
            if self._snapshot and self._snapshot_frames == 0:
                return self._close_snapshot([])
        pending = []
        while True:
            t, ch, body = self._split(await self._recv())
            if t != "INFO":
                pending.append((ch, body))
                if self._snapshot and self._snapshot_frames == len(pending):
                    return self._close_snapshot(pending)
                continue
            if not isinstance(body, dict) or "seq" not in body or "from" not in body:
                raise _Resync("bad_frame")
            if body["from"] != self._chain + 1:
                raise _Resync("gap")
            self._snapshot_frames = None  # an INFO first: it closes the snapshot, as it always did
            return self._apply(pending, body["seq"], body.get("digest"))

    def _close_snapshot(self, pending):
        """The counted snapshot, applied at the ready INFO's seq."""
        self._snapshot_frames = None
        return self._apply(pending, self._chain, self._snapshot_digest)

    def _apply(self, pending, seq, digest):
        """A group's frames, applied at `seq` (a snapshot into a fresh
        replica), then checked against the server's digest if it sent one."""
        state = State() if self._snapshot else self.replica
        events, markets = set(), set()
        try:
            for c, b in pending:
                state.apply(c, b, events, markets)
        except BadFrame:
            raise _Resync("bad_frame") from None
        self.replica, self.seq, self.epoch = state, seq, self._epoch
        self._chain, self._snapshot = seq, False
        verified = False
        if digest is not None:
            if digest != state.hex():
                raise _Resync("digest_mismatch")
            verified = True
        self.verified = verified
        self.groups += 1
        self._set_state("live")
        group = {"seq": self.seq, "epoch": self.epoch, "events": sorted(events),
                 "markets": sorted([n, m] for n, m in markets), "verified": verified}
        if self._pending_resync:
            group["resync"], self._pending_resync = self._pending_resync, None
        return group

    async def _read_ready(self):
        t, ch, ready = self._split(await self._recv())
        if t != "INFO" or not isinstance(ready, dict):
            raise _Resync("bad_frame")
        if "error" in ready:  # over the key's stream limit: a cut, retried with backoff
            raise OSError(ready["error"])
        if not ready.get("ready"):
            raise _Resync("bad_frame")
        self._need_ready = False
        self._attempt = 0
        self._resume = True
        resumed = ready.get("resumed")
        if resumed is False and self.seq is not None and self.state_name != "resyncing":
            self._resync(f"resume_refused:{ready.get('reason', '')}")
        if resumed:
            self._snapshot, self._chain, self._epoch = False, self.seq, self.epoch
            self._snapshot_frames = None
            self._set_state("live")
        else:
            self._snapshot, self._chain, self._epoch = True, ready["seq"], ready["epoch"]
            # An older server does not count its snapshot: the next INFO closes it.
            self._snapshot_frames, self._snapshot_digest = ready.get("frames"), ready.get("digest")
            self._set_state("syncing")
