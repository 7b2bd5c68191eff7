"""Per-stage breakdown of a `perf record -g` profile (perf/profile/run.sh).
Reads `perf script` output on stdin; each sample goes to the stage of the
innermost frame on its stack that names one (a malloc goes to whoever called
it). Prints a Markdown table: share of the samples counted, and ns per
record from the samples' CPU time (cpu-clock: each sample is one period).
  perf script -i perf.data | python3 stages.py RECORDS [--only-under REGEX] [--title T]
--only-under keeps the samples with a frame matching REGEX (e.g. the timed
function of a benchmark), --not-under drops those with one (its set-up).
--set relay sorts a relay loop's samples (perf/relay/profile.sh) by what
they are paid per: per subscriber, per filter bucket, per loop turn;
--comm keeps one thread's samples (its name, a regex)."""
import argparse
import collections
import re
import sys

STAGES = [  # (stage, regex over a frame's symbol); order = priority within one frame
    ("release of replaced versions", r"_M_dispose|_M_destroy|~EventEntry|~Snapshot|~Batch|~LineHistory|~Leaf|~Mid|~Root"),
    ("line history", r"history_on_market|history_on_removal|replace_market|priced_in|has_key|LineHistory"),
    ("retention index", r"RetentionIndex|track_touched|evict_due|drop_entry|_Rb_tree<std::pair<long, unsigned long>|retirable|unindex"),
    ("digest / state-byte accounting", r"history_bytes|market_bytes|info_bytes|score_bytes|stats_bytes|entry_bytes|count_entry|count_listing|StateDigest|state_digest"),
    ("batch seal / publish", r"Engine::seal|Engine::commit|Engine::publish|SnapshotStore|Published<|Pipeline::deliver|on_batch|Hub::|FrameEncoder|\brelay::|BatchSink"),
    ("parse", r"FeedParser|rapidjson|feed::parse|FeedReader|LineReader|read_line|parse_record|gzread|inflate|__libc_read|\bread\b|ksys_read|vfs_read"),
    ("queue hand-off", r"moodycamel|Pipeline::push|ConcurrentQueue"),
    ("apply (records, entry, trie)", r"Engine::|build_market|EventMap|Market::make|find_market|note_market|change_for"),
]
# A relay loop's samples (RelayLoop, PtStreams): the kernel's receive side
# of loopback runs in the writer's softirq, so it is paid per write too.
# libc and libuv have no frame pointers here: a writev's user callers are
# lost, but on a relay thread only RelayLoop::flush writes.
RELAY_STAGES = [
    ("per subscriber: writev, loopback receive (softirq)", r"net_rx_action|process_backlog|__netif_receive|tcp_v4_rcv|ip_local_deliver|sock_def_readable|tcp_rcv_established"),
    ("per subscriber: writev, TCP send path and syscall", r"tcp_sendmsg|tcp_write_xmit|__tcp_push|tcp_transmit|ip_output|__ip_queue_xmit|ip_finish_output|__dev_queue_xmit|loopback_xmit|sock_write_iter|vfs_writev|do_writev|__GI___writev|uv_try_write|uv__try_write|Conn::write|pthread_enable_asynccancel|pthread_disable_asynccancel"),
    ("per subscriber: heap (malloc/free)", r"^(malloc|free|cfree|__libc_malloc|__libc_free|_int_malloc|_int_free|operator new|operator delete|je_\w+|sdallocx|tcache_\w+)"),
    ("per subscriber: queue the frames, INFO, write bookkeeping", r"SendQueue|Outbox::|send_batch_frame|send_marker|close_group|RelayLoop::flush|FrameRef|on_written"),
    ("per bucket: admit / cut frames, the bucket's INFO", r"send_admitted|send_frames|open_group|group_marker|narrow|admits|digest_of|view_digest|flush_quiet|PtStreams::flush|pt_marker"),
    ("per turn: take batches, wrap frames, resume window", r"take_batches|send_taken|local_batch|local_frame|ResumeWindow|fan_out|moodycamel"),
    ("per turn: libuv, epoll, wake-ups", r"uv__io_poll|epoll_wait|uv__async|uv_run|RelayLoop::drain|finish_turn|uv__run_timers|schedule\b|__schedule"),
    ("timers: heartbeat, slow watch, client reads", r"RelayLoop::tick|watch_slow|heartbeat|note_progress|on_readable|on_read|FrameParser|ioctl|sock_recvmsg|__GI___read|readv"),
]
ap0 = argparse.ArgumentParser(add_help=False)
ap0.add_argument("--set", default="engine")
if ap0.parse_known_args()[0].set == "relay":
    STAGES = RELAY_STAGES
COMPILED = [(s, re.compile(r)) for s, r in STAGES]

ap = argparse.ArgumentParser()
ap.add_argument("records", type=int)
ap.add_argument("--only-under")
ap.add_argument("--not-under")
ap.add_argument("--title", default="")
ap.add_argument("--set", choices=["engine", "relay"], default="engine")
ap.add_argument("--comm")
ap.add_argument("--unit", default="record")
ap.add_argument("--units", default="records")
a = ap.parse_args()
comm = re.compile(a.comm) if a.comm else None
only = re.compile(a.only_under) if a.only_under else None
never = re.compile(a.not_under) if a.not_under else None

counts = collections.Counter()
period_ns = None
total = 0
frames = []
head = None


def flush():
    global total
    if head is None:
        return
    if only and not any(only.search(f) for f in frames):
        return
    if never and any(never.search(f) for f in frames):
        return
    if comm and not comm.match(head):
        return
    stage = "other"
    for f in frames:
        for s, r in COMPILED:
            if r.search(f):
                stage = s
                break
        if stage != "other":
            break
    counts[stage] += 1
    total += 1


for line in sys.stdin:
    if not line.strip():
        flush()
        head, frames = None, []
        continue
    if not line.startswith(("\t", " ")):
        head = line
        m = re.search(r"\s(\d+) cpu-clock", line)
        if m and period_ns is None:
            period_ns = int(m.group(1))
        continue
    parts = line.strip().split(" ", 1)
    if len(parts) == 2:
        frames.append(re.sub(r"\+0x[0-9a-f]+ \(.*\)$", "", parts[1]))
flush()
period_ns = period_ns or 1
if a.title:
    print(f"{a.title}\n")
print(f"| stage | % of samples | ns / {a.unit} (CPU) |")
print("|---|---:|---:|")
order = [s for s, _ in STAGES] + ["other"]
for s in order:
    if counts[s]:
        print(f"| {s} | {100 * counts[s] / total:.1f} | {counts[s] * period_ns / a.records:.0f} |")
print(f"| **total** | 100.0 | {total * period_ns / a.records:.0f} |")
print(f"\n{total} samples of {period_ns} ns CPU each, over {a.records:,} {a.units}")
