"""permessage-deflate (RFC 7692) on /pt-ws and /ws with real clients.

Python websockets with compression (its default) and without
(compression=None), both connected before a replayed feed starts, receive
the same frame texts and rebuild the state REST serves at the last INFO;
the compressed one receives at most half the bytes on the wire, counted by
a TCP proxy in front of each. A deflate bomb is closed with 1009, a
compressed client message is inflated, RSV1 without the extension is a
protocol error, `--ws-compression off` negotiates nothing, and Node's ws
with perMessageDeflate reads and parses every frame."""
import asyncio
import json
import os
import struct
import subprocess
import threading
import zlib

import websockets

import harness as h
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, StreamState, apply_frame
from wsraw import RawWs

OFFER = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
ANSWER = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"


def deflate(data):
    """A client's compressed message: raw DEFLATE, sync flush, tail removed."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = z.compress(data) + z.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


class CountingProxy:
    """A loopback TCP proxy in front of the server that counts the bytes
    the server sends the client."""

    def __init__(self, port):
        self.target, self.down = port, 0

    async def start(self):
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def serve(self, cr, cw):
        sr, sw = await asyncio.open_connection("127.0.0.1", self.target)

        async def pump(r, w, count):
            while data := await r.read(65536):
                if count:
                    self.down += len(data)
                w.write(data)
                await w.drain()
            w.close()

        await asyncio.gather(pump(cr, sw, False), pump(sr, cw, True), return_exceptions=True)


class Compression(StreamState):
    def make_feed(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        rc, out, err = h.run([h.binary("oddsfeed"), "gen", "-o", feed, "--records", "8000",
                              "--sim", "seed=7,events=40,rate=400"])
        self.assertEqual(rc, 0, err)
        with open(feed) as f:
            lines = [l for l in f if l.startswith('{"at"')]
        last_at = max(json.loads(l)["at"] for l in lines)
        end = dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)
        return "".join(lines) + json.dumps(end) + "\n", end["at"]

    def test_compressed_and_plain_clients_get_the_same_frames_for_half_the_bytes(self):
        records, end_at = self.make_feed()
        fifo = os.path.join(self.dir, "feed.fifo")
        os.mkfifo(fifo)
        # 30x: larger groups, as W1 has. A sanitized build beside other tests
        # replays at 10x: a paced replay that falls behind releases what is
        # due at once, and an ASan suite once sent the whole feed as 224
        # frames (4,900 alone, 2,600-3,400 beside three busy loops).
        speed = 10 if h.sanitized() else 30
        with h.Server("--feed", f"replay:{fifo},speed={speed}", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")

            def write_feed():  # once both clients stand at seq 0; EOF ends the replay
                with open(fifo, "w") as f:
                    f.write(records)

            async def follow(ws, started):
                frames, events, odds = [], {}, {}
                t, ch, ready = h.split_frame(await ws.recv())
                self.assertTrue(ready["ready"])
                seq = ready["seq"]
                started.set()
                while True:
                    text = await asyncio.wait_for(ws.recv(), 60)
                    frames.append(text)
                    t, ch, body = h.split_frame(text)
                    if t == "INFO":
                        self.assertEqual(body["from"], seq + 1, "a batch is missing")
                        self.assertNotIn("conflated", body)
                        seq = body["seq"]
                        if body["at"] == end_at:
                            return frames, events, odds
                    else:
                        apply_frame(events, odds, ch, body, self)

            async def main():
                proxies = [CountingProxy(srv.port), CountingProxy(srv.port)]
                for p in proxies:
                    await p.start()
                url = "ws://127.0.0.1:{}/pt-ws?api_key=" + KEY + "&protocol=v2"
                async with websockets.connect(url.format(proxies[0].port), max_size=None, max_queue=None) as z, \
                        websockets.connect(url.format(proxies[1].port), max_size=None, max_queue=None,
                                           compression=None) as plain:
                    self.assertEqual(z.response_headers.get("Sec-WebSocket-Extensions"), ANSWER)
                    self.assertIsNone(plain.response_headers.get("Sec-WebSocket-Extensions"))
                    started = [asyncio.Event(), asyncio.Event()]
                    tasks = [asyncio.create_task(follow(z, started[0])), asyncio.create_task(follow(plain, started[1]))]
                    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in started)), 30)
                    writer = threading.Thread(target=write_feed, daemon=True)
                    writer.start()
                    got = await asyncio.gather(*tasks)
                    writer.join(60)
                return got, [p.down for p in proxies]

            (zg, pg), (zbytes, pbytes) = asyncio.run(main())
            self.assertGreater(len(pg[0]), 1000)
            self.assertEqual(zg[0], pg[0], "the compressed client got other frames")
            for frames, events, odds in (zg, pg):
                self.assert_rest_state(srv.port, events, odds)
            status = h.wait_status(srv.port, KEY, lambda s: s["relay"]["frames_deflated"] > 0, "a compressed frame")
            self.assertEqual(status["relay"]["deflate_negotiated"], 1)
            ratio = zbytes / pbytes
            print(f"  {len(pg[0])} frames: compressed {zbytes} bytes, plain {pbytes} bytes, ratio {ratio:.3f}")
            self.assertLessEqual(ratio, 0.5)


class Misbehaviour(StreamState):
    def test_bomb_inflation_rsv1_node_and_off(self):
        with h.Server("--feed", "sim:rate=300", "--keys", self.keys, "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            # A deflate bomb: 60 KiB on the wire, 16 MiB inflated.
            c = RawWs(srv.port, f"/ws?api_key={KEY}", headers=OFFER)
            self.assertIn("Sec-WebSocket-Extensions: " + ANSWER, c.head)
            bomb = deflate(b" " * (16 << 20))
            self.assertLess(len(bomb), 64 << 10)
            c.send_frame(1, bomb, rsv=0x40)
            code, reason, _ = c.until_close()
            self.assertEqual(code, 1009, reason)
            c.close()
            # A compressed message is inflated and answered.
            c = RawWs(srv.port, f"/ws?api_key={KEY}", headers=OFFER)
            c.send_frame(1, deflate(b'{"subscribe":{"event_id":"no-such-event"}}'), rsv=0x40)
            for _ in range(50):  # the snapshot (compressed), then the answer (small: plain)
                op, p = c.recv_frame()
                if op == 1 and p.startswith(b'{"error"'):
                    break
            else:
                self.fail("no answer to the compressed message")
            c.close()
            # RSV1 without the extension is a protocol error.
            c = RawWs(srv.port, f"/pt-ws?api_key={KEY}")
            self.assertNotIn("Sec-WebSocket-Extensions", c.head)
            c.send_frame(1, deflate(b"hello"), rsv=0x40)
            self.assertEqual(c.until_close()[0], 1002)
            c.close()
            # Node's ws with perMessageDeflate.
            node = os.path.join(os.path.dirname(__file__), "node")
            p = subprocess.run(["node", os.path.join(node, "deflate_client.mjs"), str(srv.port), KEY],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith("node ws deflate: ok"), p.stdout)
            self.assertGreater(h.wait_status(srv.port, KEY, lambda s: True, "status")["relay"]["frames_deflated"], 0)

        with h.Server("--feed", "sim:rate=300", "--keys", self.keys, "--progress", "0",
                      "--ws-compression", "off") as srv:
            srv.wait_for(r"serving http://")

            async def offered():
                url = f"ws://127.0.0.1:{srv.port}/pt-ws?api_key={KEY}&protocol=v2"
                async with websockets.connect(url, max_size=None, max_queue=None) as ws:
                    for _ in range(30):
                        await ws.recv()  # an RSV1 frame would fail here: nothing was negotiated
                    return ws.response_headers.get("Sec-WebSocket-Extensions")

            self.assertIsNone(asyncio.run(offered()))
            c = RawWs(srv.port, f"/pt-ws?api_key={KEY}", headers=OFFER)
            self.assertNotIn("Sec-WebSocket-Extensions", c.head)
            c.close()
            relay = h.wait_status(srv.port, KEY, lambda s: True, "status")["relay"]
            self.assertEqual((relay["deflate_negotiated"], relay["frames_deflated"]), (0, 0))


if __name__ == "__main__":
    h.main()
