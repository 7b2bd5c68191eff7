"""The server behind a TLS-terminating nginx, as docs/deploy.md deploys it:
Debian's nginx runs scripts/nginx/oddsrelay.conf (ports, names and the
certificate replaced) on a free loopback port, with a self-signed
certificate made here by the openssl command, in front of the real binary
started with --trust-proxy 127.0.0.1/32 and --public-url (and two REST
loops, --http-threads 2: connections land on either).

Addresses: nginx reaches the server from 127.0.0.1 (trusted); the test's
"client" connects from 127.0.0.2, so a key allowing only 127.0.0.2 works
through nginx exactly when the forwarded address is used. Proved:
- the nginx block shown in docs/deploy.md is the checked-in config;
- REST over https decides allow_ips on the forwarded address: the client's
  key passes, a key allowing only the proxy's address does not; what a
  client writes into X-Forwarded-For itself is never believed (through
  nginx it stays left of the address nginx appends; from an untrusted peer
  the header is ignored), while a trusted peer's header is;
- a wss:// /pt-ws and /ws stream through nginx with Python's websockets
  gets its ready INFO and frames; its handshake is held to allow_ips on the
  forwarded address too;
- stream add-on URLs start with the --public-url (https://), and the
  signed URL works through nginx;
- allow_origins: listed and wildcard origins pass, others (and the bare
  domain of a wildcard) get 403 on REST, on the /pt-ws handshake and on the
  widget page (by its Referer); requests without Origin and the server's
  own pages pass; the explorer's demo key works from its page through the
  proxy and from the public URL's origin, and nowhere else;
- the PROXY protocol v1: a line from the trusted peer names the client for
  REST and for a stream handshake; from an untrusted peer it is a 400 and
  the connection is closed."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import unittest

import websockets
from websockets.exceptions import InvalidStatusCode

import harness as h

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF = os.path.join(ROOT, "scripts", "nginx", "oddsrelay.conf")
CLIENT = "127.0.0.2"  # the browser or desk, as nginx and the server see it
PUBLIC = "https://odds.example.com"
ALL = ["live", "prematch", "odds", "scores", "widget", "stream"]
KEYS = {"keys": [
    {"key": "client-key", "name": "client", "permissions": ALL, "allow_ips": [CLIENT + "/32"], "ws_connections": 20},
    {"key": "proxy-key", "name": "proxy", "permissions": ALL, "allow_ips": ["127.0.0.1/32"]},
    {"key": "forged-key", "name": "forged", "permissions": ALL, "allow_ips": ["198.51.100.7/32"]},
    {"key": "origin-key", "name": "desk", "permissions": ALL, "ws_connections": 20,
     "allow_origins": ["https://desk.example.com", "https://*.partners.example.com"]},
    {"key": "any-key", "name": "any", "permissions": ALL},
]}
IP_REFUSED = {"error": "Source address not allowed for this API key"}
ORIGIN_REFUSED = {"error": "Origin not allowed for this API key"}


def make_cert(d):
    crt, key = os.path.join(d, "proxy.pem"), os.path.join(d, "proxy.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                    "-days", "2", "-subj", "/CN=oddsrelay-proxy-test", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True, timeout=60)
    return crt, key


def replace_once(text, old, new):
    """The checked-in config must still hold `old` exactly once: a test that
    quietly stopped substituting would test another config."""
    assert text.count(old) == 1, f"{CONF} no longer has exactly one {old!r}"
    return text.replace(old, new)


class Nginx:
    """nginx in the foreground on `port`, its files under `d`; killed at the end."""

    def __init__(self, d, port, upstream, crt, key):
        with open(CONF) as f:
            site = f.read()
        site = replace_once(site, "server 127.0.0.1:8080;", f"server 127.0.0.1:{upstream};")
        site = replace_once(site, "listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
        site = replace_once(site, "listen [::]:443 ssl;\n", "")
        site = replace_once(site, "/etc/ssl/certs/odds.example.com.pem", crt)
        site = replace_once(site, "/etc/ssl/private/odds.example.com.key", key)
        with open(os.path.join(d, "oddsrelay.conf"), "w") as f:
            f.write(site)
        temp = "".join(f"    {k}_temp_path {d}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(("user root;\n" if os.geteuid() == 0 else "") +
                    f"daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n"
                    "events { worker_connections 256; }\n"
                    f"http {{\n    access_log {d}/access.log;\n{temp}    include {d}/oddsrelay.conf;\n}}\n")
        self.d, self.port = d, port
        self.err = open(os.path.join(d, "stderr.log"), "w+")
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        assert os.path.exists(binary), "nginx is missing: scripts/install-deps.sh installs nginx-light"
        self.proc = subprocess.Popen([binary, "-c", os.path.join(d, "nginx.conf"), "-p", d, "-e",
                                      os.path.join(d, "error.log")], stdout=subprocess.DEVNULL, stderr=self.err)
        h.wait_until(self.listening, 30, "nginx listening")

    def listening(self):
        assert self.proc.poll() is None, "nginx exited: " + self.log()
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def log(self):
        out = ""
        for name in ("stderr.log", "error.log"):
            try:
                with open(os.path.join(self.d, name)) as f:
                    out += f.read()[-3000:]
            except OSError:
                pass
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def directives(text):
    """The configuration without comments and blank lines."""
    lines = (l.split("#", 1)[0].rstrip() for l in text.splitlines())
    return [l for l in lines if l.strip()]


class DeployDoc(unittest.TestCase):
    def test_the_documented_config_is_the_tested_one(self):
        with open(os.path.join(ROOT, "docs", "deploy.md")) as f:
            doc = f.read()
        shown = doc.split("```nginx\n", 1)[1].split("```", 1)[0]
        with open(CONF) as f:
            self.assertEqual(directives(shown), directives(f.read()))


class BehindNginx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-proxy-")
        os.chmod(cls.dir, 0o755)
        cls.crt, key = make_cert(cls.dir)
        keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "sim:seed=5,events=80,rate=400", "--keys", keys, "--progress", "0",
                           "--trust-proxy", "127.0.0.1/32", "--public-url", PUBLIC + "/", "--http-threads", "2")
        cls.srv.wait_for(r"serving http://")
        cls.nginx = None
        try:
            cls.nginx = Nginx(cls.dir, h.free_port(), cls.srv.port, cls.crt, key)
        except BaseException:
            cls.tearDownClass()
            raise
        cls.tls = ssl.create_default_context(cafile=cls.crt)
        cls.own = f"https://127.0.0.1:{cls.nginx.port}"

    @classmethod
    def tearDownClass(cls):
        if cls.nginx:
            cls.nginx.stop()
        h.shut_down(cls.srv, cls.dir)

    # -- helpers
    def https(self, path, key=None, headers=None, source=CLIENT):
        """One request through nginx over TLS (the certificate checked
        against the one made here), from `source`."""
        c = http.client.HTTPSConnection("127.0.0.1", self.nginx.port, timeout=30, context=self.tls,
                                        source_address=(source, 0))
        hdrs = dict(headers or {})
        if key:
            hdrs["X-API-Key"] = key
        c.request("GET", path, headers=hdrs)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def https_json(self, path, key=None, headers=None, source=CLIENT):
        st, body = self.https(path, key, headers, source)
        return st, json.loads(body)

    def direct(self, path, key, headers=None, source=CLIENT):
        """One request straight to the server, from `source`, no proxy."""
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30, source_address=(source, 0))
        c.request("GET", path, headers=dict(headers or {}, **{"X-API-Key": key}))
        r = c.getresponse()
        body = json.loads(r.read())
        c.close()
        return r.status, body

    def live_soccer(self):
        def find():
            st, body = self.https_json("/v1/live?sport=1", "any-key")
            self.assertEqual(st, 200, body)
            return sorted(body["data"])
        return h.wait_until(find, 60, "a live soccer event")[0]

    async def stream(self, path, key, origin=None, frames=2):
        """A wss:// stream through nginx: its first `frames` messages."""
        url = f"wss://127.0.0.1:{self.nginx.port}{path}{'&' if '?' in path else '?'}api_key={key}"
        async with websockets.connect(url, ssl=self.tls, origin=origin, local_addr=(CLIENT, 0), max_size=None,
                                      max_queue=None) as ws:
            return [await ws.recv() for _ in range(frames)]

    async def refused(self, path, key, origin=None):
        with self.assertRaises(InvalidStatusCode) as cm:
            await self.stream(path, key, origin)
        return cm.exception.status_code

    # -- the forwarded address
    def test_rest_over_https_uses_the_forwarded_address_for_allow_ips(self):
        st, body = self.https_json("/v1/sports", "client-key")
        self.assertEqual((st, body["success"]), (200, True))
        self.assertEqual(self.https_json("/v1/sports", "proxy-key"), (403, IP_REFUSED))  # the proxy is not the client
        # Forged by the client: nginx appends the address it saw, which is
        # the right-most untrusted one, so the forgery changes nothing.
        for forged in ("198.51.100.7", "127.0.0.1", "10.0.0.1, 198.51.100.7"):
            self.assertEqual(self.https_json("/v1/sports", "forged-key", {"X-Forwarded-For": forged}),
                             (403, IP_REFUSED), forged)
            self.assertEqual(self.https_json("/v1/sports", "proxy-key", {"X-Forwarded-For": forged}),
                             (403, IP_REFUSED), forged)
            self.assertEqual(self.https_json("/v1/sports", "client-key", {"X-Forwarded-For": forged})[0], 200, forged)
        # Straight to the server from an untrusted peer: the header is ignored.
        self.assertEqual(self.direct("/v1/sports", "forged-key", {"X-Forwarded-For": "198.51.100.7"}),
                         (403, IP_REFUSED))
        self.assertEqual(self.direct("/v1/sports", "proxy-key", {"X-Forwarded-For": "127.0.0.1"}), (403, IP_REFUSED))
        self.assertEqual(self.direct("/v1/sports", "client-key", {"X-Forwarded-For": "198.51.100.7"})[0], 200)
        # From the trusted peer (where nginx sits) it is believed.
        self.assertEqual(self.direct("/v1/sports", "forged-key", {"X-Forwarded-For": "198.51.100.7"},
                                     source="127.0.0.1")[0], 200)
        self.assertEqual(self.direct("/v1/sports", "proxy-key", source="127.0.0.1")[0], 200)

    def test_wss_streams_through_nginx(self):
        info, first = h.run_async(self.stream("/pt-ws?protocol=v2", "client-key"))
        t, ch, body = info.split(h.SEP, 2)
        self.assertEqual((t, ch), ("INFO", "PUB"))
        ready = json.loads(body)
        self.assertEqual((ready["ready"], ready["protocol"]), (True, "v2"))
        self.assertIn(1, ready["sports"])
        t, ch, body = first.split(h.SEP, 2)
        self.assertEqual((t, ch.split(":")[0]), ("P", "evt"))
        self.assertTrue(json.loads(body))
        ws_first = json.loads(h.run_async(self.stream("/ws", "client-key", frames=1))[0])
        self.assertIsInstance(ws_first["seq"], int)
        # The handshake is held to allow_ips on the forwarded address too.
        self.assertEqual(h.run_async(self.refused("/pt-ws?protocol=v2", "proxy-key")), 403)
        self.assertEqual(h.run_async(self.refused("/ws", "forged-key")), 403)

    def test_stream_addon_urls_say_https(self):
        eid = self.live_soccer()
        st, body = self.https_json(f"/v1/stream?id={eid}", "any-key")
        self.assertEqual(st, 200, body)
        url = body["data"]["url"]
        self.assertTrue(url.startswith(f"{PUBLIC}/stream/play?event={eid}&key="), url)
        st, played = self.https_json(url[len(PUBLIC):])  # the same signed URL, through the proxy
        self.assertEqual((st, played["success"], played["event_id"]), (200, True, eid))
        # Straight to the server the base is the same: it is configured, not guessed.
        st, body = self.direct(f"/v1/stream?id={eid}", "any-key")
        self.assertTrue(body["data"]["url"].startswith(PUBLIC + "/stream/play?"), body)

    # -- allow_origins
    def test_allow_origins_refuses_foreign_pages(self):
        for origin in ("https://desk.example.com", "https://a.partners.example.com", "https://x.y.partners.example.com",
                       self.own):  # the server's own pages (the widget polling) pass
            st, body = self.https_json("/v1/sports", "origin-key", {"Origin": origin})
            self.assertEqual((st, body["success"]), (200, True), origin)
        for origin in ("https://evil.example.com", "https://partners.example.com", "http://desk.example.com",
                       "https://desk.example.com:8443", "null"):
            self.assertEqual(self.https_json("/v1/sports", "origin-key", {"Origin": origin}), (403, ORIGIN_REFUSED),
                             origin)
        self.assertEqual(self.https_json("/v1/sports", "origin-key")[0], 200)  # no Origin: not a browser
        self.assertEqual(self.https_json("/v1/sports", "any-key", {"Origin": "https://evil.example.com"})[0], 200)
        # The widget page in a foreign iframe: its load carries only a Referer.
        eid = self.live_soccer()
        page = f"/widget?event_id={eid}&api_key=origin-key"
        st, body = self.https(page, headers={"Referer": "https://evil.example.com/board"})
        self.assertEqual((st, json.loads(body)), (403, ORIGIN_REFUSED))
        st, body = self.https(page, headers={"Referer": "https://desk.example.com/board"})
        self.assertEqual(st, 200)
        self.assertTrue(body.lower().startswith(b"<!doctype html>"), body[:100])
        st, body = self.https_json(f"/widget-data?event_id={eid}&api_key=origin-key",
                                   headers={"Referer": f"{self.own}{page}"})
        self.assertEqual((st, body["data"]["event_id"]), (200, eid))
        # Stream handshakes.
        info = h.run_async(self.stream("/pt-ws?protocol=v2", "origin-key", origin="https://desk.example.com",
                                       frames=1))[0]
        self.assertEqual(info.split(h.SEP)[0], "INFO")
        self.assertEqual(h.run_async(self.refused("/pt-ws?protocol=v2", "origin-key",
                                                  origin="https://evil.example.com")), 403)
        self.assertEqual(h.run_async(self.refused("/ws", "origin-key", origin="https://partners.example.com")), 403)

    def test_explorer_demo_key_works_from_its_page_through_the_proxy(self):
        st, page = self.https("/docs/explore?event=1")
        self.assertEqual(st, 200)
        demo = page.decode().split('const KEY = "', 1)[1].split('"', 1)[0]
        self.assertRegex(demo, r"^explorer-[0-9a-f]{32}$")
        for origin in (self.own, PUBLIC):
            st, body = self.https_json("/v1/sports", demo, {"Origin": origin})
            self.assertEqual((st, body["success"]), (200, True), origin)
        st, body = self.https_json("/v1/sports", demo, {"Referer": self.own + "/docs/explore?event=1"})
        self.assertEqual(st, 200, body)
        locked = (403, {"error": "This demo key only works from the explorer page of this server"})
        for headers in ({}, {"Origin": "https://evil.example.com"}, {"Origin": "http://odds.example.com"}):
            self.assertEqual(self.https_json("/v1/sports", demo, headers), locked, headers)

    # -- the PROXY protocol
    def raw(self, data, source):
        """Writes `data` straight to the server from `source`; the answer:
        one response (by its Content-Length), or a stream's 101 and its
        first frame, or whatever came before the server closed."""
        with socket.create_connection(("127.0.0.1", self.srv.port), timeout=30, source_address=(source, 0)) as s:
            s.sendall(data.encode())
            got = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
                head, sep, body = got.partition(b"\r\n\r\n")
                if not sep:
                    continue
                if head.startswith(b"HTTP/1.1 101"):
                    if h.SEP.encode() in body:
                        break  # a stream: its handshake and first frame are enough
                    continue
                m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                if m and len(body) >= int(m.group(1)):
                    break
        return got.decode("utf-8", "replace")

    def proxied(self, client, path, key, extra=""):
        return self.raw(f"PROXY TCP4 {client} 127.0.0.1 40000 {self.srv.port}\r\n"
                        f"GET {path} HTTP/1.1\r\nHost: odds.example.com\r\nX-API-Key: {key}\r\n{extra}"
                        "Connection: close\r\n\r\n", "127.0.0.1")

    def test_proxy_protocol_line_from_the_trusted_peer_names_the_client(self):
        status = lambda r: int(r.split(" ", 2)[1])
        self.assertEqual(status(self.proxied(CLIENT, "/v1/sports", "client-key")), 200)
        self.assertEqual(status(self.proxied("198.51.100.7", "/v1/sports", "forged-key")), 200)
        r = self.proxied("198.51.100.7", "/v1/sports", "client-key")
        self.assertEqual(status(r), 403)
        self.assertIn(json.dumps(IP_REFUSED, separators=(",", ":")), r)
        # The named client is then the peer whose X-Forwarded-For is judged: untrusted, so ignored.
        r = self.proxied(CLIENT, "/v1/sports", "forged-key", "X-Forwarded-For: 198.51.100.7\r\n")
        self.assertEqual(status(r), 403)
        # A stream handshake after the line.
        up = ("Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
        r = self.raw(f"PROXY TCP4 {CLIENT} 127.0.0.1 40001 {self.srv.port}\r\n"
                     f"GET /pt-ws?protocol=v2 HTTP/1.1\r\nHost: x\r\nX-API-Key: client-key\r\n{up}"
                     "Connection: Upgrade\r\n\r\n", "127.0.0.1")
        self.assertTrue(r.startswith("HTTP/1.1 101 "), r[:300])
        self.assertIn("INFO" + h.SEP + "PUB" + h.SEP, r)
        r = self.raw(f"PROXY TCP4 198.51.100.9 127.0.0.1 40002 {self.srv.port}\r\n"
                     f"GET /pt-ws?protocol=v2 HTTP/1.1\r\nHost: x\r\nX-API-Key: client-key\r\n{up}"
                     "Connection: Upgrade\r\n\r\n", "127.0.0.1")
        self.assertEqual(status(r), 403)
        # Without a line the trusted peer is itself the client.
        self.assertEqual(status(self.direct_raw("/v1/sports", "client-key", "127.0.0.1")), 403)

    def direct_raw(self, path, key, source):
        return self.raw(f"GET {path} HTTP/1.1\r\nHost: x\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n", source)

    def test_proxy_protocol_line_from_an_untrusted_peer_is_a_bad_request(self):
        r = self.raw(f"PROXY TCP4 198.51.100.7 127.0.0.1 40000 {self.srv.port}\r\n"
                     "GET /v1/sports HTTP/1.1\r\nHost: x\r\nX-API-Key: forged-key\r\n\r\n", CLIENT)
        self.assertTrue(r.startswith("HTTP/1.1 400 "), r)
        self.assertTrue(r.endswith('{"error":"PROXY protocol header from a peer outside --trust-proxy"}'), r)
        self.assertEqual(r.count("HTTP/1.1"), 1)  # the request behind the line was not answered
        r = self.raw(f"PROXY TCP4 198.51.100.7 127.0.0.1 40000\r\nGET / HTTP/1.1\r\n\r\n", "127.0.0.1")
        self.assertTrue(r.startswith("HTTP/1.1 400 "), r)
        self.assertTrue(r.endswith('{"error":"Malformed PROXY protocol header"}'), r)
        # The server goes on serving.
        self.assertEqual(self.direct("/v1/sports", "client-key")[0], 200)


if __name__ == "__main__":
    h.main()
