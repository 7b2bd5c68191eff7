"""--access-log: one JSON line per REST request (refused ones and 429s
included) and per stream open and close, never holding a presented key, and
a new file after SIGHUP (logrotate's rename)."""
import json
import os
import signal
import socket
import struct
import unittest

import harness as h
from wsraw import RawWs

GOOD = "access-log-good-key-0123456789"
LIMITED = "access-log-limited-key-0123456"
WRONG = "access-log-wrong-key-9876543210"


class AccessLog(h.WithKeys):
    KEYS = {"keys": [
        {"key": GOOD, "name": "desk-good", "permissions": ["live", "prematch", "odds", "scores"]},
        {"key": LIMITED, "name": "desk-limited", "rate_limit": 1, "permissions": ["live"]},
    ]}
    SCRATCH = "access-log"

    def lines(self, path):
        with open(path) as f:
            return [json.loads(l) for l in f.read().splitlines()]

    def wait_lines(self, path, pred, what):
        return h.wait_until(lambda: [l for l in self.lines(path) if pred(l)] if os.path.exists(path) else None,
                            10, what)

    def test_requests_streams_and_rotation(self):
        log = os.path.join(self.dir, "access.log")
        with h.Server("--feed", "sim:seed=3,events=30,rate=200", "--keys", self.keys, "--access-log", log) as s:
            s.wait_for(r"serving http://")
            r, _ = h.request(s.port, "/v1/live?sport=1", key=GOOD)
            self.assertEqual(r.status, 200)
            self.assertEqual(h.request(s.port, "/v1/sports", key=WRONG)[0].status, 401)
            self.assertEqual(h.request(s.port, "/v1/sports")[0].status, 401)
            self.assertEqual(h.request(s.port, "/v1/sports", key=LIMITED)[0].status, 200)
            self.assertEqual(h.request(s.port, "/v1/sports", key=LIMITED)[0].status, 429)
            with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:  # refused before routing
                c.sendall(b"GARBAGE\r\n\r\n")
                self.assertTrue(c.recv(100).startswith(b"HTTP/1.1 400 "))

            ok = self.wait_lines(log, lambda l: l.get("path") == "/v1/live", "the 200's line")[0]
            self.assertEqual((ok["type"], ok["client"], ok["key"], ok["method"], ok["status"]),
                             ("request", "127.0.0.1", "desk-good", "GET", 200))
            self.assertGreater(ok["bytes"], 100)
            self.assertGreaterEqual(ok["us"], 0)
            self.assertRegex(ok["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            refused = self.wait_lines(log, lambda l: l.get("status") == 401, "the 401s' lines")
            wrong = [l for l in refused if l["key"]]
            self.assertEqual(len(wrong), 1)
            self.assertRegex(wrong[0]["key"], r"^#[0-9a-f]{8}$")
            self.assertTrue(wrong[0]["key_unknown"])
            self.assertIn(None, [l["key"] for l in refused])  # no key presented
            limited = self.wait_lines(log, lambda l: l.get("status") == 429, "the 429's line")[0]
            self.assertEqual(limited["key"], "desk-limited")
            garbage = self.wait_lines(log, lambda l: l.get("status") == 400, "the refused request's line")[0]
            self.assertEqual((garbage["path"], garbage["key"]), ("", None))

            # A stream: its open line, and on close the code, frames and bytes.
            ws = RawWs(s.port, f"/pt-ws?api_key={GOOD}&protocol=v2")
            self.assertEqual(ws.status, 101)
            ws.recv_frame()
            ws.send_frame(0x8, struct.pack("!H", 1000) + b"bye")
            ws.until_close(10)
            ws.close()
            opened = self.wait_lines(log, lambda l: l["type"] == "stream_open", "the stream's open line")[0]
            self.assertEqual((opened["path"], opened["key"], opened["client"]), ("/pt-ws", "desk-good", "127.0.0.1"))
            closed = self.wait_lines(log, lambda l: l["type"] == "stream_close", "the stream's close line")[0]
            self.assertEqual(closed["close_code"], 1000)
            self.assertGreater(closed["frames"], 1)
            self.assertGreater(closed["bytes"], 100)
            handshake = [l for l in self.lines(log) if l.get("path") == "/pt-ws" and l["type"] == "request"]
            self.assertEqual(handshake[0]["status"], 101)

            with open(log) as f:
                text = f.read()
            for key in (GOOD, LIMITED, WRONG):
                self.assertNotIn(key, text)

            # logrotate: move the file, SIGHUP, and the next line is in a new one.
            os.rename(log, log + ".1")
            before = s.count("keys reloaded")
            s.proc.send_signal(signal.SIGHUP)
            s.wait_for_more("keys reloaded", before)
            self.assertEqual(h.request(s.port, "/v1/scores", key=GOOD)[0].status, 200)
            fresh = self.wait_lines(log, lambda l: l.get("path") == "/v1/scores", "a line in the new file")
            self.assertEqual(len(fresh), 1)
            self.assertFalse([l for l in self.lines(log + ".1") if l.get("path") == "/v1/scores"])

    def test_off_by_default_and_a_bad_path_is_refused(self):
        with h.Server("--feed", "none", "--keys", self.keys) as s:
            s.wait_for(r"serving http://")
            self.assertEqual(h.request(s.port, "/v1/sports", key=GOOD)[0].status, 200)
            self.assertEqual(os.listdir(self.dir), ["keys.json"])
        rc, _, err = h.run([h.binary("oddsrelay"), "--access-log", "/nonexistent-dir/a.log", "--feed", "none"])
        self.assertEqual(rc, 2)
        self.assertIn("cannot open access log /nonexistent-dir/a.log", err)


if __name__ == "__main__":
    h.main()
