"""perf/soak report: the figures from the CSV (flatness of RSS, data dir and
the odds history's memory and files over the last third, memory per retained ended event before the first
horizon, restart) and the chart (gnuplot, PNG)."""
import argparse
import csv
import shutil
import subprocess
import sys

p = argparse.ArgumentParser()
for k in ("csv", "png", "horizon", "digest", "restart-line", "history-line"):
    p.add_argument("--" + k, required=True)
for k in ("days", "t0", "t1", "t2", "ready", "seq", "dir-bytes", "rss-restart-kb", "rss-empty-kb", "held",
          "history-points", "history-points-restart", "history-ready", "history-bytes-restart"):
    p.add_argument("--" + k, type=float, required=True)
a = p.parse_args()

rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(a.csv))]
if len(rows) < 10:
    sys.exit("perf/soak: too few samples")
unit = {"d": 1, "h": 1 / 24, "m": 1 / 1440, "s": 1 / 86400}[a.horizon[-1]]
horizon_days = float(a.horizon[:-1]) * unit
fixtures = int(open(a.csv + ".fixtures").read())
end = rows[-1]


# The replay's last third; the samples after it (the feed done, the input
# queue of 65,536 parsed records drained, the server idle) are another
# regime, reported apart.
def flat(key):
    last = [r[key] for r in rows if r["feed_day"] >= 2 * end["feed_day"] / 3 and not r["done"]]
    mean = sum(last) / len(last)
    dev = max(abs(v - mean) for v in last) / mean * 100
    return mean, dev, len(last)


def slope(xs, ys):
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


# Before the first horizon nothing that ended has left: RSS against the
# number of ended events held is the memory one retained ended event costs.
early = [r for r in rows if 0.2 * horizon_days <= r["feed_day"] <= 0.95 * horizon_days]
per_event_rss = slope([r["ended"] for r in early], [r["rss_mb"] * 1e6 for r in early]) if len(early) > 3 else float("nan")
per_event_est = slope([r["ended"] for r in early], [r["state_mb"] * 1e6 for r in early]) if len(early) > 3 else float("nan")
rss_mean, rss_dev, n_rss = flat("rss_mb")


# The trend after the first horizon: a least-squares line against feed
# time, and the mean of each third. A leak shows as a slope; the compaction
# sawtooth and the in-flight queues of a max-speed replay only as spread.
after = [r for r in rows if r["feed_day"] >= horizon_days and not r["done"]]


def trend(key):
    days = [r["feed_day"] for r in after]
    vals = [r[key] for r in after]
    s = slope(days, vals)
    mean = sum(vals) / len(vals)
    span = end["feed_day"] - horizon_days
    cut = [horizon_days + span * k / 3 for k in range(4)]
    thirds = []
    for k in range(3):
        part = [r[key] for r in after if cut[k] <= r["feed_day"] < cut[k + 1] or (k == 2 and r["feed_day"] >= cut[3])]
        thirds.append(sum(part) / len(part) if part else float("nan"))
    return s, s * span / mean * 100, thirds


def show_trend(name, key):
    s, pct, thirds = trend(key)
    print(f"  {name}: {s:+.2f} MB a feed day ({pct:+.1f}% over the {end['feed_day'] - horizon_days:.0f} days after the "
          f"first horizon); means by third {thirds[0]:.1f} / {thirds[1]:.1f} / {thirds[2]:.1f} MB")

dir_mean, dir_dev, _ = flat("data_dir_mb")
com_mean, com_dev, _ = flat("committed_mb")
peak_dir = max(r["data_dir_mb"] for r in rows if r["feed_day"] >= horizon_days)
replay_s = a.t1 - a.t0
restart_ms = (a.ready - a.t2) * 1000
peak_rss = max(r["rss_mb"] for r in rows)
idle_rss = rows[-1]["rss_mb"]
print(f"feed: {end['feed_day']:.1f} days of feed time, {int(a.seq):,} records, {fixtures:,} fixtures created; "
      f"replayed in {replay_s:.0f} s ({a.seq / replay_s:,.0f} records/s)")
print(f"held at the end: {int(end['held'])} events ({int(end['live'])} live, {int(end['prematch'])} pre-match, "
      f"{int(end['ended'])} ended, {int(end['other'])} other); evicted {int(end['evicted']):,}; "
      f"state estimate {end['state_mb']:.1f} MB")
print(f"RSS: last third mean {rss_mean:.1f} MB, max deviation {rss_dev:.1f}% over {n_rss} samples "
      f"({'flat' if rss_dev <= 10 else 'NOT flat'}); peak {peak_rss:.1f} MB; idle after the replay {idle_rss:.1f} MB")
print(f"data dir, committed (snapshots + journal): last third mean {com_mean:.1f} MB, max deviation {com_dev:.1f}% "
      f"({'flat' if com_dev <= 10 else 'NOT flat'})")
print(f"data dir, with the snapshot being written: last third mean {dir_mean:.1f} MB, max deviation {dir_dev:.1f}% "
      f"(besides the committed files, the snapshot being written: 0 to one snapshot); peak after the first horizon "
      f"{peak_dir:.1f} MB; {a.dir_bytes / 1e6:.1f} MB at the end")
