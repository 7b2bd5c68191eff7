#!/usr/bin/env python3
"""The capture the latency sweep's uWebSockets baseline replays
(perf/relay/run.sh, perf/relay/uws_server.js --replay): one /pt-ws
subscriber (Python websockets, no compression) on oddsrelay records, from
the first INFO after its connect snapshot, every frame with its arrival
time for SECONDS, one "<microseconds since the first frame>\t<frame>" line
each, so the replay has the same frames at their recorded pace: a frame's
time is its batch's publish by the server (`encoded_us` of the INFO closing
it), so this client's own lag does not shape the pace. Checks the
INFO chain (no gap) and prints one JSON line; exit 1 on a gap, a frame with
a newline, or nothing captured.
  capture.py PORT KEY SECONDS OUT"""
import asyncio
import json
import sys
import time

import websockets

port, key, seconds, out = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]


def fail(why, **extra):
    print(json.dumps({"ok": False, "why": why, **extra}))
    sys.exit(1)


async def capture():
    url = f"ws://127.0.0.1:{port}/pt-ws?api_key={key}&protocol=v2"
    lines, seq, t0, infos, batch, e0 = [], None, None, 0, [], None
    async with websockets.connect(url, max_size=None, max_queue=None, compression=None) as ws:
        deadline = time.monotonic() + seconds + 30
        while t0 is None or time.monotonic() - t0 < seconds:
            if time.monotonic() > deadline:
                fail("no INFO after the snapshot", seq=seq)
            frame = await ws.recv()
            now = time.monotonic()
            if frame.startswith("INFO\x1f"):
                body = json.loads(frame.split("\x1f", 2)[2])
                if body.get("ready"):
                    seq = body["seq"]
                    continue
                if seq is not None and body["from"] != seq + 1:
                    fail("a batch is missing", seq=seq, info=body)
                seq = body["seq"]
                if t0 is None:  # the snapshot is done: record from the next frame on
                    t0 = now
                    continue
                infos += 1
                e0 = body["encoded_us"] if e0 is None else e0
                at = body["encoded_us"] - e0
                lines += [f"{at}\t{f}\n" for f in batch + [frame]]
                batch = []
                continue
            if t0 is None:
                continue
            if "\n" in frame:
                fail("a frame with a newline")
            batch.append(frame)
    return lines, infos


def main():
    lines, infos = asyncio.run(capture())
    if not infos:
        fail("no INFO captured")
    with open(out, "w") as f:
        f.writelines(lines)
    print(json.dumps({"ok": True, "frames": len(lines), "infos": infos, "seconds": seconds}))


main()
