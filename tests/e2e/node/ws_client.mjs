// Node's ws (an implementation no one here wrote) against the relay.
//   node ws_client.mjs pt PORT KEY        /pt-ws connect sequence, 20 INFOs with
//                                         consecutive seqs, ping/pong, close 1000
//   node ws_client.mjs ws PORT KEY SPEC   /ws on a feed the test writes (SPEC: JSON
//                                         {a, b: event ids; a1001, b1001: their
//                                         market 1001 now; b_price: b's next 2001
//                                         price}): subscribe answers with the
//                                         current state, unsubscribe stops a's
//                                         messages; prints "unsubscribed" when
//                                         the test should change a then b
// Prints "node ws: ok" on success; anything else exits 1 with the reason.
import { isDeepStrictEqual } from 'node:util';
import WebSocket from 'ws';

const [mode, port, key, specJson] = process.argv.slice(2);
const fail = (msg) => { console.error('node ws: FAIL: ' + msg); process.exit(1); };
setTimeout(() => fail('timed out'), 45000).unref();
const show = (v) => JSON.stringify(v);

function ptws() {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/pt-ws?api_key=${key}&protocol=v2`);
    const markers = [];
    let ready = null, pong = false, closing = false, snapshotFrames = 0, deltaFrames = 0;
    ws.on('message', (data, isBinary) => {
      if (isBinary) fail('binary frame');
      const [type, channel, body] = data.toString().split('\x1f');
      const json = JSON.parse(body);
      if (!ready) {
        if (type !== 'INFO' || channel !== 'PUB' || json.ready !== true) fail('first frame is not the ready INFO');
        ready = json;
        ws.ping('node');
        return;
      }
      if (type === 'INFO') {
        if (channel !== 'PUB' || json.ready) fail('bad INFO ' + channel + ' ' + body);
        markers.push([json.from, json.seq]);
      } else if (type !== 'P' || !(channel.startsWith('evt:') || channel.startsWith('odds:'))) {
        fail('unknown frame ' + type + ' ' + channel);
      } else if (markers.length === 0) {
        ++snapshotFrames;
      } else {
        ++deltaFrames;
      }
      if (markers.length === 20 && !closing) {
        closing = true;  // frames already in flight may still come
        ws.close(1000, 'done');
      }
    });
    ws.on('pong', (d) => { pong = d.toString() === 'node'; });
    ws.on('close', (code) => {
      if (code !== 1000) fail('close code ' + code);
      if (!pong) fail('no pong');
      if (!closing) fail(`closed by the server after ${markers.length} INFOs`);
      if (snapshotFrames === 0 || deltaFrames === 0)
        fail(`snapshot frames ${snapshotFrames}, delta frames ${deltaFrames}`);
      // Each INFO closes batches from..seq: consecutive INFOs leave no gap.
      if (markers[0][0] !== ready.seq + 1) fail(`first INFO from ${markers[0][0]} after ready seq ${ready.seq}`);
      markers.slice(1).forEach(([from], i) => { if (from !== markers[i][1] + 1) fail('seq gap at ' + i); });
      resolve();
    });
    ws.on('error', (e) => fail(e.message));
  });
}

// The /ws conversation as a list of steps: each sends messages, then an
// invalid one (the fence) and takes every message up to the fence's answer
// (live_updates left out: they are paced and may fall anywhere).
async function wsStream() {
  const spec = JSON.parse(specJson);
  const fenceReply = { error: 'Malformed message: expected a JSON object' };
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?api_key=${key}`);
  const inbox = [], waiters = [];
  let closeCode = null;
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    // Every /ws message carries seq, the log position of its state.
    if (!Number.isInteger(m.seq)) fail('a /ws message without seq: ' + data.toString());
    delete m.seq;
    inbox.push(m);
    while (waiters.length) waiters.shift()();
  });
  ws.on('close', (code) => { closeCode = code; while (waiters.length) waiters.shift()(); });
  ws.on('error', (e) => fail(e.message));
  const next = async () => {
    while (!inbox.length) {
      if (closeCode !== null) fail('closed with ' + closeCode + ' while waiting for a message');
      await new Promise((r) => waiters.push(r));
    }
    return inbox.shift();
  };
  const until = async (pred) => {
    const got = [];
    for (;;) {
      const m = await next();
      if (m.type !== 'live_update') got.push(m);
      if (pred(m)) return got;
    }
  };
  const exchange = async (...msgs) => {
    for (const m of msgs) ws.send(JSON.stringify(m));
    ws.send('fence');
    const got = await until((m) => isDeepStrictEqual(m, fenceReply));
    got.pop();
    return got;
  };
  const expectMarkets = (got, want, what) => {
    for (const m of got) if (m.type === 'market') {
      if (!Number.isInteger(m.ts)) fail(what + ': market without ts ' + show(m));
      delete m.ts;
    }
    if (!isDeepStrictEqual(got, want)) fail(`${what}: got ${show(got)}, want ${show(want)}`);
  };
  const subscribed = (id) => ({ type: 'subscribed', event_id: id, markets: ['1001'] });
  const market = (id, outcomes) => ({ type: 'market', event_id: id, market: '1001', outcomes });

  await new Promise((r) => ws.once('open', r));
  const snapshot = await next();
  if (snapshot.type !== 'snapshot') fail('first /ws message is ' + snapshot.type);
  if (!snapshot.live[spec.a] || !snapshot.live[spec.b]) fail('snapshot lacks the test events');

  // Each subscription is answered, then the market as it is now.
  expectMarkets(await exchange({ subscribe: { event_id: spec.a, markets: ['1001'] } },
                               { subscribe: { event_id: spec.b, markets: ['1001'] } }),
                [subscribed(spec.a), market(spec.a, spec.a1001), subscribed(spec.b), market(spec.b, spec.b1001)],
                'subscribe');
  expectMarkets(await exchange({ unsubscribe: { event_id: spec.a } }), [], 'unsubscribe');
  console.log('unsubscribed');
  // The test changes a, then b: once b's message is here, a's would be too.
  const got = await until((m) => m.type === 'market' && m.event_id === spec.b);
  got.push(...await exchange());
  if (got.length !== 1 || !got[0].outcomes || got[0].outcomes.s['2001'][0] !== spec.b_price)
    fail('after the change: ' + show(got));

  ws.close(1000);
  await new Promise((r) => (closeCode !== null ? r() : ws.once('close', r)));
  if (closeCode !== 1000) fail('close code ' + closeCode);
}

if (mode === 'pt') await ptws();
else if (mode === 'ws') await wsStream();
else fail('mode is pt or ws, not ' + mode);
console.log('node ws: ok');
process.exit(0);
