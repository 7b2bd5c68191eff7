"""The C++ client's CLI (build/oddsclient, clients/cpp) against the real
server, through tests/e2e/fault_proxy.py, in the scenarios the Python
client's e2e test runs (client_harness.py): a flipped price digit
(digest_mismatch, then repaired from a snapshot), a cut (resumed without a
snapshot), a black hole past two ping intervals (stale, then resumed), the
server killed with -9 and restarted on its --data-dir; and the stream
filtered, conflated and compressed. Each ends with --out equal to
/v1/odds?ids=..&digest=1 at the client's seq, byte for byte after sorting
keys."""
import os

import client_harness as ch
import harness as h
from test_relay_state import StreamState


class CppClient(StreamState):
    def test_the_cli_repairs_a_corrupted_frame_survives_cuts_and_ends_equal_to_rest(self):
        ch.follow_through_faults(self, ch.cpp_cli)

    def test_a_filtered_stream_with_a_cut_ends_equal_to_rest(self):
        got = ch.follow_through_faults(self, ch.cpp_cli, ("--events", 3), faults=("cut",))
        self.assertLessEqual(len(got["data"]), 3)

    def test_a_conflated_stream_with_a_cut_ends_equal_to_rest(self):
        ch.follow_through_faults(self, ch.cpp_cli, ("--conflate-ms", "200"), faults=("cut",))

    def test_a_compressed_stream_repairs_a_flipped_digit_through_a_cut_and_a_black_hole(self):
        # The proxy inflates one odds: message, flips a digit and deflates
        # it again (fault_proxy.DeflateFlipper): the client's digest, not
        # the inflater, must catch it.
        ch.follow_through_faults(self, ch.cpp_cli, ("--compress",), faults=("flip", "cut", "blackhole"))

    def test_the_cli_follows_a_server_killed_and_restarted_on_its_data_dir(self):
        ch.follow_through_kill9(self, ch.cpp_cli)

    def test_the_two_clis_print_the_same_lines_and_write_the_same_file(self):
        # Both CLIs follow the same replay to its end: the same lines (but
        # for the seq each went live at) and --out byte for byte alike.
        feed = ch.feed_with_end(self.dir, records=3000)
        with h.Server("--feed", f"replay:{feed},speed=3", "--keys", self.keys, "--progress", "0",
                      "--ws-ping", "400") as srv:
            srv.wait_for(r"serving http://")
            outs = {name: os.path.join(self.dir, f"out-{name}.json") for name in ("python", "cpp")}
            clients = {name: ch.Follower(cli, srv.port, outs[name])
                       for name, cli in (("python", ch.python_cli), ("cpp", ch.cpp_cli))}
            try:
                final = h.wait_done(srv.port, ch.KEY)["seq"]  # done, and the engine has applied the last record
                for c in clients.values():
                    h.wait_until(lambda: c.seq == final, 30, "the client at the last seq")
            finally:
                rcs = {name: c.stop() for name, c in clients.items()}
            self.assertEqual(rcs, {"python": 0, "cpp": 0})
            lines = {name: [dict(l, seq=None) for l in c.lines] for name, c in clients.items()}
            self.assertEqual(lines["cpp"], lines["python"])
            self.assertEqual([l.get("state") for l in lines["cpp"]], ["syncing", "live"])
            with open(outs["python"], "rb") as f, open(outs["cpp"], "rb") as g:
                py, cpp = f.read(), g.read()
            self.assertEqual(cpp, py)
            self.assertIn(f'"seq": {final}}}'.encode(), cpp)

    def test_both_clis_go_live_verified_on_a_server_standing_still(self):
        # A finished replay sends no group after a client's snapshot: the
        # ready INFO's count of its frames is what closes it, so each CLI is
        # live (verified by the ready INFO's digest) at the replay's last seq.
        feed = ch.feed_with_end(self.dir, records=1500)
        with h.Server("--feed", f"replay:{feed},speed=max", "--keys", self.keys, "--progress", "0",
                      "--ws-ping", "400") as srv:
            srv.wait_for(r"serving http://")
            final = h.wait_done(srv.port, ch.KEY)["seq"]
            for name, cli in (("python", ch.python_cli), ("cpp", ch.cpp_cli)):
                out = os.path.join(self.dir, f"still-{name}.json")
                c = ch.Follower(cli, srv.port, out)
                try:
                    h.wait_until(lambda: c.count(state="live", verified=True, seq=final) == 1, 15,
                                 f"the {name} CLI live at {final}")
                finally:
                    self.assertEqual(c.stop(), 0)
                ch.assert_out_equals_rest(self, srv.port, out, final)

    def test_help_and_a_mistake(self):
        rc, out, _ = h.run([h.binary("oddsclient"), "--help"])
        self.assertEqual(rc, 0)
        self.assertIn("oddsclient follow --url", out)
        rc, _, err = h.run([h.binary("oddsclient"), "follow", "--url", "http://127.0.0.1:1"])
        self.assertEqual(rc, 2)
        self.assertIn("--key", err)


if __name__ == "__main__":
    h.main()
