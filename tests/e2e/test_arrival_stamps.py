"""Latency counted from arrival (docs/api.md "Latency stamps on INFO"),
through the real binary: each /pt-ws INFO that closes a group carries
arrived_us (when the group's first record reached the server, in
microseconds, from the monotonic clock), and arrived_us <= applied_us <=
encoded_us. On an idle server fed by the simulator at 1,000 records/s the
record->engine stage (applied_us - arrived_us) has a p99 under 1 ms: it
measures queueing and batching, not the millisecond rounding of `at` (the
stamps are not whole milliseconds). A paced replay stamps records when
they fall due; an edge stamps them when the bus delivers them (in
test_nats.py)."""
import json
import os
import time

import harness as h
from wsraw import RawWs

KEY = "stamps-key"
KEYS = {"keys": [{"key": KEY, "name": "stamps", "permissions": ["live", "prematch", "odds", "scores"]}]}


def infos(port, seconds, path=f"/pt-ws?api_key={KEY}&protocol=v2"):
    """The group INFOs (not the ready one) a /pt-ws client reads for `seconds`."""
    raw = RawWs(port, path, timeout=seconds + 10)
    assert raw.status == 101, raw.status
    out = []
    until = time.monotonic() + seconds
    try:
        while time.monotonic() < until:
            op, p = raw.recv_frame()
            if op != 1 or not p.startswith(b"INFO"):
                continue
            body = json.loads(p.decode().split("\x1f", 2)[2])
            if "ready" not in body:
                out.append(body)
    finally:
        raw.close()
    return out


def check_order(test, groups):
    for g in groups:
        test.assertIn("arrived_us", g, g)
        test.assertLessEqual(g["arrived_us"], g["applied_us"], g)
        test.assertLessEqual(g["applied_us"], g["encoded_us"], g)


def cpu_idle():
    """(idle, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v)


def cpu_idle_share(a, b):
    return (b[0] - a[0]) / max(1, b[1] - a[1])


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


class ArrivalStamps(h.WithKeys):
    KEYS, SCRATCH = KEYS, "arrival-stamps"

    def test_simulator_groups_reach_the_engine_within_a_millisecond(self):
        with h.clean_server(self, "--feed", "sim:seed=3,events=200,rate=1000", "--keys", self.keys,
                            "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            # The server is idle; the machine may not be (ctest runs other
            # servers and builds beside it). The 1 ms p99 is asserted over
            # a 2-second window in which more than a core stayed free (60% idle);
            # up to three windows are tried. In a busy window the engine
            # thread waits for a core: its median still shows no batching
            # or queueing delay of the server's own (a record held for a
            # timer, a lost wake-up), which would move every group.
            seen = []
            for _ in range(3):
                idle0 = cpu_idle()
                groups = infos(srv.port, 2)
                free = cpu_idle_share(idle0, cpu_idle())
                self.assertGreater(len(groups), 200, "1,000 records/s for 2 s")
                check_order(self, groups)
                # Microseconds from the monotonic clock, not `at` * 1000.
                self.assertTrue(any(g["arrived_us"] % 1000 for g in groups), "arrival stamps are whole milliseconds")
                self.assertTrue(any(g["arrived_us"] != g["at"] * 1000 for g in groups))
                stage = sorted(g["applied_us"] - g["arrived_us"] for g in groups)
                seen.append(f"p50 {stage[len(stage) // 2]} us, p99 {p99(stage)} us, max {stage[-1]} us "
                            f"over {len(stage)} groups, {free:.0%} of the CPUs idle")
                print(f"record->engine: {seen[-1]}")
                self.assertLess(stage[len(stage) // 2], 200, seen[-1])
                if p99(stage) < 1000:
                    return
                if free >= 0.6:
                    self.fail(f"record->engine p99 at or over 1 ms with a core free: {seen[-1]}")
            print(f"no window with a free core: the 1 ms p99 was not asserted ({seen})")

    def test_a_paced_replay_stamps_records_when_they_fall_due(self):
        # Three events; then one market record every 200 ms of feed time.
        feed = os.path.join(self.dir, "paced.jsonl")
        h.gen_feed(feed, 400, "seed=4,events=3,rate=5")
        with h.clean_server(self, "--feed", f"replay:{feed},speed=1", "--keys", self.keys,
                            "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            groups = infos(srv.port, 3)
            self.assertGreater(len(groups), 5)
            check_order(self, groups)
            # Read ahead, but stamped as they fall due: each group waited
            # for the engine only, never for the pacing.
            stage = [g["applied_us"] - g["arrived_us"] for g in groups]
            self.assertLess(max(stage), 50_000, stage)
            # Groups arrive as far apart as their records are in feed time.
            arrived = [g["arrived_us"] for g in groups]
            at = [g["at"] for g in groups]
            self.assertGreater(arrived[-1] - arrived[0], (at[-1] - at[0]) * 1000 - 50_000)


if __name__ == "__main__":
    h.main()
