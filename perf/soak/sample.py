"""perf/soak sampler: every tenth of a second, the server's RSS (/proc), what its
state holds (/v1/status: events, the state estimate, the odds history's
memory and files) and its data dir's size, into a CSV; returns once
the replay is applied (the feed is done and seq stops moving). Stdlib only."""
import argparse
import http.client
import json
import os
import re
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--pid", type=int, required=True)
p.add_argument("--port", type=int, required=True)
p.add_argument("--key", required=True)
p.add_argument("--data-dir", required=True)
p.add_argument("--csv", required=True)
p.add_argument("--start-ms", type=int, required=True)
p.add_argument("--every", type=float, default=2)
a = p.parse_args()


def get(path):
    c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
    c.request("GET", path, headers={"X-API-Key": a.key})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200:
        raise RuntimeError(f"{path}: {r.status} {body[:200]!r}")
    return json.loads(body)


def rss_mb():
    with open(f"/proc/{a.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def dir_mb():
    """Every file, and the committed ones: the snapshot being written
    (snapshot-*.tmp) is the compaction sawtooth's largest part."""
    total = committed = 0
    try:
        for e in os.scandir(a.data_dir):
            try:
                n = e.stat().st_size
            except FileNotFoundError:  # compaction deleted it meanwhile
                continue
            total += n
            if not e.name.endswith(".tmp"):
                committed += n
    except FileNotFoundError:
        pass
    return total / 1e6, committed / 1e6


cols = ["wall_s", "feed_day", "seq", "rss_mb", "data_dir_mb", "held", "live", "prematch", "ended", "other",
        "evicted", "state_mb", "snapshots", "done", "committed_mb", "snapshot_mb", "snapshot_ms", "snapshot_copied",
        "history_mb", "history_points", "history_events", "history_files", "history_files_mb"]
t0 = time.time()
deadline = t0 + 3600
last_seq, stable = None, 0
with open(a.csv, "w") as out:
    out.write(",".join(cols) + "\n")
    while time.time() < deadline:
        if not os.path.exists(f"/proc/{a.pid}"):
            sys.exit("the server exited")
        try:
            st = get("/v1/status")
        except (OSError, RuntimeError) as e:  # not listening yet
            time.sleep(0.2)
            continue
        ev = st["events"]
        day = (st["feed_clock"] - a.start_ms) / 86400000 if st["feed_clock"] else 0
        total, committed = dir_mb()
        log = st.get("log") or {}
        # The odds history: its memory (engine/history, under --history-bytes)
        # and its files beside the journal, which the data dir's size
        # includes; zeros when it is off.
        hist = st.get("history") or {}
        row = [time.time() - t0, day, st["seq"], rss_mb(), total, ev["held"], ev["live"], ev["prematch"], ev["ended"],
               ev["other"], ev["evicted"], st["state_bytes"] / 1e6, log.get("snapshots", 0),
               int(st["feed"]["done"]), committed, log.get("last_snapshot_bytes", 0) / 1e6,
               log.get("last_snapshot_ms", 0), log.get("last_snapshot_copied", 0), hist.get("bytes", 0) / 1e6,
               hist.get("points", 0), hist.get("events", 0), hist.get("files", 0), hist.get("file_bytes", 0) / 1e6]
        out.write(",".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + "\n")
        out.flush()
        if st["feed"]["done"]:
            stable = stable + 1 if st["seq"] == last_seq else 0
            if stable >= 2:
                break
        last_seq = st["seq"]
        time.sleep(a.every)
    else:
        sys.exit("the replay did not finish within an hour")

# Fixtures created: the simulator numbers them 10,000,000 + 1, 2, ...; the
# newest is listed at the end.
newest = 0
for path in ("/v1/live", "/v1/prematch"):
    for group in get(path)["data"].values():
        for eid in group:
            newest = max(newest, int(re.split(r"[.-]", eid)[-1]))
with open(a.csv + ".fixtures", "w") as f:
    f.write(str(newest - 10_000_000) + "\n")
