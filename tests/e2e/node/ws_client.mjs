// Node's ws (an implementation no one here wrote) against the relay:
// /pt-ws connect sequence and consecutive seq markers, ping/pong, a clean
// close handshake; /ws snapshot and a market subscription.
// Usage: node ws_client.mjs PORT API_KEY   (prints "node ws: ok" on success)
import WebSocket from 'ws';

const [port, key] = process.argv.slice(2);
const fail = (msg) => { console.error('node ws: FAIL: ' + msg); process.exit(1); };
setTimeout(() => fail('timed out'), 45000).unref();

function ptws() {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/pt-ws?api_key=${key}&protocol=v2`);
    const markers = [];
    let first = true, ready = null, pong = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) fail('binary frame');
      const [type, channel, body] = data.toString().split('\x1f');
      const json = JSON.parse(body);
      if (first) {
        first = false;
        if (type !== 'INFO' || channel !== 'PUB' || !json.ready) fail('first frame is not the ready INFO');
        ready = json;
        ws.ping('node');
        return;
      }
      if (type === 'INFO') markers.push([json.from, json.seq]);
      else if (!(channel.startsWith('evt:') || channel.startsWith('odds:'))) fail('unknown channel ' + channel);
      if (markers.length === 20) ws.close(1000, 'done');
    });
    ws.on('pong', (d) => { pong = d.toString() === 'node'; });
    ws.on('close', (code) => {
      if (code !== 1000) fail('close code ' + code);
      if (!pong) fail('no pong');
      // Each INFO closes batches from..seq: consecutive INFOs leave no gap.
      if (markers[0][0] !== ready.seq + 1) fail(`first INFO from ${markers[0][0]} after ready seq ${ready.seq}`);
      markers.slice(1).forEach(([from], i) => { if (from !== markers[i][1] + 1) fail('seq gap at ' + i); });
      resolve();
    });
    ws.on('error', (e) => fail(e.message));
  });
}

function wsStream() {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?api_key=${key}`);
    let snapshot = null, eid = null, markets = 0;
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (!snapshot) {
        if (m.type !== 'snapshot') fail('first /ws message is ' + m.type);
        snapshot = m;
        eid = Object.keys(m.live)[0];
        ws.send(JSON.stringify({ subscribe: { event_id: eid, markets: ['1001'] } }));
      } else if (m.type === 'market') {
        if (m.event_id !== eid || m.market !== '1001') fail('market message for another subscription');
        if (++markets === 2) ws.close();
      }
    });
    ws.on('close', () => resolve());
    ws.on('error', (e) => fail(e.message));
  });
}

await ptws();
await wsStream();
console.log('node ws: ok');
process.exit(0);
