// Node's ws with permessage-deflate (its default, asked for explicitly
// here) against /pt-ws: the extension is negotiated, every frame, small
// (sent plain) or large (compressed), reads and parses, and 20 INFOs keep
// consecutive seqs.
//   node deflate_client.mjs PORT KEY
// Prints "node ws deflate: ok FRAMES" on success; anything else exits 1.
import WebSocket from 'ws';

const [port, key] = process.argv.slice(2);
const fail = (msg) => { console.error('node ws deflate: FAIL: ' + msg); process.exit(1); };
setTimeout(() => fail('timed out'), 45000).unref();

const ws = new WebSocket(`ws://127.0.0.1:${port}/pt-ws?api_key=${key}&protocol=v2`, { perMessageDeflate: true });
let seq = null, infos = 0, frames = 0;
ws.on('open', () => {
  if (!ws.extensions.includes('permessage-deflate')) fail('extensions: ' + JSON.stringify(ws.extensions));
});
ws.on('message', (data, isBinary) => {
  if (isBinary) fail('binary frame');
  const [type, channel, body] = data.toString().split('\x1f');
  let json;
  try { json = JSON.parse(body); } catch (e) { fail('unparsable frame ' + channel + ': ' + e); }
  ++frames;
  if (type !== 'INFO') {
    if (type !== 'P' || !(channel.startsWith('evt:') || channel.startsWith('odds:'))) fail('unknown frame ' + channel);
    return;
  }
  if (json.ready) { seq = json.seq; return; }
  if (json.from !== seq + 1) fail(`INFO from ${json.from} after seq ${seq}`);
  seq = json.seq;
  if (++infos === 20) ws.close(1000, 'done');
});
ws.on('close', (code) => {
  if (code !== 1000 || infos < 20) fail(`close ${code} after ${infos} INFOs`);
  console.log('node ws deflate: ok ' + frames);
});
ws.on('error', (e) => fail(String(e)));
