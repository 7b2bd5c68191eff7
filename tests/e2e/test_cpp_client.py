"""The C++ client's CLI (build/oddsclient, clients/cpp) against the real
server, through tests/e2e/fault_proxy.py, in the scenarios the Python
client's e2e test runs (client_harness.py): a flipped price digit
(digest_mismatch, then repaired from a snapshot), a cut (resumed without a
snapshot), a black hole past two ping intervals (stale, then resumed), the
server killed with -9 and restarted on its --data-dir; and the stream
filtered, conflated and compressed. Each ends with --out equal to
/v1/odds?ids=..&digest=1 at the client's seq, byte for byte after sorting
keys."""
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

    def test_a_compressed_stream_through_a_cut_and_a_black_hole_ends_equal_to_rest(self):
        # No flipped digit here: the proxy edits the bytes it forwards, and
        # compressed odds: frames are not text to edit.
        ch.follow_through_faults(self, ch.cpp_cli, ("--compress",), faults=("cut", "blackhole"))

    def test_the_cli_follows_a_server_killed_and_restarted_on_its_data_dir(self):
        ch.follow_through_kill9(self, ch.cpp_cli)

    def test_help_and_a_mistake(self):
        rc, out, _ = h.run([h.binary("oddsclient"), "--help"])
        self.assertEqual(rc, 0)
        self.assertIn("oddsclient follow --url", out)
        rc, _, err = h.run([h.binary("oddsclient"), "follow", "--url", "http://127.0.0.1:1"])
        self.assertEqual(rc, 2)
        self.assertIn("--key", err)


if __name__ == "__main__":
    h.main()
