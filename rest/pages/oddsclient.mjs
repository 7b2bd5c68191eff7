// The pages' /pt-ws client (docs/clients.md "In a browser"), served by
// oddsrelay at GET /js/oddsclient.mjs: the explorer and the widget import it,
// and so may any page. It keeps a replica of what the stream carries with the
// semantics of the Python client (clients/python/oddsclient):
//
//   connecting -> syncing -> live -> stale -> resyncing
//
// a group's frames are applied at its INFO only (a snapshot at its last frame,
// which the ready INFO counts), a cut resumes with
// resume=<epoch>:<seq> after a full-jitter backoff (0.5 s .. 30 s), and a gap,
// a refused resume, a bad frame or a digest mismatch (verify=1) throws the
// replica away and syncs again from a snapshot. No dependencies, no build.

const MASK = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n, P2 = 0xc2b2ae3d27d4eb4fn, P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n, P5 = 0x27d4eb2f165667c5n;
const u64 = (x) => x & MASK;
const rotl = (x, r) => u64((x << BigInt(r)) | (x >> BigInt(64 - r)));
const round = (acc, lane) => u64(rotl(u64(acc + lane * P2), 31) * P1);
const merge = (acc, v) => u64((acc ^ round(0n, v)) * P1 + P4);
const utf8 = new TextEncoder();

// XXH64 of bytes (a Uint8Array) with a BigInt seed; browsers have none built in.
export function xxh64(bytes, seed = 0n) {
  const n = bytes.length, dv = new DataView(bytes.buffer, bytes.byteOffset, n);
  let i = 0, h;
  if (n >= 32) {
    let v1 = u64(seed + P1 + P2), v2 = u64(seed + P2), v3 = seed, v4 = u64(seed - P1);
    for (; i + 32 <= n; i += 32) {
      v1 = round(v1, dv.getBigUint64(i, true)); v2 = round(v2, dv.getBigUint64(i + 8, true));
      v3 = round(v3, dv.getBigUint64(i + 16, true)); v4 = round(v4, dv.getBigUint64(i + 24, true));
    }
    h = u64(rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18));
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else h = u64(seed + P5);
  h = u64(h + BigInt(n));
  for (; i + 8 <= n; i += 8) h = u64(rotl(h ^ round(0n, dv.getBigUint64(i, true)), 27) * P1 + P4);
  if (i + 4 <= n) { h = u64(rotl(h ^ u64(BigInt(dv.getUint32(i, true)) * P1), 23) * P2 + P3); i += 4; }
  for (; i < n; i++) h = u64(rotl(h ^ u64(BigInt(bytes[i]) * P5), 11) * P1);
  h = u64((h ^ (h >> 33n)) * P2);
  h = u64((h ^ (h >> 29n)) * P3);
  return h ^ (h >> 32n);
}
export const xxh64Text = (s) => xxh64(utf8.encode(s));
export const hex16 = (d) => u64(d).toString(16).padStart(16, "0");

// docs/api.md "State digest": one term per outcome (empty rungs add none).
export function marketSum(number, mid, market) {
  let total = 0n;
  for (const [lk, line] of Object.entries(market)) {
    const s = line.s ?? 0;
    for (const [oid, t] of Object.entries(line))
      if (oid !== "s" && oid !== "ls") total += xxh64Text(`${number}|${mid}|${lk}|${oid}|${t[0]}|${t[1]}|${s}`);
  }
  return u64(total);
}
export const eventTerm = (number) => xxh64Text(`e|${number}`);

// Reconnect delay in seconds for the n-th consecutive retry: uniform in [0, min(cap, base * 2^n)].
export const backoffDelay = (n, rand = Math.random, base = 0.5, cap = 30) => rand() * Math.min(cap, base * 2 ** Math.min(n, 32));

export class BadFrame extends Error {}
export function numberOf(key) {
  const tail = String(key).split(".").pop().split("-").pop();
  if (!/^\d+$/.test(tail)) throw new BadFrame(`not an event id: ${key}`);
  return Number(tail);
}

