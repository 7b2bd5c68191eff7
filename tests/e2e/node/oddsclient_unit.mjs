// Drives rest/pages/oddsclient.mjs (the pages' stream module) in node for
// tests/e2e/test_page_module.py: reads one JSON job on stdin, writes its
// result as JSON. Jobs: {"hash": [texts]} -> hex XXH64 of each;
// {"replica": [[channel, body], ...]} -> the replica's digest and data after
// each frame; {"backoff": n} -> delays at rand 0 and 1 and n random draws per
// attempt; {"machine": true} -> what the client did in scripted sessions
// against a fake WebSocket (no network).
import { xxh64Text, hex16, Replica, backoffDelay, OddsClient } from "../../../rest/pages/oddsclient.mjs";

const job = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => ok(s)); }));
const out = {};

if (job.hash) out.hash = job.hash.map((t) => hex16(xxh64Text(t)));

if (job.replica) {
  const r = new Replica();
  out.replica = job.replica.map(([ch, body]) => {
    try { r.apply(ch, body, new Set(), new Set()); } catch (e) { return { error: e.constructor.name }; }
    return { digest: r.hex(), data: r.data() };
  });
}

if (job.backoff !== undefined) {
  out.backoff = [];
  for (let n = 0; n < 12; n++) {
    const draws = Array.from({ length: job.backoff }, () => backoffDelay(n));
    out.backoff.push({ n, low: backoffDelay(n, () => 0), high: backoffDelay(n, () => 1), min: Math.min(...draws), max: Math.max(...draws) });
  }
}

// A WebSocket the script feeds by hand: each client connection is one.
class FakeWS {
  static made = [];
  constructor(url) { this.url = url; this.closed = false; FakeWS.made.push(this); }
  close() { this.closed = true; }
  send(text) { this.onmessage && this.onmessage({ data: text }); }
  cut() { this.onclose && this.onclose({ code: 1006 }); }
}
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const F = (type, ch, body) => `${type}\x1f${ch}\x1f${typeof body === "string" ? body : JSON.stringify(body)}`;
const EV = "s1-101.10000001";
const market = (price) => ({ s: { 2001: [price, 0, 0, 1], 2002: [340, 0, 0, 1], s: 0, ls: 5 } });
function digestOf(events, odds) {
  const r = new Replica();
  r.apply("evt:1", events, new Set(), new Set());
  for (const [n, book] of Object.entries(odds)) r.apply(`odds:1:${n}`, book, new Set(), new Set());
  return r.hex();
}

async function session(script, opts = {}) {
  FakeWS.made = [];
  const log = [];
  const c = new OddsClient({ url: "http://127.0.0.1:1", key: "k", events: [EV, "2"], verify: true, pingMs: 100,
    WebSocket: FakeWS, random: () => 0, ...opts, onEvent: (e) => log.push(e.state ? `state:${e.state}` : `resync:${e.resync}`),
    onGroup: (g) => log.push(`group:${g.seq}${g.verified ? ":verified" : ""}${g.snapshot ? ":snapshot" : ""}`) });
  c.start();
  await script(c, () => FakeWS.made[FakeWS.made.length - 1]);
  c.close();
  return { log, urls: FakeWS.made.map((w) => w.url), seq: c.seq, view: c.view(), resyncs: c.resyncs };
}
const snapshot = async (ws, seq, price = 185, ready = {}) => {
  ws.send(F("INFO", "PUB", { ready: true, epoch: "E", seq, ...ready }));
  ws.send(F("P", "evt:1", { [EV]: { live: true, sport: 1 } }));
  ws.send(F("P", "odds:1:10000001", { 1001: market(price) }));
  ws.send(F("INFO", "PUB", { seq, from: seq + 1, digest: digestOf({ [EV]: { live: true } }, { 10000001: { 1001: market(price) } }) }));
};

if (job.machine) {
  out.machine = {
    // Snapshot, a verified delta, a cut (resumed: no snapshot), a gap.
    gap: await session(async (c, ws) => {
      await snapshot(ws(), 10);
      ws().send(F("P", "odds:1:10000001", { 1001: market(190) }));
      out.midGroupSeq = c.seq;  // frames held until their INFO
      out.midGroupPrice = c.view()[EV][1001].s[2001][0];
      ws().send(F("INFO", "PUB", { seq: 12, from: 11, digest: digestOf({ [EV]: {} }, { 10000001: { 1001: market(190) } }) }));
      ws().cut();
      await sleep(20);
      ws().send(F("INFO", "PUB", { ready: true, resumed: true, epoch: "E", seq: 14 }));
      ws().send(F("INFO", "PUB", { seq: 14, from: 13 }));
      ws().send(F("INFO", "PUB", { seq: 20, from: 16 }));  // 15 is missing
      await sleep(20);
      await snapshot(ws(), 30, 200);
    }),
    refused: await session(async (c, ws) => {
      await snapshot(ws(), 10);
      ws().cut();
      await sleep(20);
      await snapshot(ws(), 40, 210, { resumed: false, reason: "too_old" });
    }),
    bad: await session(async (c, ws) => {
      await snapshot(ws(), 10);
      ws().send("P\x1fodds:1:10000001\x1f{not json");
      await sleep(20);
      await snapshot(ws(), 11);
      ws().send(F("P", "odds:1:10000001", { 1001: market(999) }));  // a tampered price
      ws().send(F("INFO", "PUB", { seq: 12, from: 12, digest: digestOf({ [EV]: {} }, { 10000001: { 1001: market(190) } }) }));
      await sleep(20);
      await snapshot(ws(), 12, 190);
    }),
    // Two ping intervals with nothing: stale, reconnected with resume.
    stale: await session(async (c, ws) => {
      await snapshot(ws(), 10);
      await sleep(350);
      ws().send(F("INFO", "PUB", { ready: true, resumed: true, epoch: "E", seq: 10 }));
    }),
    // A ready INFO that counts its snapshot: live at its last frame, no INFO
    // after it (a server standing still); an empty one at once.
    counted: await session(async (c, ws) => {
      const d = digestOf({ [EV]: { live: true } }, { 10000001: { 1001: market(185) } });
      ws().send(F("INFO", "PUB", { ready: true, epoch: "E", seq: 10, frames: 2, digest: d }));
      ws().send(F("P", "evt:1", { [EV]: { live: true, sport: 1 } }));
      ws().send(F("P", "odds:1:10000001", { 1001: market(185) }));
      ws().cut();
      await sleep(20);
      ws().send(F("INFO", "PUB", { ready: true, resumed: false, reason: "too_old", epoch: "E", seq: 20, frames: 0,
        digest: "0000000000000000" }));
    }),
    // A key the server refuses (the browser sees only a close): given up after maxFailures.
    refusedKey: await session(async (c, ws) => {
      for (let i = 0; i < 5; i++) { if (!ws().closed) ws().cut(); await sleep(10); }
    }, { maxFailures: 3 }),
  };
}

process.stdout.write(JSON.stringify(out));
