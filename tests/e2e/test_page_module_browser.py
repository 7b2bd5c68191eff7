"""The pages' stream module (/js/oddsclient.mjs) in headless Chromium,
through tests/e2e/fault_proxy.py (the server runs with --ws-compression off
so the proxy can read and tamper with the frames):

- a page of another origin (tests/e2e/pages/oddsclient_follow.html) imports
  the module from the server and follows the whole stream with verify=1 on
  a replayed feed while the proxy flips one price digit in one odds: frame
  (the next INFO's digest catches it: digest_mismatch, then a snapshot),
  cuts the connection (resumed, no snapshot) and black-holes it past two
  ping intervals (stale, then resumed); at the end its replica equals
  /v1/odds for its events at its seq, digest included;
- the explorer, through the proxy: its module verifies digests, repairs a
  flipped digit and resumes after a cut; its line-movement chart has one
  path per outcome and one vertex per priced point of the history answer
  the test reads itself, one shade per run of null points."""
import asyncio
import json
import os
import re
import urllib.parse

import harness as h
from browser import Browser
from fault_proxy import FaultProxy, price_flipper
from scripted_feed import event_rec, key_of
from test_relay_state import KEY, StreamState, rest
from test_stream_browser import PageServer

PING_MS = 400


async def tamper_until(s, proxy, port, caught, seq_js, what):
    """Flips a price digit until the page reports it. The flipped market
    may be replaced whole before its INFO, which repairs it unseen: then it
    flips again, but only once the page has judged the last flip (applied a
    group at or past the server's seq read after the flip went through), so
    that a late catch of one flip never meets a second flip (the ASan CI run
    caught a flip after the 4 s the test gave it, and then a second one)."""
    for _ in range(8):
        flipped = []
        proxy.tamper = price_flipper(proxy, flipped)
        for _ in range(400):
            if flipped:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"no odds: frame went through the proxy in 20 s: {what}")
        seq = h.status(port, KEY)["seq"]
        await s.wait_for(f"({caught}) || ({seq_js}) >= {seq}", timeout=60)
        if await s.eval(f"!!({caught})"):
            return flipped
    raise AssertionError(f"never caught: {what}")


class ModuleInChromium(StreamState):
    def test_follow_page_repairs_a_flipped_digit_survives_cuts_and_ends_equal_to_rest(self):
        feed = os.path.join(self.dir, "feed.jsonl")
        h.gen_feed(feed, 6000, "seed=11,events=30,rate=400")
        with open(feed) as f:
            last_at = max(json.loads(line)["at"] for line in f if line.startswith('{"at"'))
        with open(feed, "a") as f:
            f.write(json.dumps(dict(event_rec(key_of(99999999, live=False), False), at=last_at + 1000)) + "\n")
        pages = PageServer()
        self.addCleanup(pages.close)
        # The proxy can flip a digit only while odds frames still come: the
        # feed's 15 s at speed 3 (1 when sanitized, where Chromium and the
        # page beside other tests took longer than the 5 s to go live).
        speed = 1 if h.sanitized() else 3
        with h.Server("--feed", f"replay:{feed},speed={speed}", "--keys", self.keys, "--progress", "0",
                      "--ws-ping", str(PING_MS), "--ws-compression", "off") as srv:
            srv.wait_for(r"serving http://")
            proxy = FaultProxy(srv.port)
            self.addCleanup(proxy.close)
            conf = {"server": f"127.0.0.1:{proxy.port}", "key": KEY, "pingMs": PING_MS}
            url = f"http://127.0.0.1:{pages.port}/oddsclient_follow.html#" + urllib.parse.quote(json.dumps(conf))
            count = lambda what: f"window.seen.filter(e => {what}).length"

            async def go(s):
                await s.goto(url)
                await s.wait_for("window.client && client.state === 'live' && client.verified", timeout=30)
                flipped = await tamper_until(s, proxy, srv.port, count("e.resync === 'digest_mismatch'") + " >= 1",
                                             "client.seq || 0", "digest_mismatch")
                await s.wait_for("client.state === 'live' && client.verified", timeout=15)
                resumed = h.status(srv.port, KEY)["relay"]["resumed"]
                lives = await s.eval(count("e.state === 'live'"))
                proxy.cut()
                await s.wait_for(count("e.state === 'live'") + f" > {lives}", timeout=15)
                h.wait_status(srv.port, KEY, lambda st: st["relay"]["resumed"] > resumed, "the cut resumed")
                proxy.blackhole()
                await s.wait_for(count("e.state === 'stale'") + " >= 1", timeout=10)
                proxy.heal()
                lives = await s.eval(count("e.state === 'live'"))
                await s.wait_for(count("e.state === 'live'") + f" > {lives}", timeout=20)
                final = h.wait_done(srv.port, KEY)["seq"]  # done, and the engine has applied the last record
                await s.wait_for(f"client.seq === {final} && client.verified", timeout=30)
                return flipped, final, await s.eval(
                    "JSON.stringify({seen: window.seen, view: client.view(), epoch: client.epoch, resyncs: client.resyncs,"
                    " digest: client.replica.hex(), connects: client.connects})")

            with Browser() as b:
                flipped, final, out = b.run(go, timeout=240)
            got = json.loads(out)
            print(f"  flipped price {flipped}, final seq {final}, connects {got['connects']}, states",
                  [e.get("state") or "resync:" + e["resync"] for e in got["seen"]])
            self.assertEqual(got["resyncs"], ["digest_mismatch"])  # every cut resumed
            keys = sorted(got["view"])
            self.assertTrue(keys)
            want = {}
            for chunk in (keys[i:i + 100] for i in range(0, len(keys), 100)):
                ans = rest(srv.port, "/v1/odds?digest=1&ids=" + ",".join(chunk))
                self.assertEqual((ans["seq"], ans["epoch"]), (final, got["epoch"]))
                want.update(ans["data"])
            self.assertEqual(json.dumps(got["view"], sort_keys=True), json.dumps(want, sort_keys=True))


