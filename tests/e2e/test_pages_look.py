"""What the pages look like, in headless Chromium against the server on the
simulator: the explorer for a soccer event, a tennis event and an unknown
one, and the widget for soccer, tennis and basketball. Each case saves a
whole-page screenshot under <build-dir>/screenshots (or
$ODDSRELAY_SCREENSHOTS) and prints its path, then checks the DOM:

- explorer: every answer folded in a <details> and pretty-printed, nothing
  wider than the page; the odds table names markets and outcomes as
  /v1/markets does (ids only on hover); a score card; the stream state
  "connected" and no "connecting" left, or "no such event" for an unknown
  id (and no stream opened); a sparkline per outcome, some with a move.
- widget: a pitch for soccer only, a court for basketball, a set board and
  no drawing for tennis; no marker on a drawing; no "Corners" block; a
  timeline that names what happened (goal, points, set) with the team."""
import json
import os
import re
import tempfile
import time
import unittest

import harness as h
from browser import Browser

SHOTS = os.environ.get("ODDSRELAY_SCREENSHOTS")
KEYS = {"keys": [
    {"key": "look-key", "permissions": ["live", "prematch", "odds", "scores", "widget"]},
    {"key": "w-look", "permissions": ["widget"],
     "widget": {"theme": "light", "accent": "#1f6feb", "border_radius": 10,
                "show": {"stats": True, "timeline": True, "pitch": True, "corners": True}}},
]}
SOCCER, BASKETBALL, TENNIS = 1, 2, 5
NAMED_KINDS = {"start", "goal", "points", "run", "set", "period", "end", "yellow_cards", "red_cards", "corners", "fix"}


