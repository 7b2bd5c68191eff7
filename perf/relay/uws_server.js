// The uWebSockets baseline of perf/relay/run.sh: a WebSocket fan-out server
// on uWebSockets' Node binding (the native addon publishes in C++). Frames
// arrive as HTTP POSTs to /pub (oddsload's forwarder, the same pipelined
// POSTs nginx+nchan gets) and are published to every WebSocket subscribed
// at /sub. Nothing is kept: a subscriber gets what is published after it
// connects.
//   node uws_server.js PORT   (the package on NODE_PATH)
'use strict';
const uWS = require('@trufflesuite/uws-js-unofficial');
const port = Number(process.argv[2]);
const app = uWS.App();
app.ws('/sub', {
  compression: uWS.DISABLED,
  maxPayloadLength: 64 * 1024,
  maxBackpressure: 64 * 1024 * 1024,  // like nchan and oddsrelay: a lagging subscriber queues, nothing is dropped
  idleTimeout: 0,
  open: (ws) => ws.subscribe('relay'),
});
app.post('/pub', (res) => {
  let parts = null;
  res.onAborted(() => { res.aborted = true; });
  res.onData((chunk, last) => {
    if (last && parts === null) {
      app.publish('relay', chunk, false);  // one chunk: published straight from uWS's buffer
    } else {
      (parts ||= []).push(Buffer.from(chunk.slice(0)));
      if (last) app.publish('relay', Buffer.concat(parts), false);
    }
    if (last && !res.aborted) res.end('ok');
  });
});
app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    console.error(`uws_server: cannot listen on 127.0.0.1:${port}`);
    process.exit(1);
  }
  console.error(`uws_server: listening on 127.0.0.1:${port}`);
});
