#!/usr/bin/env bash
# How fast the review page of a 3-hour room opens (issue 28: "a 3-hour room opens in under a
# second"): three speakers of 3 hours (Ogg Opus made by ffmpeg from tones with pauses), recorded
# offline with --mix, then `roomtap view` (its own time) and the page in headless Chromium
# (Tests/Browser/view-check.py: load time, the page's first render, first contentful paint).
#
#   bash Benchmarks/view-3h.sh [ROOMTAP]      (default .build/release/roomtap; about 3 GB of disk
#                                              in .build/bench-view, removed at the end)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
roomtap="${1:-$root/.build/release/roomtap}"
work="$root/.build/bench-view"
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
seconds=10800
for speaker in 1:330 2:440 3:550; do
  name="s${speaker%%:*}"; hz="${speaker##*:}"
  # A tone that talks for 3 s out of every 9 s (each speaker at their own third of the cycle).
  offset=$(( (${speaker%%:*} - 1) * 3 ))
  ffmpeg -hide_banner -loglevel error -f lavfi \
    -i "sine=f=$hz:d=$seconds,volume='if(between(mod(t+9-$offset,9),0,3),0.5,0)':eval=frame" \
    -c:a libopus -b:a 24k -ac 1 "$work/$name.opus"
done
start=$(date +%s.%N)
"$roomtap" record --file s1="$work/s1.opus" --file s2="$work/s2.opus" --file s3="$work/s3.opus" \
  --mix --out "$work/room" --quiet
echo "record: $(echo "$(date +%s.%N) - $start" | bc) s for a ${seconds} s room"
start=$(date +%s.%N)
"$roomtap" view "$work/room" > /dev/null
echo "view: $(echo "$(date +%s.%N) - $start" | bc) s; index.html $(stat -c %s "$work/room/index.html") bytes"
python3 "$root/Tests/Browser/view-check.py" --url "file://$work/room/index.html" --timeout 60 |
  python3 -c 'import json, sys; d = json.load(sys.stdin); print("page: loaded in %.3f s, first render %s ms, first contentful paint %s ms, %d lanes" % (d["loadSeconds"], d["firstRenderMs"], d["firstContentfulPaintMs"], len(d["lanes"])))'
