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


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


class ArrivalStamps(h.WithKeys):
    KEYS, SCRATCH = KEYS, "arrival-stamps"

    def test_simulator_groups_reach_the_engine_within_a_millisecond(self):
        with h.clean_server(self, "--feed", "sim:seed=3,events=200,rate=1000", "--keys", self.keys,
                            "--progress", "0") as srv:
            srv.wait_for(r"serving http://")
            # The server is idle, the machine may not be (ctest runs other
            # servers beside it): up to three 2-second windows, one of which
            # must hold the p99 under 1 ms. A batching or queueing delay of
            # the server's own (a record held for a timer, a lost wake-up)
            # fails every window.
            seen = []
            for _ in range(3):
                groups = infos(srv.port, 2)
                self.assertGreater(len(groups), 200, "1,000 records/s for 2 s")
                check_order(self, groups)
                # Microseconds from the monotonic clock, not `at` * 1000.
                self.assertTrue(any(g["arrived_us"] % 1000 for g in groups), "arrival stamps are whole milliseconds")
                self.assertTrue(any(g["arrived_us"] != g["at"] * 1000 for g in groups))
                stage = sorted(g["applied_us"] - g["arrived_us"] for g in groups)
                seen.append(f"p50 {stage[len(stage) // 2]} us, p99 {p99(stage)} us, max {stage[-1]} us "
                            f"over {len(stage)} groups")
                print(f"record->engine: {seen[-1]}")
                if p99(stage) < 1000:
                    return
            self.fail(f"record->engine p99 at or over 1 ms in every window: {seen}")

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
