#!/usr/bin/env python3
"""Drives headless Chromium through the DevTools protocol (standard library only) over a page
`roomtap view` wrote, and prints what it saw as one JSON object (ViewTests asserts on it).

    view-check.py --url file:///DIR/index.html [--click LANE:SECONDS] [--solo LANE]
                  [--search TEXT] [--screenshot FILE.png] [--chromium /usr/bin/chromium]

Chromium gets a fresh profile, port 0 for DevTools (the port it chose is read from its stderr),
--allow-file-access-from-files (so the page may read the WAVs beside it) and no autoplay gate.
Every wait is for a condition, bounded (--timeout). Exit status 0 when the run completed (the
JSON says what happened), 2 when the browser could not be driven (a line on stderr says why).
"""
import argparse, base64, json, os, re, shutil, socket, struct, subprocess, sys, tempfile, time
import urllib.request
from urllib.parse import urlparse


class WebSocket:
    """A minimal RFC 6455 client: text frames out (masked), frames in (fragments joined)."""

    def __init__(self, url):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            part = self.sock.recv(4096)
            if not part:
                raise OSError("DevTools closed the connection during the handshake")
            head += part
        head, self.rest = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError(f"DevTools refused the WebSocket: {head[:200]!r}")

    def _read(self, n):
        while len(self.rest) < n:
            part = self.sock.recv(1 << 20)
            if not part:
                raise OSError("DevTools closed the connection")
            self.rest += part
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def send(self, text):
        payload = text.encode()
        n = len(payload)
        header = bytes([0x81])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b0 & 0x0F
            if opcode == 8:
                raise OSError("DevTools closed the WebSocket")
            if opcode == 9:
                continue
            message += data
            if b0 & 0x80:
                return message.decode()


