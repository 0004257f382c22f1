#!/usr/bin/env bash
# make soak, part 2: a long room on the virtual clock. SPEAKERS speakers (the sample alice.opus,
# placed across HOURS hours of room) recorded with --channels CHANNELS, so each WAV holds HOURS
# hours: at 10 h stereo 6.9 GB, past 4 GiB, so the writer turns it into RF64 for real. Checks:
# every file RF64 with the room's exact sample count, as read by sox and ffprobe; the last
# speaker's audio where it was placed (read past 4 GiB); `roomtap repair` on a copy cut past 4 GiB.
# Needs SPEAKERS x 6.9 GB (+ 4.5 GB for the cut copy) of disk in SOAK_DIR (not tmpfs); everything
# is deleted at the end.
set -euo pipefail
ROOMTAP=${ROOMTAP:-.build/release/roomtap}
SPEAKERS=${SPEAKERS:-8}
HOURS=${HOURS:-10}
CHANNELS=${CHANNELS:-2}
DIR=${SOAK_DIR:-.build/soak}
seconds=$((HOURS * 3600))
out="$DIR/virtual"
rm -rf "$out" && mkdir -p "$DIR"
trap 'rm -rf "$out" "$DIR/cut.wav"' EXIT

args=()
for ((k = 0; k < SPEAKERS; k++)); do
  # Speaker k speaks at k/(SPEAKERS-1) of the room; the last one 20 s before the end.
  offset=$(( SPEAKERS > 1 ? (seconds - 20) * k / (SPEAKERS - 1) : seconds - 20 ))
  args+=(--file "s$k=Samples/room/alice.opus@$offset")
done
echo "virtual soak: $SPEAKERS speakers, $HOURS h of room, $CHANNELS channel(s), in $out"
start=$(date +%s.%N)
TIMEFORMAT="roomtap record: %R s wall, %U s user, %S s system"
time "$ROOMTAP" record "${args[@]}" --channels "$CHANNELS" --out "$out" --quiet
end=$(date +%s.%N)
room_samples=$(python3 -c "import json;print(json.load(open('$out/room.json'))['durationSamples'])")
echo "room: $room_samples samples ($(python3 -c "print(round($room_samples/48000/3600,3))") h), $(python3 -c "print(round($end-$start,1))") s to record"

status=0
for ((k = 0; k < SPEAKERS; k++)); do
  f="$out/s$k.wav"
  size=$(stat -c %s "$f")
  magic=$(head -c 4 "$f")
  sox_samples=$(sox --i -s "$f")
  ff_samples=$(ffprobe -v error -select_streams a:0 -show_entries stream=duration_ts -of csv=p=0 "$f")
  ok=pass
  [[ $magic == RF64 || $size -lt 4294967296 ]] || ok=FAIL
  [[ $sox_samples == "$room_samples" && $ff_samples == "$room_samples" ]] || ok=FAIL
  [[ $ok == pass ]] || status=1
  echo "s$k.wav: $ok: $size bytes, $magic, sox $sox_samples samples, ffprobe $ff_samples"
done

last=$((SPEAKERS - 1))
offset=$(( SPEAKERS > 1 ? (seconds - 20) * last / (SPEAKERS - 1) : seconds - 20 ))
rms=$(sox "$out/s$last.wav" -n trim "$offset" 5 stat 2>&1 | awk '/RMS +amplitude/ {print $3}')
quiet=$(sox "$out/s$last.wav" -n trim $((offset - 60)) 5 stat 2>&1 | awk '/RMS +amplitude/ {print $3}')
echo "s$last.wav at ${offset} s (byte $((offset * 48000 * 2 * CHANNELS))): RMS $rms; a minute before: RMS $quiet"
python3 -c "import sys; sys.exit(0 if float('$rms') > 0.01 and float('$quiet') == 0 else 1)" || { echo "FAIL: audio not where it was placed"; status=1; }

cut=$((4500000000 - 4500000000 % 4 + 3))  # past 4 GiB, mid-sample
head -c "$cut" "$out/s0.wav" >"$DIR/cut.wav"
"$ROOMTAP" repair "$DIR/cut.wav"
expected=$(((cut - $(python3 -c "
import struct
d=open('$out/s0.wav','rb').read(4096)
i=12
while i < len(d):
    cid=d[i:i+4]; n=struct.unpack('<I',d[i+4:i+8])[0]
    if cid==b'data': print(i+8); break
    i+=8+n+(n&1)
")) / (2 * CHANNELS)))
repaired=$(sox --i -s "$DIR/cut.wav")
ff_repaired=$(ffprobe -v error -select_streams a:0 -show_entries stream=duration_ts -of csv=p=0 "$DIR/cut.wav")
if [[ $repaired == "$expected" && $ff_repaired == "$expected" ]]; then r=pass; else r=FAIL; status=1; fi
echo "repair of a copy cut at $cut bytes: $r: sox $repaired, ffprobe $ff_repaired samples, expected $expected"
exit $status
