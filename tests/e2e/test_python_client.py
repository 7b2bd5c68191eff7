"""The Python client (clients/python/oddsclient) against the real server,
through tests/e2e/fault_proxy.py: `python3 -m oddsclient follow --verify`
on a replayed feed while the proxy flips one price digit in one odds:
frame, plain or inside a deflated message (the next INFO's digest catches
it: digest_mismatch, then a fresh snapshot), cuts the connection (resumed, no snapshot) and black-holes it
for longer than two ping intervals (stale, then resumed); and while the
server is killed with -9 and restarted on its --data-dir. At the end its
--out equals /v1/odds for its events at its seq, digest included. The
scenarios are client_harness.py's, shared with test_cpp_client.py."""
import client_harness as ch
import harness as h
from test_relay_state import StreamState


class PythonClient(StreamState):
    def test_the_cli_repairs_a_corrupted_frame_survives_cuts_and_ends_equal_to_rest(self):
        ch.follow_through_faults(self, ch.python_cli)

    def test_a_compressed_stream_repairs_a_flipped_digit_and_resumes_after_a_cut(self):
        # The digit is flipped inside a deflated message (fault_proxy.DeflateFlipper).
        ch.follow_through_faults(self, ch.python_cli, ("--compress",), faults=("flip", "cut"))

    def test_the_cli_follows_a_server_killed_and_restarted_on_its_data_dir(self):
        ch.follow_through_kill9(self, ch.python_cli)


if __name__ == "__main__":
    h.main()