class Page:
    """One page target: commands wait for their reply; events are kept, console errors collected."""

    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0
        self.events = []
        self.errors = []
        self.messages = []

    def _event(self, message):
        method, params = message.get("method"), message.get("params", {})
        self.events.append(method)
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.messages.append(f"{params.get('type')}: {text}")
            if params.get("type") in ("error", "assert"):
                self.errors.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append("exception: " + (d.get("exception", {}).get("description") or d.get("text", "")))
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            if e.get("level") == "error":
                self.errors.append(f"log ({e.get('source')}): {e.get('text')} {e.get('url', '')}".strip())

    def call(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == mine:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._event(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for {what} ({expression})")
            time.sleep(0.02)

    def key(self, key, code, keycode):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=keycode,
                      text=key if kind == "keyDown" and len(key) == 1 else "")

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def launch(chromium, profile, width, height, file_access=True):
    args = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--remote-debugging-port=0", f"--user-data-dir={profile}",
            "--autoplay-policy=no-user-gesture-required",
            f"--window-size={width},{height}"] + (["--allow-file-access-from-files"] if file_access else []) + ["about:blank"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in process.stderr:
        seen.append(line.rstrip())
        m = re.search(r"DevTools listening on (ws://\S+)", line)
        if m:
            # Keep draining stderr so Chromium never blocks on a full pipe.
            import threading
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, m.group(1)
    raise OSError(f"{chromium} exited before DevTools listened: " + " | ".join(seen[-5:]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    p.add_argument("--click", help="LANE:SECONDS: click that lane at that time")
    p.add_argument("--solo", help="LANE: click its solo button")
    p.add_argument("--search", help="type TEXT into the transcript's search box")
    p.add_argument("--samples", help="LANE:SECONDS:COUNT: the samples playback reads there")
    p.add_argument("--keys", action="store_true", help="after the click: space, ArrowLeft, space")
    p.add_argument("--screenshot")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--no-file-access", action="store_true", help="start Chromium as a user would: file: pages may not read")
    a = p.parse_args()
    if not os.path.exists(a.chromium):
        print(f"no Chromium at {a.chromium}: apt-get install chromium (make deps does)", file=sys.stderr)
        return 2
    profile = tempfile.mkdtemp(prefix="roomtap-chromium-")
    process = None
    try:
        process, browser_ws = launch(a.chromium, profile, a.width, a.height, not a.no_file_access)
        port = urlparse(browser_ws).port
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
        page_ws = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        page = Page(page_ws)
        for domain in ("Runtime", "Log", "Page"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=a.width, height=a.height, deviceScaleFactor=1,
                  mobile=False)
        out = {}
        started = time.monotonic()
        page.call("Page.navigate", url=a.url)
        page.wait_for("document.readyState === 'complete' && !!window.roomtap && window.roomtap.ready()",
                      a.timeout, "the page to render")
        out["loadSeconds"] = round(time.monotonic() - started, 3)
        out["firstRenderMs"] = page.evaluate("window.roomtap.firstRenderMs()")
        out["firstContentfulPaintMs"] = page.evaluate(
            "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null")
        out["lanes"] = page.evaluate("window.roomtap.lanes()")
        out["transcript"] = page.evaluate("window.roomtap.transcript()")
        out["gainsBefore"] = page.evaluate("window.roomtap.gains()")
        if a.search is not None:
            page.evaluate("document.getElementById('search').focus()")
            page.call("Input.insertText", text=a.search)
            out["searchHits"] = page.evaluate("window.roomtap.transcript()")
        if a.samples:
            lane, seconds, count = a.samples.rsplit(":", 2)
            out["samples"] = page.evaluate(
                f"window.roomtap.samples({json.dumps(lane)}, {float(seconds)}, {int(count)})")
        if a.click:
            lane, seconds = a.click.rsplit(":", 1)
            page.evaluate(f"document.querySelector('[data-lane={json.dumps(lane)}]').scrollIntoView({{block: 'center'}})")
            point = page.evaluate(f"window.roomtap.point({json.dumps(lane)}, {float(seconds)})")
            page.click(point["x"], point["y"])
            page.wait_for("window.roomtap.playing()", a.timeout, "playback to start")
            out["startedAt"] = page.evaluate("window.roomtap.startedAt()")
            out["currentTimeAtStart"] = page.evaluate("window.roomtap.currentTime()")
            out["audioState"] = page.evaluate("window.roomtap.audioState()")
            out["mode"] = page.evaluate("window.roomtap.mode()")
            page.wait_for(f"window.roomtap.currentTime() > {out['startedAt']} + 0.2", a.timeout,
                          "the play head to move")
            out["currentTimeLater"] = page.evaluate("window.roomtap.currentTime()")
        if a.solo:
            box = page.evaluate(
                f"(() => {{ const b = document.querySelector('[data-lane={json.dumps(a.solo)}] button.solo');"
                "b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect();"
                " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
            page.click(box["x"], box["y"])
            page.wait_for(f"window.roomtap.gains()[{json.dumps(a.solo)}] > 0 && Object.entries("
                          f"window.roomtap.gains()).every(([n, g]) => n === {json.dumps(a.solo)} || g === 0)",
                          a.timeout, "the solo to apply")
            out["gains"] = page.evaluate("window.roomtap.gains()")
            if a.click:
                out["graphGains"] = page.wait_for(
                    f"(() => {{ const g = window.roomtap.graphGains(); return Object.entries(g).every(([n, v]) =>"
                    f" n === {json.dumps(a.solo)} ? v > 0 : v === 0) && g; }})()", a.timeout,
                    "the gain nodes to follow the solo")
            if a.click and not a.no_file_access:
                out["levels"] = page.wait_for(
                    f"(() => {{ const l = window.roomtap.levels(); return Object.entries(l).every(([n, v]) =>"
                    f" n === {json.dumps(a.solo)} ? v > 0.001 : v === 0) && l; }})()",
                    a.timeout, "sound from the soloed lane")
            if a.click:
                out["currentTimeAfterSolo"] = page.evaluate("window.roomtap.currentTime()")
                out["drift"] = page.evaluate("window.roomtap.drift()")
        if a.keys:
            page.evaluate("document.activeElement && document.activeElement.blur && document.activeElement.blur()")
            before = page.evaluate("window.roomtap.gains()")
            page.key(" ", "Space", 32)
            page.wait_for("!window.roomtap.playing()", a.timeout, "space to pause")
            out["pausedAt"] = page.evaluate("window.roomtap.currentTime()")
            page.key("ArrowLeft", "ArrowLeft", 37)
            out["afterArrowLeft"] = page.evaluate("window.roomtap.currentTime()")
            page.key(" ", "Space", 32)
            page.wait_for("window.roomtap.playing()", a.timeout, "space to play again")
            out["playingAgainFrom"] = page.evaluate("window.roomtap.startedAt()")
            out["gainsKeptBySpace"] = page.evaluate("window.roomtap.gains()") == before
        if a.screenshot:
            shot = page.call("Page.captureScreenshot", format="png")
            with open(a.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            out["screenshotBytes"] = os.path.getsize(a.screenshot)
        out["pageErrors"] = page.evaluate("window.roomtap.errors()")
        page.evaluate("1")  # collect the last events
        out["consoleErrors"] = page.errors
        out["console"] = page.messages
        print(json.dumps(out))
        return 0
    except (OSError, RuntimeError, TimeoutError, StopIteration, KeyError) as e:
        print(f"view-check: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    finally:
        if process:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