// What the stream carries, with its digest kept as frames are applied: pure state, no I/O.
export class Replica {
  constructor() { this.events = {}; this.odds = new Map(); this.sums = new Map(); this.eventTotal = 0n; this.oddsTotal = 0n; }
  digest() { return u64(this.eventTotal + this.oddsTotal); }
  hex() { return hex16(this.digest()); }
  dropOdds(n) {
    for (const s of Object.values(this.sums.get(n) || {})) this.oddsTotal -= s;
    this.odds.delete(n); this.sums.delete(n);
  }
  applyEvents(body, changed) {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new BadFrame("evt: frame is not an object");
    for (const [key, obj] of Object.entries(body)) {
      const n = numberOf(key);
      if (key in this.events) this.eventTotal -= eventTerm(n);
      if (obj === null) delete this.events[key];
      else if (typeof obj !== "object" || Array.isArray(obj)) throw new BadFrame("event is not an object");
      else { this.events[key] = obj; this.eventTotal += eventTerm(n); }
      if (obj === null || !obj.live) this.dropOdds(n);  // odds channels exist only for live events
      changed.add(key);
    }
  }
  applyOdds(n, body, changed) {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new BadFrame("odds: frame is not an object");
    if (!this.odds.has(n)) { this.odds.set(n, {}); this.sums.set(n, {}); }
    const book = this.odds.get(n), sums = this.sums.get(n);
    for (const [mid, market] of Object.entries(body)) {
      this.oddsTotal -= sums[mid] || 0n; delete sums[mid];
      if (market === null) delete book[mid];
      else {
        let s;
        try { s = marketSum(n, mid, market); } catch (e) { throw new BadFrame(`bad market ${mid}`); }
        book[mid] = market; sums[mid] = s; this.oddsTotal += s;
      }
      changed.add(`${n}:${mid}`);
    }
  }
  apply(channel, body, events, markets) {
    const [kind, , num] = channel.split(":");
    if (kind === "evt") this.applyEvents(body, events);
    else if (kind === "odds" && /^\d+$/.test(num || "")) this.applyOdds(Number(num), body, markets);
    else throw new BadFrame(`unknown channel ${channel}`);
  }
  // The /v1/odds `data` shape: every live listed event, and any other whose odds the stream sent.
  data() {
    const out = {}, keys = new Map();
    for (const [key, obj] of Object.entries(this.events)) { keys.set(numberOf(key), key); if (obj.live) out[key] = {}; }
    for (const [n, book] of this.odds) if (Object.keys(book).length || keys.has(n)) out[keys.get(n) || String(n)] = { ...book };
    return out;
  }
  // One event's markets, by any form of its id.
  book(key) { return this.odds.get(numberOf(key)); }
}

class Resync extends Error {}

