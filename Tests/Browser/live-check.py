#!/usr/bin/env python3
"""Drives headless Chromium through the DevTools protocol (view-check.py's machinery, standard
library only) over the live page of a recording room (`roomtap record --http`), acts on it as a
user would, and prints what it saw as one JSON object (LivePageTests asserts on it).

    live-check.py --url http://127.0.0.1:PORT/?token=T --tracks alice,bob,carol
                  [--volume NAME:DB] [--mute NAME] [--record-mute NAME] [--solo NAME]
                  [--screenshot FILE.png] [--chromium /usr/bin/chromium] [--timeout S]

Steps, each waited for (a condition, bounded by --timeout): the page lists every track of
--tracks; every track's meter has shown at least 4 different levels and both talking states (the
room's senders alternate tone and silence); then the actions in the order above, each a real
click (the volume: the slider set and its change event, as a drag ends), each done once the page
shows the recorder's own event for it (the page changes its state only from the event stream).
Exit status 0 when the run completed (the JSON says what happened), 2 when the browser could not
be driven (a line on stderr says why).
"""
import argparse, base64, importlib.util, json, os, shutil, sys, tempfile, time
import urllib.request
from urllib.parse import urlparse

_spec = importlib.util.spec_from_file_location(
    "view_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "view-check.py"))
view_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(view_check)


def center(page, selector):
    return page.evaluate(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
        " const r = e.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")


def track_selector(name):
    return f"section.track[data-track={json.dumps(name)}]"


def state_of(name):
    return f"window.roomtap.tracks().find(t => t.name === {json.dumps(name)})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    p.add_argument("--tracks", required=True, help="NAME,NAME,...: the tracks the page must list")
    p.add_argument("--volume", help="NAME:DB: set that track's heard volume slider")
    p.add_argument("--mute", help="NAME: click its Mute button (heard)")
    p.add_argument("--record-mute", help="NAME: click its Off record button")
    p.add_argument("--solo", help="NAME: click its Solo button")
    p.add_argument("--screenshot")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=400)
    p.add_argument("--timeout", type=float, default=60)
    a = p.parse_args()
    if not os.path.exists(a.chromium):
        print(f"no Chromium at {a.chromium}: apt-get install chromium (make deps does)", file=sys.stderr)
        return 2
    names = a.tracks.split(",")
    profile = tempfile.mkdtemp(prefix="roomtap-chromium-")
    process = None
    try:
        process, browser_ws = view_check.launch(a.chromium, profile, a.width, a.height, False)
        port = urlparse(browser_ws).port
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
        page = view_check.Page(next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page"))
        for domain in ("Runtime", "Log", "Page"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=a.width, height=a.height, deviceScaleFactor=1,
                  mobile=False)
        out = {}
        started = time.monotonic()
        page.call("Page.navigate", url=a.url)
        page.wait_for("document.readyState === 'complete' && !!window.roomtap && window.roomtap.ready()",
                      a.timeout, "the page to connect")
        out["loadSeconds"] = round(time.monotonic() - started, 3)
        out["addressBar"] = page.evaluate("location.href")
        page.wait_for(f"(() => {{ const n = window.roomtap.tracks().map(t => t.name); return "
                      f"{json.dumps(names)}.every(x => n.includes(x)); }})()", a.timeout, "every track listed")
        out["tracks"] = page.evaluate("window.roomtap.tracks()")

        # The meters move: levels sampled as the page shows them.
        seen = {n: set() for n in names}
        talking = {n: set() for n in names}
        deadline = time.monotonic() + a.timeout
        while True:
            for t in page.evaluate("window.roomtap.tracks()"):
                if t["name"] in seen:
                    if t["level"] is not None:
                        seen[t["name"]].add(t["level"])
                    talking[t["name"]].add(bool(t["talking"]))
            if all(len(seen[n]) >= 4 and len(talking[n]) == 2 for n in names):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        out["distinctLevels"] = {n: len(seen[n]) for n in names}
        out["talkingStates"] = {n: sorted(talking[n]) for n in names}
        out["levelsSeen"] = page.evaluate("window.roomtap.levelsSeen()")
        out["meterWidths"] = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('section.track')].map(r => "
            "[r.dataset.track, r.querySelector('.meter .bar').style.width]))")

        actions = []
        if a.volume:
            name, db = a.volume.rsplit(":", 1)
            selector = track_selector(name) + " input.volume"
            center(page, selector)
            page.evaluate(f"(() => {{ const s = document.querySelector({json.dumps(selector)}); s.focus();"
                          f" s.value = {float(db)}; s.dispatchEvent(new Event('input', {{bubbles: true}}));"
                          " s.dispatchEvent(new Event('change', {bubbles: true})); })()")
            gain = 10 ** (float(db) / 20)
            page.wait_for(f"Math.abs({state_of(name)}.volume - {gain}) < 1e-4", a.timeout,
                          f"the recorder to report {name}'s volume")
            actions.append({"volume": name, "pageVolume": page.evaluate(f"{state_of(name)}.volume"),
                            "label": page.evaluate(f"document.querySelector({json.dumps(selector)})"
                                                   ".nextElementSibling.textContent")})
        for flag, button, field in (("mute", "button.mute", "muted"), ("record_mute", "button.record", "recordMuted"),
                                    ("solo", "button.solo", "solo")):
            name = getattr(a, flag)
            if not name:
                continue
            point = center(page, track_selector(name) + " " + button)
            page.click(point["x"], point["y"])
            page.wait_for(f"{state_of(name)}.{field} === true", a.timeout, f"{flag} of {name} to come back")
            actions.append({flag: name, "pressed": page.evaluate(
                f"document.querySelector({json.dumps(track_selector(name) + ' ' + button)})"
                ".getAttribute('aria-pressed')")})
        out["actions"] = actions
        out["after"] = page.evaluate("window.roomtap.tracks()")
        out["solo"] = page.evaluate("window.roomtap.solo()")
        out["lastError"] = page.evaluate("window.roomtap.lastError()")
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
        print(f"live-check: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    finally:
        if process:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
