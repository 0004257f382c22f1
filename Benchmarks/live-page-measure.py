#!/usr/bin/env python3
"""The live page's cost to a recorder: `python3 Benchmarks/live-page-measure.py .build/debug/roomtap`.
Starts `record --realtime --http 0` on the sample room (kept alive by a late speaker), opens 3
event streams for 10 s and posts 300 volume changes to /api one after another; prints the POST
round trip (p50/p99, ms), the levels events per second each stream got, and the recorder's late
ticks and dropped frames (from /api/status). Files under /tmp/live-page-measure."""
import json, os, re, socket, subprocess, sys, time, threading, os, statistics, http.client
bin = sys.argv[1]
os.makedirs("/tmp/live-page-measure", exist_ok=True)
out = "/tmp/live-page-measure/room"
subprocess.run(["rm", "-rf", out])
env = dict(os.environ, ROOMTAP_CONTROL="/tmp/live-page-measure/c.sock", ROOMTAP_HTTP_TOKEN="")
p = subprocess.Popen([bin, "record", "--file", "alice=./Samples/room/alice.opus",
    "--file", "bob=./Samples/room/bob.opus@1", "--file", "later=./Samples/room/carol.opus@300", "--realtime", "--duration", "40",
    "--http", "0", "--out", out, "--quiet", "--mix"], stderr=subprocess.PIPE, text=True, env=env)
port = None
for line in p.stderr:
    m = re.search(r"live page on http://127.0.0.1:(\d+)/", line)
    if m: port = int(m.group(1)); break
threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
counts = []
def stream():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/events"); r = c.getresponse()
    n = 0; t0 = time.monotonic()
    while time.monotonic() - t0 < 10:
        line = r.fp.readline()
        if not line: break
        if b'"event":"levels"' in line: n += 1
    counts.append(n / (time.monotonic() - t0))
ts = [threading.Thread(target=stream) for _ in range(3)]
for t in ts: t.start()
lat = []
for i in range(300):
    body = json.dumps({"cmd": "volume", "track": "alice", "volume": "%.1fdB" % (-(i % 20))})
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", "/api", body, {"Content-Type": "application/json"})
    r = c.getresponse(); r.read(); assert r.status == 200
    lat.append((time.perf_counter() - t0) * 1000)
for t in ts: t.join()
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30); c.request("GET", "/api/status")
status = json.loads(c.getresponse().read())["result"]
lat.sort()
print(json.dumps({"post_api_ms_p50": round(lat[len(lat)//2], 2), "post_api_ms_p99": round(lat[int(len(lat)*0.99)], 2),
    "levels_per_second_per_stream": [round(x, 1) for x in counts], "late_ticks": status["late_ticks"],
    "room_time": status["room_time"], "dropped_frames": status["dropped_frames"]}))
p.terminate(); p.wait()
