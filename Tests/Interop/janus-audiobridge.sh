#!/usr/bin/env bash
# End to end through a real Janus (Debian `janus`, 1.1): two ffmpeg senders join an AudioBridge
# room as plain-RTP participants (each in a group of its own), Janus `rtp_forward`s each group to
# roomtap three times: plain RTP, SRTP with `srtp_suite: 80` and SRTP with `srtp_suite: 32` (each
# with a `srtp_crypto` key of its own, which the room file gives roomtap), and each of the six WAVs
# must carry its own sender's tone (440 Hz, 660 Hz) and not the other's, with no packet rejected. Run by `make interop`; needs no browser. Everything lives in a temporary directory,
# Janus's config included; every port is one the kernel gave out.
#
#   bash Tests/Interop/janus-audiobridge.sh [ROOMTAP]   (default .build/release/roomtap)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
roomtap="$(realpath "${1:-.build/release/roomtap}")"
work="$(mktemp -d /tmp/roomtap-janus.XXXXXX)"
janus_pid=""; recorder_pid=""
cleanup() {
  [[ -n "$janus_pid" ]] && kill "$janus_pid" 2>/dev/null || true
  [[ -n "$recorder_pid" ]] && kill "$recorder_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_'"$1"'); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
http_port="$(free_port STREAM)"
alice_port="$(free_port DGRAM)"; bob_port="$(free_port DGRAM)"
alice80_port="$(free_port DGRAM)"; bob80_port="$(free_port DGRAM)"
alice32_port="$(free_port DGRAM)"; bob32_port="$(free_port DGRAM)"
key() { python3 -c 'import base64, os; print(base64.b64encode(os.urandom(30)).decode())'; }
alice80_key="$(key)"; bob80_key="$(key)"; alice32_key="$(key)"; bob32_key="$(key)"
echo_alice="$(free_port DGRAM)"; echo_bob="$(free_port DGRAM)"
# AudioBridge takes its plain-RTP ports from a range: 40 from one the kernel just gave out.
rtp_base="$(free_port DGRAM)"; rtp_base=$(( rtp_base > 65000 ? 60000 : rtp_base ))

mkdir -p "$work/conf" "$work/plugins" "$work/transports" "$work/out"
lib=/usr/lib/x86_64-linux-gnu/janus
ln -s "$lib/plugins/libjanus_audiobridge.so" "$work/plugins/"
ln -s "$lib/transports/libjanus_http.so" "$work/transports/"
cat >"$work/conf/janus.jcfg" <<EOF
general: { configs_folder = "$work/conf", plugins_folder = "$work/plugins",
  transports_folder = "$work/transports", events_folder = "$work/none", loggers_folder = "$work/none",
  debug_level = ${JANUS_DEBUG_LEVEL:-4}, admin_secret = "roomtap-test" }
EOF
cat >"$work/conf/janus.transport.http.jcfg" <<EOF
general: { json = "compact", base_path = "/janus", http = true, port = $http_port, interface = "lo", https = false }
admin: { admin_http = false }
EOF
cat >"$work/conf/janus.plugin.audiobridge.jcfg" <<EOF
general: { rtp_port_range = "$rtp_base-$((rtp_base + 40))", local_ip = "127.0.0.1" }
EOF
janus -F "$work/conf" -P "$work/plugins" -T "$work/transports" >"$work/janus.log" 2>&1 &
janus_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$http_port/janus/info" && break; sleep 0.1; done

cat >"$work/people.json" <<EOF
{ "listen": "127.0.0.1", "participants": [
  { "name": "alice", "port": $alice_port, "payloadType": 111 },
  { "name": "bob", "port": $bob_port, "payloadType": 111 },
  { "name": "alice-srtp80", "port": $alice80_port, "payloadType": 111, "srtp": { "suite": 80, "key": "$alice80_key" } },
  { "name": "bob-srtp80", "port": $bob80_port, "payloadType": 111, "srtp": { "suite": 80, "key": "$bob80_key" } },
  { "name": "alice-srtp32", "port": $alice32_port, "payloadType": 111, "srtp": { "suite": 32, "key": "$alice32_key" } },
  { "name": "bob-srtp32", "port": $bob32_port, "payloadType": 111, "srtp": { "suite": 32, "key": "$bob32_key" } } ] }
EOF
"$roomtap" record --room "$work/people.json" --duration 9 --out "$work/out/room" --quiet \
  >"$work/roomtap.out" 2>"$work/roomtap.err" &
recorder_pid=$!
for _ in $(seq 100); do
  grep -qi ":$(printf %04X "$bob32_port") " /proc/net/udp && break; sleep 0.1
done

# The room, its two plain-RTP participants (each alone in its group) and a forwarder per group.
python3 - "$http_port" "$alice_port" "$bob_port" "$echo_alice" "$echo_bob" "$alice80_port" "$bob80_port" \
  "$alice32_port" "$bob32_port" "$alice80_key" "$bob80_key" "$alice32_key" "$bob32_key" >"$work/janus-ports" <<'PY'
import json, sys, urllib.request
http, alice, bob, echo_alice, echo_bob, alice80, bob80, alice32, bob32 = (int(a) for a in sys.argv[1:10])
alice80_key, bob80_key, alice32_key, bob32_key = sys.argv[10:14]
base = "http://127.0.0.1:%d/janus" % http
def post(path, body):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=10))
session = post("", {"janus": "create", "transaction": "s"})["data"]["id"]
def attach():
    return post("/%d" % session, {"janus": "attach", "plugin": "janus.plugin.audiobridge",
                                   "transaction": "a"})["data"]["id"]