# Compaction in the last third: cycles, the time a snapshot took, the
# share of its lines copied from the one before (engine/storage).
last = [r for r in rows if r["feed_day"] >= 2 * end["feed_day"] / 3 and not r["done"]]
if last and "snapshot_ms" in last[0]:
    cycles = {}
    for r in last:
        cycles.setdefault(r["snapshots"], r)
    snaps = list(cycles.values())[1:]
    if snaps:
        ms = sum(r["snapshot_ms"] for r in snaps) / len(snaps)
        mb = sum(r["snapshot_mb"] for r in snaps) / len(snaps)
        copied = sum(r["snapshot_copied"] / max(r["held"], 1) for r in snaps) / len(snaps) * 100
        secs = last[-1]["wall_s"] - last[0]["wall_s"]
        print(f"compaction in the last third: {len(snaps)} snapshots in {secs:.0f} s, {mb:.1f} MB each, written in "
              f"{ms:.0f} ms on average, {copied:.0f}% of their lines copied from the one before; "
              f"{len(last) / len(snaps):.1f} samples a cycle")
# The odds history (engine/history) is evicted with its events at the same
# horizon: its memory and its files must level off as the state does.
if end.get("history_points", 0) > 0:
    hm_mean, hm_dev, _ = flat("history_mb")
    hf_mean, hf_dev, _ = flat("history_files_mb")
    hp_mean, hp_dev, _ = flat("history_points")
    print(f"odds history in memory: last third mean {hm_mean:.1f} MB, max deviation {hm_dev:.1f}% "
          f"({'flat' if hm_dev <= 10 else 'NOT flat'}); {hp_mean:,.0f} points on average (max deviation {hp_dev:.1f}%), "
          f"{hm_mean * 1e6 / hp_mean:.1f} bytes a point")
    print(f"odds history files: last third mean {hf_mean:.1f} MB, max deviation {hf_dev:.1f}% "
          f"({'flat' if hf_dev <= 10 else 'NOT flat'}); {int(end['history_files'])} files at the end; "
          f"{hf_mean * 1e6 / hp_mean:.1f} bytes a point held")
    # Memory cut the oldest points past --history-bytes (to 7/8 of it); the
    # files kept them, so a restart that rebuilds from the files and cuts
    # again for the bound holds more, or fewer only when its cut fell at
    # another place of the sawtooth: then memory is at the cut's level.
    before, after_restart = int(a.history_points), int(a.history_points_restart)
    bound = 256 << 20  # the server's default --history-bytes, which the soak keeps
    at_cut = a.history_bytes_restart >= bound * 7 / 8 * 0.95
    verdict = ("equal" if after_restart == before else
               "more: the files kept points the memory bound had cut" if after_restart > before else
               f"fewer: rebuilt to the bound's cut, {a.history_bytes_restart / 2**20:.0f} MB of {bound >> 20}; "
               "the files hold the rest" if at_cut else "FEWER: points lost")
    print(f"odds history across the restart: {before:,} points before the stop, {after_restart:,} after ({verdict})")
else:
    print("odds history: off")
print("trend after the first horizon:")
show_trend("RSS", "rss_mb")
show_trend("data dir, committed", "committed_mb")
show_trend("data dir, all files", "data_dir_mb")
show_trend("state estimate", "state_mb")
if end.get("history_points", 0) > 0:
    show_trend("odds history in memory", "history_mb")
    show_trend("odds history files", "history_files_mb")
print(f"memory per retained ended event: while the first horizon fills ({len(early)} samples), "
      f"{per_event_rss / 1000:.2f} KB of RSS and {per_event_est / 1000:.2f} KB by the state estimate; "
      f"loaded from the data dir with immediate purging, ({a.rss_restart_kb / 1024:.1f} MB - "
      f"{a.rss_empty_kb / 1024:.1f} MB empty) / "
      f"{int(a.held)} events held = {(a.rss_restart_kb - a.rss_empty_kb) * 1024 / a.held / 1000:.2f} KB, "
      f"{end['state_mb'] * 1e6 / a.held / 1000:.2f} KB by the estimate")
print(f"restart: ready in {restart_ms:.0f} ms ({'under' if restart_ms < 5000 else 'OVER'} 5 s), "
      f"seq={int(a.seq)} digest={a.digest} as before the stop; {a.restart_line}")
# The odds history's files are read after ready (engine/storage/history_recovery.h):
# its routes answer 503 until then, the rest of the API does not wait.
print(f"restart: the odds history answering {(a.history_ready - a.t2) * 1000:.0f} ms after the start "
      f"(polled every 0.1 s); {a.history_line}")

plot = f"""
set terminal png size 1200,900
set output '{a.png}'
set datafile separator ','
set key top left
set grid
set multiplot layout 2,1 title 'oddsrelay soak: {end['feed_day']:.0f} days of feed, {fixtures:,} fixtures, horizon {a.horizon}'
set xlabel 'feed time (days)'
set ylabel 'MB'
set arrow from {horizon_days},graph 0 to {horizon_days},graph 1 nohead dt 2
plot '{a.csv}' using 2:4 skip 1 with lines lw 2 title 'RSS', \\
     '' using 2:5 skip 1 with lines title 'data dir, all files', \\
     '' using 2:15 skip 1 with lines lw 2 title 'data dir, committed', \\
     '' using 2:12 skip 1 with lines title 'state estimate', \\
     '' using 2:19 skip 1 with lines title 'odds history, memory', \\
     '' using 2:23 skip 1 with lines title 'odds history, files'
set ylabel 'events'
plot '{a.csv}' using 2:6 skip 1 with lines lw 2 title 'held', \\
     '' using 2:9 skip 1 with lines title 'ended (held)', \\
     '' using 2:($7+$8) skip 1 with lines title 'listed, not ended'
unset multiplot
"""
if shutil.which("gnuplot"):
    subprocess.run(["gnuplot"], input=plot, text=True, check=True)
    print(f"chart: {a.png}; samples: {a.csv}")
else:
    print(f"chart: none (no gnuplot); samples: {a.csv}")
