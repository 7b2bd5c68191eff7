"""python3 -m oddsclient follow --url http://HOST:PORT --key KEY [--events ..]
[--markets ..] [--sports ..] [--conflate-ms N] [--compress] [--verify]
[--duration S] [--out FILE]

Follows one /pt-ws stream into a replica: one JSON line on stdout per state
change and per resync, a progress line on stderr every few seconds, and at
exit (--duration, SIGINT, SIGTERM) --out: {"epoch","seq","digest","data"},
the /v1/odds `data` shape of the replica and its digest by the REST formula
(docs/clients.md)."""
import argparse
import asyncio
import json
import signal
import sys

from .digest import hex16, odds_digest
from .replica import number_of
from .stream import Replica


def parse(argv):
    p = argparse.ArgumentParser(prog="oddsclient")
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("follow", help="follow a /pt-ws stream into a replica")
    f.add_argument("--url", required=True, help="the server, http://HOST:PORT")
    f.add_argument("--key", required=True)
    f.add_argument("--events", help="event ids, comma-separated")
    f.add_argument("--markets", help="market ids, comma-separated")
    f.add_argument("--sports", help="sport ids, comma-separated")
    f.add_argument("--conflate-ms", type=int, default=0)
    f.add_argument("--compress", action="store_true", help="offer permessage-deflate")
    f.add_argument("--verify", action="store_true", help="verify=1: check each INFO's digest")
    f.add_argument("--duration", type=float, default=0, help="seconds, then exit (0: until a signal)")
    f.add_argument("--out", help="write the replica here at exit")
    f.add_argument("--progress", type=float, default=5.0, help="seconds between progress lines on stderr (0: none)")
    f.add_argument("--ping-interval", type=float, default=30.0,
                   help="the server's --ws-ping in seconds: stale after two without a frame")
    return p.parse_args(argv)


def emit(line):
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


async def follow(a):
    r = Replica(a.url, a.key, events=a.events, markets=a.markets, sports=a.sports, conflate_ms=a.conflate_ms,
                compress=a.compress, verify=a.verify, ping_interval=a.ping_interval, on_event=emit)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, r.stop)
    if a.duration:
        loop.call_later(a.duration, r.stop)

    async def progress():
        while True:
            await asyncio.sleep(a.progress)
            print(f"oddsclient: {r.state_name} seq {r.seq} groups {r.groups} events {len(r.replica.events)} "
                  f"resyncs {len(r.resyncs)}", file=sys.stderr, flush=True)
    # --progress 0: no progress line (a sleep(0) loop would spin a core).
    ticker = asyncio.create_task(progress()) if a.progress > 0 else None
    async with r:
        async for _ in r:
            pass
    if ticker:
        ticker.cancel()
    if a.out:
        data = r.view()
        out = {"epoch": r.epoch, "seq": r.seq, "digest": hex16(odds_digest(data, number_of)), "data": data}
        with open(a.out, "w") as f:
            json.dump(out, f, sort_keys=True)
    return 0


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    return asyncio.run(follow(a))


if __name__ == "__main__":
    sys.exit(main())
