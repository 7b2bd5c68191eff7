"""Headless Chromium (Debian's chromium) driven over the DevTools protocol
with Python's websockets: open a page, evaluate expressions until a
condition holds, take screenshots. Loopback only; Chromium runs with the
flags that keep it off the network and is killed when done."""
import asyncio
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websockets

import harness as h

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("no chromium: run scripts/install-deps.sh (Debian package chromium)")


class Browser:
    def __init__(self, width=1200, height=900):
        self.port = h.free_port()
        self.profile = tempfile.mkdtemp(prefix="oddsrelay-chromium-")
        self.proc = subprocess.Popen([chromium(), *FLAGS, f"--remote-debugging-port={self.port}",
                                      f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t["type"] == "page"]
                if pages:
                    self.ws_url = pages[0]["webSocketDebuggerUrl"]
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.close()
                raise AssertionError("chromium did not start its DevTools endpoint")
            time.sleep(0.2)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run(self, coro_fn, timeout=60):
        async def main():
            async with websockets.connect(self.ws_url, max_size=None) as ws:
                return await coro_fn(Session(ws))
        return asyncio.run(asyncio.wait_for(main(), timeout))


class Session:
    def __init__(self, ws):
        self.ws, self.next = ws, 0

    async def call(self, method, **params):
        self.next += 1
        me = self.next
        await self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        while True:
            msg = json.loads(await self.ws.recv())
            if msg.get("id") == me:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg["result"]

    async def goto(self, url):
        await self.call("Page.enable")
        await self.call("Page.navigate", url=url)

    async def eval(self, expr):
        r = await self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r["result"].get("value")

    async def wait_for(self, expr, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if await self.eval(expr):
                return True
            await asyncio.sleep(0.2)
        raise AssertionError(f"page never satisfied: {expr}")

    async def screenshot(self, path, full=False, width=None):
        """The viewport as a PNG; with full=True the whole page, laid out
        at `width` CSS pixels (default: the window's) and as tall as its
        content (at most 6000 pixels), so nothing is cut by a scrollbar."""
        if full:
            width = width or await self.eval("window.innerWidth")
            # Laid out tall enough for no scrollbar, the content ends at its lowest box (plus a margin).
            await self.call("Emulation.setDeviceMetricsOverride", width=width, height=6000, deviceScaleFactor=1, mobile=False)
            height = await self.eval("Math.ceil(Math.max(...[...document.body.querySelectorAll('*')]"
                                     ".map(e => e.getBoundingClientRect().bottom)) + 12)")
            await self.call("Emulation.setDeviceMetricsOverride", width=width, height=min(height, 6000),
                            deviceScaleFactor=1, mobile=False)
            r = await self.call("Page.captureScreenshot", format="png")
            await self.call("Emulation.clearDeviceMetricsOverride")
        else:
            r = await self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
        return path