class PagesLook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="oddsrelay-look-")
        cls.shots = SHOTS or os.path.join(h.args().build_dir, "screenshots")
        os.makedirs(cls.shots, exist_ok=True)
        keys = h.write_keys(cls.dir, KEYS)
        cls.srv = h.Server("--feed", "sim:seed=6,events=80,rate=600", "--keys", keys, "--progress", "0")
        cls.srv.wait_for(r"serving http://")
        cls.base = f"http://127.0.0.1:{cls.srv.port}"

    @classmethod
    def tearDownClass(cls):
        h.shut_down(cls.srv, cls.dir)

    def get_json(self, path):
        r, body = h.request(self.srv.port, path, "look-key")
        self.assertEqual(r.status, 200, body[:200])
        return json.loads(body)

    def live(self, sport, want=lambda d: True, timeout=120):
        """A live event of `sport` whose /widget-data satisfies `want`; its id."""
        def find():
            for e in self.get_json("/widget-events")["data"]:
                if e["sport"] == sport and e["status"] == "live":
                    d = self.get_json(f"/widget-data?event_id={e['event_id']}")["data"]
                    if want(d):
                        return e["event_id"]
            return None
        return h.wait_until(find, timeout, f"a live event of sport {sport} for this case", interval=1)

    def shot_path(self, name):
        path = os.path.abspath(os.path.join(self.shots, name))
        print(f"\nscreenshot: {path}", flush=True)
        return path

    # ---------------------------------------------------------------- explorer

    def explore(self, event, name, sport=None):
        """Opens the explorer for `event`, waits for the calls and (known
        events) the stream and some price moves, screenshots it, and
        returns what the DOM shows."""
        url = f"{self.base}/docs/explore?event={event}"

        async def go(s):
            await s.goto(url)
            await s.wait_for("document.body.dataset.done === '1'", timeout=30)
            if sport is not None:
                await s.wait_for("document.getElementById('ptws-state').textContent === 'connected'", timeout=30)
                await s.wait_for("Number(document.body.dataset.oddsUpdates) >= 3", timeout=60)
                # Some outcome's price moved while the page was open (bounded: the simulator reprices every second).
                await s.wait_for("[...document.querySelectorAll('svg.sparkline')].some(e => Number(e.dataset.points) >= 2)",
                                 timeout=60)
            else:
                await s.eval("new Promise(r => setTimeout(r, 3000))")  # a stream would have opened by now
            out = await s.eval("""(() => {
              const rows = [...document.querySelectorAll('#odds tbody tr[data-market]')];
              const cell = (tr, c) => tr.querySelector('td.' + c);
              let market = null;
              // Every answer unfolded, to measure it; then folded back as it was.
              const calls = [...document.querySelectorAll('#calls > .call')], was = calls.map(d => d.open);
              calls.forEach(d => { d.open = true; });
              const wide = calls.map(d => d.querySelector('pre').scrollWidth > d.querySelector('pre').clientWidth + 1);
              const pageWide = document.documentElement.scrollWidth > document.documentElement.clientWidth + 1;
              calls.forEach((d, i) => { d.open = was[i]; });
              return {
                calls: calls.map((d, i) => ({
                  tag: d.tagName, summary: d.querySelector('summary') ? d.querySelector('summary').textContent : '',
                  status: d.querySelector('.status').textContent, pre: d.querySelector('pre').textContent, wide: wide[i]})),
                pageWide,
                rows: rows.map(tr => {
                  if (cell(tr, 'market')) market = cell(tr, 'market');
                  return {market: market.textContent, marketTitle: market.title,
                          line: cell(tr, 'line').textContent, lineTitle: cell(tr, 'line').title,
                          outcome: cell(tr, 'outcome').textContent, outcomeTitle: cell(tr, 'outcome').title,
                          price: cell(tr, 'price').textContent, sparks: tr.querySelectorAll('svg.sparkline').length};
                }),
                moved: [...document.querySelectorAll('svg.sparkline')].filter(e => Number(e.dataset.points) >= 2).length,
                state: document.getElementById('ptws-state').textContent,
                ptwsUrl: document.getElementById('ptws-url').textContent,
                text: document.body.innerText,
                score: {home: document.getElementById('sc-home').textContent, nums: document.getElementById('sc-nums').textContent,
                        away: document.getElementById('sc-away').textContent, meta: document.getElementById('sc-meta').textContent},
              };
            })()""")
            out["shot"] = await s.screenshot(self.shot_path(name), full=True)
            # On a phone-wide screen too, no answer is wider than its box.
            await s.call("Emulation.setDeviceMetricsOverride", width=420, height=900, deviceScaleFactor=1, mobile=False)
            out["narrow"] = await s.eval("""(() => {
              const calls = [...document.querySelectorAll('#calls > .call')];
              calls.forEach(d => { d.open = true; });
              return {wide: calls.map(d => d.querySelector('pre').scrollWidth > d.querySelector('pre').clientWidth + 1),
                      pageWide: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1};
            })()""")
            await s.call("Emulation.clearDeviceMetricsOverride")
            out["state_later"] = await s.eval("document.getElementById('ptws-state').textContent")
            return out

        with Browser(1280, 900) as b:
            return b.run(go, timeout=150)

    def assert_no_connecting(self, text):
        at = text.find("connecting")
        self.assertEqual(at, -1, "the page still says: ..." + text[max(0, at - 60):at + 40] + "...")

    def check_known_explorer(self, eid, sport, name):
        ev = self.get_json(f"/v1/event?id={eid}")["data"]
        dictionary = self.get_json(f"/v1/markets?sport={sport}")["data"]
        page = self.explore(eid, name, sport)
        # Answers: folded, pretty-printed, never wider than their box.
        self.assertEqual([c["tag"] for c in page["calls"]], ["DETAILS"] * 5)
        self.assertEqual([c["status"] for c in page["calls"]], ["200"] * 5)
        for c, narrow in zip(page["calls"], page["narrow"]["wide"]):
            self.assertIn('\n  "success": true', c["pre"], c["summary"])
            self.assertFalse(c["wide"] or narrow, "scrolls sideways: " + c["summary"])
        self.assertFalse(page["pageWide"] or page["narrow"]["pageWide"])
        self.assertNotIn("explorer-", json.dumps(page["calls"]))  # the key is shown as <API_KEY>
        # Odds: names from the dictionary, the ids on hover, a sparkline each.
        self.assertGreater(len(page["rows"]), 0)
        for r in page["rows"]:
            self.assertRegex(r["marketTitle"] + "|" + r["outcomeTitle"] + "|" + r["lineTitle"],
                             r"^market id \d+\|outcome id \d+\|line key s\S*$")  # the ids on hover
            mid = r["marketTitle"].split()[-1]
            oid = r["outcomeTitle"].split()[-1]
            self.assertEqual(r["market"], dictionary["markets"].get(mid, f"Market {mid}"), r)
            self.assertEqual(r["outcome"], dictionary["outcomes"].get(oid, f"Outcome {oid}"), r)
            self.assertNotRegex(r["market"] + r["outcome"], r"^\d+$")
            key = r["lineTitle"].split()[-1]
            self.assertEqual(r["line"], "main" if key == "s" else key[1:], r)
            self.assertRegex(r["price"], r"^[▲▼]? ?\d+\.\d\d$")
            self.assertEqual(r["sparks"], 1, r)
        self.assertTrue(any(r["market"] in dictionary["markets"].values() for r in page["rows"]))
        self.assertGreater(page["moved"], 0)
        # The score card: the teams and a score, the period as the feed has it.
        sc = self.get_json(f"/v1/scores?ids={eid}")["data"]
        rec = list(sc.values())[0]
        self.assertEqual((page["score"]["home"], page["score"]["away"]), (ev["h"], ev["a"]))
        self.assertRegex(page["score"]["nums"], r"^\d+ : \d+$")
        self.assertIn(rec["status"], page["score"]["meta"])
        # The stream: connected, nothing says connecting any more.
        self.assertEqual(page["state"], "connected")
        self.assert_no_connecting(page["text"])
        self.assertGreater(os.path.getsize(page["shot"]), 20_000)
        return page

    def test_explorer_soccer(self):
        eid = self.live(SOCCER)
        self.check_known_explorer(eid, SOCCER, "explorer-soccer.png")

    def test_explorer_tennis(self):
        eid = self.live(TENNIS)
        page = self.check_known_explorer(eid, TENNIS, "explorer-tennis.png")
        self.assertRegex(page["score"]["meta"], r"set \d")  # the feed's S2 shown as "set 2"

    def test_explorer_unknown_event(self):
        page = self.explore("987654321", "explorer-unknown.png")
        self.assertEqual([c["status"] for c in page["calls"]], ["404"])
        self.assertEqual((page["state"], page["state_later"]), ("no such event", "no such event"))
        self.assert_no_connecting(page["text"])
        self.assertNotIn("sports=", page["ptwsUrl"])  # no stream was opened for it
        self.assertIn("no such event", page["score"]["meta"])
        # The page links the machine-readable contract, which needs no key.
        r, html = h.request(self.srv.port, "/docs/explore?event=987654321")
        self.assertIn(b'<a id="contract" href="/openapi.json">', html)
        r, doc = h.request(self.srv.port, "/openapi.json")
        self.assertEqual((r.status, json.loads(doc)["openapi"][:3]), (200, "3.1"))

    # ------------------------------------------------------------------ widget

    def widget(self, eid, name):
        url = f"{self.base}/widget?event_id={eid}&api_key=w-look"

        async def go(s):
            await s.goto(url)
            await s.wait_for("document.body.dataset.ready === '1'", timeout=30)
            out = await s.eval("""(() => {
              const vis = (id) => { const e = document.getElementById(id); return !!e && !e.classList.contains('hidden'); };
              return {
                layout: document.body.dataset.layout,
                pitchVisible: vis('pitch'), boardVisible: vis('board'),
                drawings: [...document.querySelectorAll('#field svg')].map(s => s.getAttribute('class')),
                filledMarks: [...document.querySelectorAll('#pitch svg circle')].filter(c => c.getAttribute('fill') !== 'none').length,
                ball: !!document.getElementById('ball'),
                headings: [...document.querySelectorAll('section:not(.hidden) h3')].map(e => e.textContent),
                statRows: [...document.querySelectorAll('#stat-table tr[data-stat]')].map(e => e.dataset.stat),
                timeline: [...document.querySelectorAll('#tl > div')].map(e => ({kind: e.dataset.kind, text: e.textContent})),
                sets: [...document.querySelectorAll('#sets tr')].map(tr => [...tr.children].map(c => c.textContent)),
                score: document.getElementById('score').textContent,
                home: document.getElementById('home').textContent, away: document.getElementById('away').textContent,
                text: document.body.innerText,
              };
            })()""")
            out["shot"] = await s.screenshot(self.shot_path(name), full=True, width=420)
            return out

        with Browser(420, 720) as b:
            return b.run(go, timeout=90)

    def check_timeline_names(self, w, kinds):
        self.assertTrue(w["timeline"], w)
        for t in w["timeline"]:
            self.assertIn(t["kind"], NAMED_KINDS, t)
        named = [t for t in w["timeline"] if t["kind"] in kinds]
        self.assertTrue(named, w["timeline"])
        for t in named:  # says who: one of the teams is named
            self.assertTrue(w["home"] in t["text"] or w["away"] in t["text"], t)

    def test_widget_soccer(self):
        # A match with a goal in its timeline, so that there is a goal to name.
        eid = self.live(SOCCER, lambda d: len(d["timeline"]) >= 2 and d["timeline"][-1]["home"] + d["timeline"][-1]["away"] > 0)
        w = self.widget(eid, "widget-soccer.png")
        self.assertEqual(w["layout"], "pitch")
        self.assertTrue(w["pitchVisible"])
        self.assertEqual(w["drawings"], ["field pitch"])
        self.assertEqual((w["filledMarks"], w["ball"]), (0, False))  # no unexplained dot
        self.assertNotIn("Corners", w["headings"])  # corners are a stats row, once
        self.assertLessEqual(w["statRows"].count("corners"), 1)
        self.assertFalse(w["boardVisible"])
        self.check_timeline_names(w, {"goal"})
        self.assertTrue(any(re.match(r"^\d+'(\d )?Goals? · ", t["text"]) for t in w["timeline"]), w["timeline"])

    def test_widget_tennis(self):
        eid = self.live(TENNIS)
        w = self.widget(eid, "widget-tennis.png")
        self.assertEqual(w["layout"], "sets")
        self.assertFalse(w["pitchVisible"])
        self.assertEqual(w["drawings"], [])  # no pitch, no court drawn
        self.assertNotIn("corner", w["text"].lower())
        self.assertTrue(w["boardVisible"])
        self.assertEqual(w["sets"][0][1:4], ["Set 1", "Set 2", "Set 3"])
        self.assertEqual([r[0] for r in w["sets"][1:]], [w["home"], w["away"]])
        self.assertRegex(w["score"], r"^\d+ : \d+sets$")
        for t in w["timeline"]:
            self.assertIn(t["kind"], {"start", "set", "period", "end", "fix"}, t)
        self.assertTrue(any(t["text"].startswith("Match started") or "won by" in t["text"] for t in w["timeline"]))

    def test_widget_basketball(self):
        eid = self.live(BASKETBALL, lambda d: len(d["timeline"]) >= 2)
        w = self.widget(eid, "widget-basketball.png")
        self.assertEqual(w["layout"], "court")
        self.assertEqual(w["drawings"], ["field court"])
        self.assertEqual((w["filledMarks"], w["ball"]), (0, False))
        self.assertNotIn("corner", w["text"].lower())
        self.check_timeline_names(w, {"points"})
        self.assertTrue(any(re.search(r"\+\d+ · ", t["text"]) for t in w["timeline"]), w["timeline"])


if __name__ == "__main__":
    h.main()
