// The uWebSockets baseline of perf/relay/run.sh: a WebSocket fan-out server
// on uWebSockets' Node binding (the native addon publishes in C++). Frames
// arrive as HTTP POSTs to /pub (oddsload's forwarder, the same pipelined
// POSTs nginx+nchan gets) and are published to every WebSocket subscribed
// at /sub. Nothing is kept: a subscriber gets what is published after it
// connects.
//   node uws_server.js PORT [--compress] [--replay CAPTURE]   (the package on NODE_PATH)
// --compress: permessage-deflate with uWebSockets' shared compressor
// (uWS.SHARED_COMPRESSOR, no context takeover), every publish asked to be
// compressed, as oddsrelay's --ws-compression shared.
// --replay CAPTURE: no forwarder; from the first subscriber on, this process
// publishes the frames of CAPTURE (perf/relay/capture.py: one
// "<microseconds since the first frame>\t<frame>" line each) itself, at their
// recorded pace, stamping each INFO's `at` with the moment it publishes it:
// the latency sweep's baseline, its clock started by its own publish as
// oddsrelay's is by its feed. On stderr, once the capture is out:
// "uws_server: replayed N frames in S s".
'use strict';
const fs = require('fs');
const uWS = require('@trufflesuite/uws-js-unofficial');
const args = process.argv.slice(2);
const port = Number(args[0]);
const compress = args.includes('--compress');
const replay = args.includes('--replay') ? args[args.indexOf('--replay') + 1] : null;
const app = uWS.App();
let started = false;
app.ws('/sub', {
  compression: compress ? uWS.SHARED_COMPRESSOR : uWS.DISABLED,
  maxPayloadLength: 64 * 1024,
  maxBackpressure: 64 * 1024 * 1024,  // like nchan and oddsrelay: a lagging subscriber queues, nothing is dropped
  idleTimeout: 0,
  open: (ws) => {
    ws.subscribe('relay');
    if (replay && !started) {
      started = true;
      startReplay();
    }
  },
});
app.post('/pub', (res) => {
  let parts = null;
  res.onAborted(() => { res.aborted = true; });
  res.onData((chunk, last) => {
    if (last && parts === null) {
      app.publish('relay', chunk, false, compress);  // one chunk: published straight from uWS's buffer
    } else {
      (parts ||= []).push(Buffer.from(chunk.slice(0)));
      if (last) app.publish('relay', Buffer.concat(parts), false, compress);
    }
    if (last && !res.aborted) res.end('ok');
  });
});

const nowMs = () => performance.timeOrigin + performance.now();  // wall clock, microsecond resolution

function startReplay() {
  const frames = [];
  for (const line of fs.readFileSync(replay, 'utf8').split('\n')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    frames.push([Number(line.slice(0, tab)) / 1000, line.slice(tab + 1)]);
  }
  const t0 = performance.now();
  let i = 0;
  const step = () => {
    const elapsed = performance.now() - t0;
    for (; i < frames.length && frames[i][0] <= elapsed; ++i) {
      let frame = frames[i][1];
      if (frame.startsWith('INFO\x1fPUB\x1f')) {
        const info = JSON.parse(frame.slice(9));
        frame = `INFO\x1fPUB\x1f{"seq":${info.seq},"from":${info.from},"at":${nowMs().toFixed(3)}}`;
      }
      app.publish('relay', frame, false, compress);
    }
    if (i < frames.length) {
      setTimeout(step, Math.max(0, frames[i][0] - (performance.now() - t0)));
    } else {
      console.error(`uws_server: replayed ${i} frames in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  };
  step();
}

app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    console.error(`uws_server: cannot listen on 127.0.0.1:${port}`);
    process.exit(1);
  }
  console.error(`uws_server: listening on 127.0.0.1:${port}`);
});
