#!/usr/bin/env bash
# A Janus (Debian `janus` 1.1) for trying the WebRTC test peers by hand: VideoRoom plugin and the
# HTTP API on 127.0.0.1 and a port the kernel gave out, ICE on 127.0.0.1 only (loopback_ice.c),
# room ROOM (default 1234, Opus, 6 publishers) with pin PIN when given. Prints
# `janus http://127.0.0.1:PORT/janus` once Janus answers, then runs Janus in the foreground
# (Ctrl-C stops it; its log is janus.log in the printed directory). JANUS_SESSION_TIMEOUT (seconds,
# default 60) and JANUS_DEBUG_LEVEL (default 4) change those settings.
#
#   bash Tests/Interop/webrtc/janus_loopback.sh [ROOM] [PIN]
# The same configuration as Sources/RoomTapCLITestSupport/WebRTC/JanusTestServer.swift.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
room="${1:-1234}"; pin="${2:-}"
work="$(mktemp -d /tmp/roomtap-janus-webrtc.XXXXXX)"
mkdir -p "$work/conf" "$work/plugins" "$work/transports"
lib=/usr/lib/x86_64-linux-gnu/janus
ln -s "$lib/plugins/libjanus_videoroom.so" "$work/plugins/"
ln -s "$lib/transports/libjanus_http.so" "$work/transports/"
cc -shared -fPIC -O2 -o "$work/loopback_ice.so" "$here/loopback_ice.c" -ldl
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/conf/janus.jcfg" <<JCFG
general: { configs_folder = "$work/conf", plugins_folder = "$work/plugins",
  transports_folder = "$work/transports", events_folder = "$work/none", loggers_folder = "$work/none",
  debug_level = ${JANUS_DEBUG_LEVEL:-4}, admin_secret = "roomtap-test", interface = "127.0.0.1",
  session_timeout = ${JANUS_SESSION_TIMEOUT:-60} }
nat: { ice_enforce_list = "127.0.0.1", ice_tcp = false, nice_debug = false }
media: { ipv6 = false }
JCFG
cat >"$work/conf/janus.transport.http.jcfg" <<JCFG
general: { json = "compact", base_path = "/janus", http = true, port = $port, interface = "lo", https = false }
admin: { admin_http = false }
JCFG
pinline=""; [[ -n "$pin" ]] && pinline=", pin = \"$pin\""
cat >"$work/conf/janus.plugin.videoroom.jcfg" <<JCFG
general: { }
room-$room: { description = "roomtap test room", publishers = 6, audiocodec = "opus", videocodec = "vp8"$pinline }
JCFG
LD_PRELOAD="$work/loopback_ice.so" janus -F "$work/conf" -P "$work/plugins" \
  >"$work/janus.log" 2>&1 &
janus_pid=$!
trap 'kill "$janus_pid" 2>/dev/null || true; wait' EXIT INT TERM
for _ in $(seq 200); do
  curl -s -o /dev/null "http://127.0.0.1:$port/janus/info" && break
  kill -0 "$janus_pid" 2>/dev/null || { tail -20 "$work/janus.log" >&2; exit 1; }
  sleep 0.05
done
echo "janus http://127.0.0.1:$port/janus (room $room${pin:+, pin $pin}; log $work/janus.log)"
wait "$janus_pid"
