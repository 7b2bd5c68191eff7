"""The pages in headless Chromium: the explorer shows every call for a live
event with its live response and updates its odds as frames arrive (its
demo key refused from anywhere else); the widget renders two keys'
settings. Screenshots go to --screenshots (default: the build dir)."""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

import harness as h
from browser import Browser

SHOTS = os.environ.get("ODDSRELAY_SCREENSHOTS")
KEYS = {"keys": [
    {"key": "page-key", "permissions": ["live", "prematch", "odds", "scores", "widget"]},
    {"key": "w-dark", "permissions": ["widget"],
     "widget": {"theme": "dark", "accent": "#e5484d", "border_radius": 16, "font_family": "Georgia, serif",
                "show": {"stats": True, "timeline": True, "pitch": True, "corners": True}}},
    {"key": "w-light", "permissions": ["widget"],
     "widget": {"theme": "light", "accent": "#1f6feb", "border_radius": 2, "show": {"stats": False, "pitch": False}}},
    {"key": "no-widget", "permissions": ["live"]},
]}


class Pages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-pages-")
        cls.shots = SHOTS or os.path.join(h.args().build_dir, "screenshots")
        os.makedirs(cls.shots, exist_ok=True)
        keys = os.path.join(cls.dir, "keys.json")
        with open(keys, "w") as f:
            json.dump(KEYS, f)
        cls.srv = h.Server("--feed", "sim:seed=6,events=80,rate=600", "--keys", keys, "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        time.sleep(1)

    @classmethod
    def tearDownClass(cls):
        rc, log = cls.srv.stop()
        cls.srv.__exit__()
        shutil.rmtree(cls.dir)
        assert rc == 0, log

    def get(self, path, key="page-key", headers=None):
        r, body = h.request(self.srv.port, path, key, headers=headers)
        return r.status, body

    def live_soccer(self):
        st, body = self.get("/widget-events")
        self.assertEqual(st, 200)
        return [e for e in json.loads(body)["data"] if e["sport"] == 1][0]["event_id"]

    def test_widget_json(self):
        eid = self.live_soccer()
        st, body = self.get(f"/widget-data?event_id={eid}", key="w-dark")
        d = json.loads(body)["data"]
        self.assertEqual(d["event_id"], eid)
        for k in ("home", "away", "score", "clock", "period", "match_length", "timeline", "stats", "settings"):
            self.assertIn(k, d)
        self.assertEqual(d["settings"]["theme"], "dark")
        self.assertEqual(self.get(f"/widget-data?event_id={eid}", key="no-widget")[0], 403)
        self.assertEqual(self.get("/widget-data", key="w-dark")[0], 400)
        self.assertEqual(self.get("/widget-data?event_id=987654321", key="w-dark")[0], 404)

    def test_explorer_key_is_locked_to_the_page(self):
        st, page = self.get("/docs/explore?event=1", key=None)
        self.assertEqual(st, 200)
        demo = page.decode().split('const KEY = "', 1)[1].split('"', 1)[0]
        self.assertTrue(demo.startswith("explorer-"))
        own = f"http://127.0.0.1:{self.srv.port}"
        self.assertEqual(self.get("/v1/live", key=demo, headers={"Origin": own})[0], 200)
        self.assertEqual(self.get("/v1/live", key=demo, headers={"Referer": own + "/docs/explore?event=1"})[0], 200)
        self.assertEqual(self.get("/v1/live", key=demo)[0], 403)  # no Origin, no Referer
        self.assertEqual(self.get("/v1/live", key=demo, headers={"Origin": "http://evil.example"})[0], 403)
        self.assertEqual(self.get("/widget-events", key=demo, headers={"Origin": own})[0], 403)  # read-only scope
        self.assertEqual(self.get("/docs/explore", key=None)[0], 400)

    def test_explorer_in_chromium(self):
        eid = self.live_soccer()
        number = eid.rsplit(".", 1)[-1].rsplit("-", 1)[-1]
        url = f"http://127.0.0.1:{self.srv.port}/docs/explore?event={number}"

        async def go(s):
            await s.goto(url)
            await s.wait_for("document.body.dataset.calls === '5'")
            statuses = await s.eval("[...document.querySelectorAll('.call .status')].map(e => e.textContent)")
            calls = await s.eval("[...document.querySelectorAll('.call code')].map(e => e.textContent)")
            rows = await s.eval("document.querySelectorAll('#odds tbody tr').length")
            await s.wait_for("Number(document.body.dataset.oddsUpdates) >= 2", timeout=30)
            shot = await s.screenshot(os.path.join(self.shots, "explorer.png"))
            first_price = await s.eval("document.querySelector('#odds tbody tr td:nth-child(4)').textContent")
            state = await s.eval("document.getElementById('ptws-state').textContent")
            return statuses, calls, rows, shot, first_price, state

        with Browser() as b:
            statuses, calls, rows, shot, price, state = b.run(go)
        self.assertEqual(statuses, ["200"] * 5)
        self.assertTrue(any("/v1/odds?ids=" in c for c in calls))
        self.assertTrue(all("explorer-" not in c for c in calls))  # shown as <API_KEY>
        self.assertTrue(any("/pt-ws?protocol=v2" in c for c in calls))
        self.assertGreater(rows, 0)
        self.assertEqual(state, "connected")
        self.assertRegex(price, r"^\d+\.\d\d$")
        self.assertGreater(os.path.getsize(shot), 10_000)

    def test_widget_two_keys_in_chromium(self):
        eid = self.live_soccer()
        results = {}
        for key in ("w-dark", "w-light"):
            url = f"http://127.0.0.1:{self.srv.port}/widget?event_id={eid}&api_key={key}"

            async def go(s, key=key):
                await s.goto(url)
                await s.wait_for("document.body.dataset.ready === '1'")
                return {
                    "theme": await s.eval("document.body.dataset.theme"),
                    "accent": await s.eval("getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()"),
                    "radius": await s.eval("getComputedStyle(document.getElementById('w')).borderTopLeftRadius"),
                    "stats_hidden": await s.eval("document.getElementById('stats').classList.contains('hidden')"),
                    "pitch_hidden": await s.eval("document.getElementById('pitch').classList.contains('hidden')"),
                    "score": await s.eval("document.getElementById('score').textContent"),
                    "shot": await s.screenshot(os.path.join(self.shots, f"widget-{key}.png")),
                }
            with Browser(420, 640) as b:
                results[key] = b.run(go)
        d, l = results["w-dark"], results["w-light"]
        self.assertEqual((d["theme"], d["accent"], d["radius"]), ("dark", "#e5484d", "16px"))
        self.assertEqual((l["theme"], l["accent"], l["radius"]), ("light", "#1f6feb", "2px"))
        self.assertFalse(d["stats_hidden"] or d["pitch_hidden"])
        self.assertTrue(l["stats_hidden"] and l["pitch_hidden"])
        self.assertRegex(d["score"], r"^\d+ : \d+$")
        def png(path):
            with open(path, "rb") as f:
                return f.read()
        self.assertNotEqual(png(d["shot"]), png(l["shot"]))
        st, _ = self.get(f"/widget?event_id={eid}&api_key=no-widget", key=None)
        self.assertEqual(st, 403)


if __name__ == "__main__":
    h.main()