class ExplorerInChromium(h.WithKeys):
    KEYS, SCRATCH = {"keys": [{"key": KEY, "permissions": ["live", "prematch", "odds"]}]}, "page-module"

    def test_explorer_verifies_repairs_resumes_and_draws_the_history(self):
        with h.Server("--feed", "sim:seed=6,events=20,rate=600", "--keys", self.keys, "--progress", "0",
                      "--ws-compression", "off") as srv:
            srv.wait_for(r"serving http://")

            def worth_drawing():
                """A live event with odds whose history has a null point: the
                chart's shades are then tested too."""
                for evs in rest(srv.port, "/v1/live")["data"].values():
                    for ev in evs:
                        if not rest(srv.port, f"/v1/odds?ids={ev}")["data"].get(ev):
                            continue
                        hist = rest(srv.port, f"/v1/odds/history?id={ev}")["data"]
                        if any(p[1] is None for ls in hist.values() for os_ in ls.values() for v in os_.values()
                               for p in v["points"]):
                            return ev
                return None
            eid = h.wait_until(worth_drawing, 90, "a live soccer event with suspensions in its history", interval=1)
            proxy = FaultProxy(srv.port)
            self.addCleanup(proxy.close)
            body = "document.body.dataset"

            async def go(s):
                await s.goto(f"http://127.0.0.1:{proxy.port}/docs/explore?event={eid}")
                await s.wait_for(f"{body}.streamState === 'live' && {body}.verified === 'true' && {body}.history", 40)
                drawn = await s.eval("""JSON.stringify({seq: Number(document.body.dataset.historySeq),
                  paths: [...document.querySelectorAll('path.movement')].map(p => [p.dataset.key, p.getAttribute('d')]),
                  shades: [...document.querySelectorAll('rect.suspended')].map(r => r.dataset.key)})""")
                await tamper_until(s, proxy, srv.port, f"({body}.resyncs || '').includes('digest_mismatch')",
                                   f"Number({body}.streamSeq || 0)", "digest_mismatch")
                groups = int(await s.eval(f"{body}.groups"))
                await s.wait_for(f"{body}.streamState === 'live' && {body}.verified === 'true' && "
                                 f"Number({body}.groups) > {groups + 2}", 20)
                resumed = h.status(srv.port, KEY)["relay"]["resumed"]
                proxy.cut()
                h.wait_status(srv.port, KEY, lambda st: st["relay"]["resumed"] > resumed, "the explorer resumed")
                groups = int(await s.eval(f"{body}.groups"))
                await s.wait_for(f"{body}.streamState === 'live' && Number({body}.groups) > {groups + 2} && "
                                 f"{body}.verified === 'true'", 20)
                return json.loads(drawn), await s.eval(
                    "JSON.stringify({resyncs: oddsclient.resyncs, state: document.getElementById('ptws-state').textContent,"
                    " detail: document.getElementById('ptws-detail').textContent})")

            with Browser(1280, 900) as b:
                drawn, after = b.run(go, timeout=200)
            after = json.loads(after)
            self.assertEqual(after["resyncs"], ["digest_mismatch"], after)  # the cut resumed: no second resync
            self.assertEqual(after["state"], "connected")
            self.assertIn("digest verified", after["detail"])
            print(f"  explorer after the flip and the cut: {after}; {len(drawn['paths'])} paths, "
                  f"{len(drawn['shades'])} shades up to seq {drawn['seq']}")
            self.assert_chart(srv.port, eid, drawn)

    def assert_chart(self, port, eid, drawn):
        """The page's paths and shades against the history answer read here,
        cut at the seq the page's answer had."""
        ans = rest(port, f"/v1/odds/history?id={eid}")
        self.assertGreaterEqual(ans["seq"], drawn["seq"])
        want_paths, want_shades = {}, []
        for m, lines in ans["data"].items():
            for l, outcomes in lines.items():
                for o, v in outcomes.items():
                    pts = [p for p in v["points"] if p[4] <= drawn["seq"]]
                    if not any(p[1] is not None for p in pts):
                        continue
                    want_paths[f"{m}|{l}|{o}"] = [p for p in pts if p[1] is not None]
                    want_shades += [f"{m}|{l}|{o}"] * sum(
                        1 for i, p in enumerate(pts) if p[1] is None and (i == 0 or pts[i - 1][1] is not None))
        paths = dict(drawn["paths"])
        self.assertEqual(len(paths), len(drawn["paths"]), "two paths for one outcome")
        self.assertEqual(sorted(paths), sorted(want_paths))
        self.assertGreater(sum(len(v) for v in want_paths.values()), len(want_paths))  # prices moved
        for k, d in paths.items():
            vertices = [(float(x), float(y)) for x, y in re.findall(r"[ML]([\d.]+) ([\d.]+)", d)]
            pts = want_paths[k]
            self.assertEqual(len(vertices), len(pts), k)
            # In time order, and higher prices drawn higher (smaller y; a
            # 0.01 move on a tall scale may round to the same tenth of a pixel).
            self.assertEqual([x for x, _ in vertices], sorted(x for x, _ in vertices), k)
            for (_, ya), (_, yb), pa, pb in zip(vertices, vertices[1:], pts, pts[1:]):
                self.assertGreaterEqual((ya - yb) * (pb[1] - pa[1]), 0, (k, pa, pb))
        self.assertEqual(sorted(drawn["shades"]), sorted(want_shades))


if __name__ == "__main__":
    h.main()