def message(handle, body):
    return post("/%d/%d" % (session, handle), {"janus": "message", "transaction": "m", "body": body})
admin = attach()
room = 4242
created = message(admin, {"request": "create", "room": room, "sampling_rate": 48000,
                          "allow_rtp_participants": True, "groups": ["alice", "bob"]})
assert created["plugindata"]["data"].get("audiobridge") == "created", created
handles = {}
for name, echo in (("alice", echo_alice), ("bob", echo_bob)):
    handle = attach()
    handles[handle] = name
    message(handle, {"request": "join", "room": room, "display": name, "group": name,
                     "rtp": {"ip": "127.0.0.1", "port": echo, "payload_type": 111}})
ports = {}
for _ in range(20):
    if len(ports) == 2: break
    for event in json.load(urllib.request.urlopen(base + "/%d?maxev=10" % session, timeout=35)):
        data = event.get("plugindata", {}).get("data", {})
        assert "error" not in data, data
        if "rtp" in data and event.get("sender") in handles:
            ports[handles[event["sender"]]] = data["rtp"]["port"]
# Each group three times: plain, then SRTP as INTEGRATIONS.md shows it (srtp_suite, srtp_crypto).
for name, port, suite, key in (("alice", alice, None, None), ("bob", bob, None, None),
                               ("alice", alice80, 80, alice80_key), ("bob", bob80, 80, bob80_key),
                               ("alice", alice32, 32, alice32_key), ("bob", bob32, 32, bob32_key)):
    request = {"request": "rtp_forward", "room": room, "group": name, "host": "127.0.0.1",
               "port": port, "codec": "opus", "ptype": 111}
    if suite: request.update({"srtp_suite": suite, "srtp_crypto": key})
    forwarded = message(admin, request)
    assert forwarded["plugindata"]["data"].get("audiobridge") == "success", forwarded
print(ports["alice"], ports["bob"])
PY
read -r janus_alice janus_bob <"$work/janus-ports"

send() {  # frequency, Janus's port for the participant, the participant's own port
  ffmpeg -hide_banner -loglevel error -re -f lavfi -i "sine=f=$1:d=4" -c:a libopus -ac 1 \
    -payload_type 111 -f rtp "rtp://127.0.0.1:$2?localport=$3" >/dev/null
}
send 440 "$janus_alice" "$echo_alice" & a=$!
send 660 "$janus_bob" "$echo_bob" & b=$!
wait "$a" "$b"
wait "$recorder_pid"; recorder_pid=""

python3 - "$work/out/room" "$alice80_key" "$bob80_key" "$alice32_key" "$bob32_key" <<'PY'
import json, math, struct, sys, wave
out = sys.argv[1]
room = json.load(open(out + "/room.json"))
def power(samples, f):
    k = 2 * math.cos(2 * math.pi * f / 48000); s1 = s2 = 0.0
    for x in samples: s1, s2 = x + k * s1 - s2, s1
    return s1 * s1 + s2 * s2 - k * s1 * s2
ok = True
received = {r["listen"].rsplit(":", 1)[1]: r for r in room["network"]["received"]}
seen = set()
for track in room["tracks"]:
    name = track["name"]
    if name.split("-")[0] not in ("alice", "bob"): continue
    seen.add(name)
    w = wave.open(out + "/" + track["file"])
    data = struct.unpack("<%dh" % w.getnframes(), w.readframes(w.getnframes()))
    loud = [i for i, x in enumerate(data) if abs(x) > 1000]
    own, other = (440, 660) if name.startswith("alice") else (660, 440)
    if not loud:
        print("%s: silent" % name); ok = False; continue
    active = data[loud[0]:loud[0] + 48000]
    ratio = power(active, own) / max(1e-9, power(active, other))
    seconds = len(loud) / 48000
    rtp = track.get("rtp", {})
    counters = received.get(str(rtp.get("port")), {})
    rejected = counters.get("srtpRejected") or 0
    print("%s: %.2f s above -30 dBFS, %d Hz / %d Hz power %.0f, packets %s, lost %s, srtpRejected %s, "
          "sender-report timing %s, file %d samples, room %d"
          % (name, seconds, own, other, ratio, rtp.get("packets"), rtp.get("lost"), counters.get("srtpRejected"),
             rtp.get("senderReportTiming"), len(data), room["durationSamples"]))
    # Janus 1.1.2's SRTP forwarders of a group's mix sometimes send 0.5-1.5 s of damaged audio at
    # the start (ffmpeg's own srtp:// decode of such a forwarder shows the same damage, window for
    # window): an SRTP file must have its sender's tone, every packet the plain forwarder had and
    # none rejected; the plain files are checked to the full length of the tone.
    srtp = "srtp" in name
    plain = next(t for t in room["tracks"] if t["name"] == name.split("-")[0])
    ok = ok and ratio > 100 and seconds > (1.5 if srtp else 3) and len(data) == room["durationSamples"]
    ok = ok and rejected == 0 and rtp.get("packets") == plain["rtp"]["packets"] and rtp.get("lost") == 0
expected = {"alice", "bob", "alice-srtp80", "bob-srtp80", "alice-srtp32", "bob-srtp32"}
if seen != expected:
    print("tracks %s, expected %s" % (sorted(seen), sorted(expected))); ok = False
text = open(out + "/room.json").read()
if any(k[:12] in text for k in sys.argv[2:]):
    print("a key is in room.json"); ok = False
sys.exit(0 if ok else 1)
PY
echo "janus-audiobridge: passed"