// new OddsClient({key, events, verify: true, onGroup, onEvent}).start()
// options: url (the server, default this page's), key, events, markets, sports
// (arrays or comma lists), conflateMs, verify, pingMs (the server's --ws-ping:
// stale after two of them with no message; browsers hide pings, so only
// messages count), maxFailures (give up after that many connects in a row
// that never got a ready INFO: state "closed"), onEvent({state|resync, ...}),
// onGroup(group), onFrame(type, channel, body text).
export class OddsClient {
  constructor(o) {
    this.o = Object.assign({ url: globalThis.location ? location.origin : "", pingMs: 30000, maxFailures: Infinity,
      onEvent() {}, onGroup() {}, onFrame() {}, WebSocket: globalThis.WebSocket, random: Math.random }, o);
    const u = new URL("/pt-ws", this.o.url.replace(/^http/, "ws"));
    u.search = "protocol=v2";
    for (const k of ["events", "markets", "sports"]) if (this.o[k] && String(this.o[k])) u.searchParams.set(k, String(this.o[k]));
    if (this.o.conflateMs) u.searchParams.set("conflate_ms", String(this.o.conflateMs));
    if (this.o.verify) u.searchParams.set("verify", "1");
    u.searchParams.set("api_key", this.o.key);
    this.url = u.toString().replace(/%2C/gi, ",");
    Object.assign(this, { state: "connecting", epoch: null, seq: null, replica: new Replica(), verified: false,
      resyncs: [], groups: 0, connects: 0, attempt: 0, failures: 0, resume: true, pendingResync: null, ws: null, timer: 0 });
  }
  start() { this.connect(); return this; }
  close() { this.stopped = true; this.drop(); this.setState("closed"); }
  view() { return this.replica.data(); }
  setState(name) {
    if (name === this.state) return;
    this.state = name;
    this.o.onEvent({ state: name, epoch: this.epoch, seq: this.seq, verified: this.verified });
  }
  resync(reason) {
    this.resyncs.push(reason); this.pendingResync = reason;
    this.o.onEvent({ resync: reason, seq: this.seq });
    this.resume = false; this.verified = false;
    this.setState("resyncing");
  }
  drop() {
    clearTimeout(this.timer);
    const ws = this.ws; this.ws = null;
    if (ws) { ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null; try { ws.close(); } catch (e) { /* closing */ } }
  }
  // A cut, a stale stream or a resync: reconnect (at once after a connection that
  // got its ready INFO, else after a growing random delay).
  lost(stale) {
    if (this.stopped) return;
    if (stale && this.seq !== null && this.state !== "resyncing") this.setState("stale");
    this.drop();
    if (this.needReady && ++this.failures >= this.o.maxFailures) { this.stopped = true; this.setState("closed"); return; }
    if (this.state !== "stale" && this.state !== "resyncing") this.setState("connecting");
    const wait = this.attempt ? backoffDelay(this.attempt - 1, this.o.random) * 1000 : 0;
    this.timer = setTimeout(() => this.connect(), wait);
  }
  watch() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.lost(true), 2 * this.o.pingMs);
  }
  connect() {
    if (this.stopped) return;
    this.attempt++; this.connects++;
    const url = this.resume && this.seq !== null ? `${this.url}&resume=${this.epoch}:${this.seq}` : this.url;
    Object.assign(this, { needReady: true, pending: [] });
    const ws = this.ws = new this.o.WebSocket(url);
    ws.onmessage = (m) => {
      this.watch();
      try { this.message(m.data); } catch (e) {
        if (!(e instanceof Resync)) throw e;
        this.resync(e.message); this.lost(false);
      }
    };
    ws.onclose = () => this.lost(false);
    this.watch();
  }
  message(text) {
    if (typeof text !== "string") throw new Resync("bad_frame");
    const a = text.indexOf("\x1f"), b = text.indexOf("\x1f", a + 1);
    if (a < 0 || b < 0) throw new Resync("bad_frame");
    const type = text.slice(0, a), channel = text.slice(a + 1, b);
    let body;
    try { body = JSON.parse(text.slice(b + 1)); } catch (e) { throw new Resync("bad_frame"); }
    this.o.onFrame(type, channel, text.slice(b + 1));
    if (this.needReady) return this.ready(type, body);
    if (type !== "INFO") {
      this.pending.push([channel, body]);
      // The ready INFO counted the snapshot's frames: it is applied at the last one.
      if (this.snapshot && this.snapshotFrames === this.pending.length) this.closeSnapshot();
      return;
    }
    if (!body || typeof body !== "object" || !("seq" in body) || !("from" in body)) throw new Resync("bad_frame");
    if (body.from !== this.chain + 1) throw new Resync("gap");
    this.snapshotFrames = null;  // an INFO first: it closes the snapshot, as it always did
    this.applyGroup(body.seq, "digest" in body ? body.digest : null);
  }
  closeSnapshot() {
    this.snapshotFrames = null;
    this.applyGroup(this.chain, this.snapshotDigest);
  }
  // The held frames as one group at `seq` (a snapshot into a fresh replica),
  // checked against the server's digest when it sent one.
  applyGroup(seq, digest) {
    const state = this.snapshot ? new Replica() : this.replica, events = new Set(), markets = new Set();
    try { for (const [c, f] of this.pending) state.apply(c, f, events, markets); }
    catch (e) { if (e instanceof BadFrame) throw new Resync("bad_frame"); throw e; }
    const snapshot = this.snapshot;
    Object.assign(this, { replica: state, seq, epoch: this.connEpoch, chain: seq, snapshot: false, pending: [] });
    if (digest !== null && digest !== state.hex()) throw new Resync("digest_mismatch");
    this.verified = digest !== null;
    this.groups++;
    this.setState("live");
    const group = { seq: this.seq, epoch: this.epoch, events: [...events], markets: [...markets].map((k) => k.split(":").map(Number)),
      verified: this.verified, snapshot };
    if (this.pendingResync) { group.resync = this.pendingResync; this.pendingResync = null; }
    this.o.onGroup(group);
  }
  ready(type, body) {
    if (type !== "INFO" || !body || typeof body !== "object") throw new Resync("bad_frame");
    if ("error" in body) return this.lost(false);  // over the key's stream limit: retried with backoff
    if (!body.ready) throw new Resync("bad_frame");
    Object.assign(this, { needReady: false, attempt: 0, failures: 0, resume: true });
    if (body.resumed === false && this.seq !== null && this.state !== "resyncing") this.resync(`resume_refused:${body.reason || ""}`);
    if (body.resumed) { Object.assign(this, { snapshot: false, chain: this.seq, connEpoch: this.epoch }); this.setState("live"); }
    else {
      // An older server does not count its snapshot: the next INFO closes it.
      Object.assign(this, { snapshot: true, chain: body.seq, connEpoch: body.epoch,
        snapshotFrames: "frames" in body ? body.frames : null, snapshotDigest: "digest" in body ? body.digest : null });
      this.setState("syncing");
      if (this.snapshotFrames === 0) this.closeSnapshot();
    }
  }
}
