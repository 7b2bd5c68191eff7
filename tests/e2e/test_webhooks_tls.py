"""Webhooks to https:// endpoints through the real binary: a local TLS
receiver with a certificate made here by the openssl command. Proved: a
receiver whose certificate chains to --webhook-ca gets signed callbacks over
TLS; one the server does not trust, or whose certificate names another host,
gets no request at all (its handshakes fail, the attempts count as failed
and nothing as delivered); a CA file that cannot be loaded stops the start;
a webhook URL of another scheme is a keys-file error."""
import hashlib
import hmac
import http.server
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import unittest

import harness as h

WAIT = 60
PROBE = "probe"
SECRET = b"tls-secret"


def make_cert(d, name, san):
    """A self-signed certificate (its own trust anchor) for `san`."""
    crt, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                    "-days", "2", "-subj", "/CN=oddsrelay-test", "-addext", f"subjectAltName={san}"],
                   check=True, capture_output=True, timeout=60)
    return crt, key


class TlsReceiver:
    """An HTTPS receiver recording every request and every failed handshake."""

    def __init__(self, crt, key):
        self.calls, self.handshake_failures, self.cond = [], 0, threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with outer.cond:
                    outer.calls.append((dict(self.headers), body))
                    outer.cond.notify_all()
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)

        class Server(http.server.ThreadingHTTPServer):
            def get_request(self):
                sock, addr = self.socket.accept()
                try:
                    return ctx.wrap_socket(sock, server_side=True), addr
                except (ssl.SSLError, OSError):
                    sock.close()
                    with outer.cond:
                        outer.handshake_failures += 1
                        outer.cond.notify_all()
                    raise

        self.srv = Server(("127.0.0.1", 0), Handler)
        self.url = f"https://127.0.0.1:{self.srv.server_address[1]}/hook"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def wait(self, pred, what):
        with self.cond:
            if not self.cond.wait_for(lambda: pred(self), WAIT):
                raise AssertionError(f"{what}: not within {WAIT}s ({len(self.calls)} calls, "
                                     f"{self.handshake_failures} failed handshakes)")

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class WebhooksOverTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-tls-")
        cls.good = make_cert(cls.dir, "good", "IP:127.0.0.1")
        cls.other = make_cert(cls.dir, "other", "DNS:other.invalid")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def keys_file(self, url):
        keys = [{"key": PROBE, "permissions": []},
                {"key": "hooked", "permissions": ["live", "odds", "scores"],
                 "webhook": {"url": url, "secret": SECRET.decode(), "events": ["odds_update"]}}]
        return h.write_keys(self.dir, {"keys": keys})

    def serve(self, recv, *flags):
        return h.Server("--feed", "sim:seed=5", "--keys", self.keys_file(recv.url), "--progress", "0",
                        "--webhook-timeout", "20000", *flags)

    def hooks(self, srv):
        r, body = h.request(srv.port, "/v1/status", PROBE)
        self.assertEqual(r.status, 200, body)
        return json.loads(body)["webhooks"]

    def test_a_trusted_receiver_gets_signed_callbacks_over_tls(self):
        recv = TlsReceiver(*self.good)
        self.addCleanup(recv.close)
        with self.serve(recv, "--webhook-ca", self.good[0]) as srv:
            recv.wait(lambda r: len(r.calls) >= 3, "three callbacks over TLS")
            with recv.cond:
                calls = list(recv.calls)
            for headers, body in calls:
                self.assertEqual(headers["X-Signature"], hmac.new(SECRET, body, hashlib.sha256).hexdigest())
                self.assertEqual(json.loads(body)["event"], "odds_update")
            h.wait_until(lambda: self.hooks(srv)["delivered"] >= 3, WAIT, "delivered counted")
            self.assertEqual(recv.handshake_failures, 0)
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log[-2000:])

    def refused(self, recv, *flags):
        with self.serve(recv, *flags) as srv:
            recv.wait(lambda r: r.handshake_failures >= 2, "two refused handshakes")
            h.wait_until(lambda: self.hooks(srv)["failed_attempts"] >= 2, WAIT, "failed attempts counted")
            hooks = self.hooks(srv)
            self.assertEqual(hooks["delivered"], 0, hooks)
            self.assertEqual(recv.calls, [])
            rc, log = srv.stop()
            self.assertEqual(rc, 0, log[-2000:])

    def test_an_untrusted_certificate_gets_no_request(self):
        recv = TlsReceiver(*self.good)
        self.addCleanup(recv.close)
        self.refused(recv)  # the system store does not hold the test's certificate

    def test_a_certificate_for_another_host_gets_no_request(self):
        recv = TlsReceiver(*self.other)
        self.addCleanup(recv.close)
        self.refused(recv, "--webhook-ca", self.other[0])  # trusted, but not for 127.0.0.1

    def test_a_ca_file_that_cannot_be_loaded_stops_the_start(self):
        bad = os.path.join(self.dir, "not-a-cert.pem")
        with open(bad, "w") as f:
            f.write("not a certificate\n")
        for path in (bad, os.path.join(self.dir, "missing.pem")):
            rc, _, err = h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--feed", "none",
                                "--webhook-ca", path], timeout=60)
            self.assertEqual(rc, 2, err)
            self.assertIn("--webhook-ca", err)

    def test_a_webhook_url_of_another_scheme_is_a_keys_file_error(self):
        ftp = {"keys": [{"key": "k", "permissions": [], "webhook": {"url": "ftp://127.0.0.1/x"}}]}
        path = h.write_keys(self.dir, ftp, "ftp-keys.json")
        rc, _, err = h.run([h.binary("oddsrelay"), "--listen", f"127.0.0.1:{h.free_port()}", "--feed", "none",
                            "--keys", path], timeout=60)
        self.assertEqual(rc, 2, err)
        self.assertIn("must start with http:// or https://", err)


if __name__ == "__main__":
    h.main()
