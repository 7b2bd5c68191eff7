#!/usr/bin/env python3
"""The answer check of perf/relay/run.sh's shaped rows: one /pt-ws
subscriber (Python websockets) with the row's parameters applies every
frame as docs/api.md says a client does, checks the INFO chain (no gap) and
that no channel comes twice between two INFOs after the first (a conflated
stream's promise), and, once the replayed feed is done and its INFO has come, that
its state equals what REST serves at that seq (events of /v1/live and
/v1/prematch, odds of /v1/odds). Prints one JSON line; exit 1 if anything
differs or the deadline passes.
  stream_state.py PORT KEY QUERY DEADLINE_S"""
import asyncio
import json
import sys
import time
import urllib.request

import websockets

port, key, query, deadline_s = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])


def rest(path):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"X-API-Key": key})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def fail(why, **extra):
    print(json.dumps({"ok": False, "why": why, **extra}))
    sys.exit(1)


async def follow():
    events, odds = {}, {}
    seq, infos, channels, repeats = None, 0, set(), 0
    deadline = time.monotonic() + deadline_s
    url = f"ws://127.0.0.1:{port}/pt-ws?api_key={key}&protocol=v2&{query}"
    target, polled = None, 0.0
    async with websockets.connect(url, max_size=None, max_queue=None) as ws:
        while target is None or seq < target:
            if time.monotonic() > deadline:
                fail("deadline passed", seq=seq, target=target)
            try:
                frame = await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                frame = None
            if target is None and time.monotonic() - polled > 0.5:
                polled = time.monotonic()
                st = await asyncio.to_thread(rest, "/v1/status")
                if st["feed"]["done"]:
                    target = st["seq"]
            if frame is None:
                continue
            t, ch, text = frame.split("\x1f", 2)
            body = json.loads(text)
            if t == "INFO":
                if seq is not None and not body.get("ready") and body["from"] != seq + 1:
                    fail("a batch is missing", seq=seq, info=body)
                seq, infos, channels = body["seq"], infos + 1, set()
                continue
            # Between the ready INFO and the next, the connect snapshot comes too.
            if ch in channels and infos >= 2:
                repeats += 1
            channels.add(ch)
            kind, sport, *number = ch.split(":")
            if kind == "evt":
                for k, v in body.items():
                    if v is None:
                        events.pop(k, None)
                    else:
                        events[k] = v
            else:
                book = odds.setdefault(number[0], {})
                for m, lines in body.items():
                    if lines is None:
                        book.pop(m, None)
                    else:
                        book[m] = lines
    return events, odds, seq, infos, repeats


def main():
    events, odds, seq, infos, repeats = asyncio.run(follow())
    if "conflate_ms" in query and repeats:
        fail("a channel twice between two INFOs", repeats=repeats)
    listed = {k: v for p in ("/v1/live", "/v1/prematch") for evs in rest(p)["data"].values() for k, v in evs.items()}
    if events != listed:
        fail("events differ from REST", missing=len(set(listed) - set(events)), extra=len(set(events) - set(listed)))
    live = sorted(k for k, v in events.items() if v["live"])
    books = {}
    for i in range(0, len(live), 100):
        books.update(rest("/v1/odds?ids=" + ",".join(live[i:i + 100]))["data"])
    number = lambda k: k.rsplit(".", 1)[-1].rsplit("-", 1)[-1]
    differ = [k for k in live if odds.get(number(k), {}) != books.get(k, {})]
    if differ:
        fail("odds differ from REST", events=differ[:5], count=len(differ))
    if rest("/v1/status")["seq"] != seq:
        fail("the state moved after the feed was done")
    print(json.dumps({"ok": True, "seq": seq, "infos": infos, "events": len(events), "live_books": len(live)}))


main()
