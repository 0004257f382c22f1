#!/usr/bin/env bash
# Regenerates the sample "room" used by the roomtap demo: three speakers of a
# short standup meeting, one Ogg Opus file each (48 kHz mono).
#
#   alice.opus  9.0 s, room offset 0    speaks 0.3 s .. ~3.7 s, pause, ~5.2 s .. ~8.6 s
#   bob.opus    8.0 s, room offset 2.5  (pass bob=Samples/room/bob.opus@2.5)
#   carol.opus  4.5 s, room offset 0    speaks 0.1 s .. ~3.7 s, then leaves
#
# Needs: espeak-ng, sox (+ soxi), opusenc (opus-tools).
# Deterministic: fixed texts/voices/positions, no dither (sox -D), repeatable
# sox mode (-R), fixed Ogg serial numbers, no dates in the metadata.
# Usage: bash Samples/room/generate.sh   (works from any directory)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in espeak-ng sox soxi opusenc; do
  command -v "$tool" >/dev/null 2>&1 || { echo "generate.sh: missing tool: $tool" >&2; exit 1; }
done

readonly RATE=48000
readonly SPEED=170          # espeak-ng words per minute
tmp="$(mktemp -d "${TMPDIR:-/tmp}/roomtap-samples.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# seconds -> samples at $RATE (rounded)
samples() { awk -v s="$1" -v r="$RATE" 'BEGIN { printf "%d", s * r + 0.5 }'; }

# clip OUT VOICE TEXT
# Synthesizes TEXT, strips leading/trailing silence, resamples to 48 kHz mono
# 16-bit and normalizes the peak to -3 dBFS.
clip() {
  local out="$1" voice="$2" text="$3"
  espeak-ng -v "$voice" -s "$SPEED" -w "$out.espeak.wav" "$text"
  sox -R -D -q "$out.espeak.wav" -c 1 -b 16 "$out" \
    silence 1 0.02 0.5% reverse silence 1 0.02 0.5% reverse \
    rate -v "$RATE" gain -n -3
}

# track NAME SERIAL TOTAL_SECONDS VOICE START1 TEXT1 [START2 TEXT2 ...]
# Places each sentence clip at its start time (seconds into the file) on a
# silent track of exactly TOTAL_SECONDS and encodes it to NAME.opus.
track() {
  local name="$1" serial="$2" total_s="$3" voice="$4"
  shift 4
  local total; total="$(samples "$total_s")"
  local base="$tmp/$name.base.wav"
  sox -R -D -q -n -r "$RATE" -c 1 -b 16 "$base" trim 0 "${total}s"

  local inputs=(-v 1 "$base") i=0 prev_end=0
  while (( $# >= 2 )); do
    local start_s="$1" text="$2"
    shift 2
    i=$((i + 1))
    local c="$tmp/$name.$i.wav" placed="$tmp/$name.$i.placed.wav"
    clip "$c" "$voice" "$text"
    local start len end
    start="$(samples "$start_s")"
    len="$(soxi -s "$c")"
    end=$((start + len))
    if (( start < prev_end || end > total )); then
      echo "generate.sh: $name sentence $i ($start..$end samples) overlaps the previous one or exceeds ${total} samples" >&2
      exit 1
    fi
    prev_end=$end
    sox -R -D -q "$c" "$placed" pad "${start}s"
    inputs+=(-v 1 "$placed")
    printf '  %-6s sentence %d: %6.3f s .. %6.3f s  "%s"\n' "$name" "$i" \
      "$(awk -v a="$start" -v r="$RATE" 'BEGIN{print a/r}')" \
      "$(awk -v a="$end" -v r="$RATE" 'BEGIN{print a/r}')" "$text"
  done

  local mixed="$tmp/$name.wav"
  sox -R -D -q -m "${inputs[@]}" -b 16 "$mixed" trim 0 "${total}s"

  opusenc --quiet --bitrate 24 --framesize 20 --serial "$serial" \
    --title "$name" --artist "$name" --album "roomtap sample room" \
    --comment "VOICE=espeak-ng $voice" \
    "$mixed" "$tmp/$name.opus"
  mv -f "$tmp/$name.opus" "$name.opus"
  printf 'wrote %s/%s.opus (%s samples = %s s at %d Hz, %s bytes)\n' \
    "$PWD" "$name" "$total" "$total_s" "$RATE" "$(wc -c < "$name.opus" | tr -d ' ')"
}

track alice 1001 9.0 en-us+f3 \
  0.30 "Good morning. Yesterday I finished the login page refactor." \
  5.20 "Today I'm writing tests for the payment flow. No blockers."

track bob 1002 8.0 en-gb+m3 \
  0.50 "Sorry I'm late. I'm still fixing the flaky build." \
  4.00 "Should be done by lunch. Alice, can you review my pull request?"

track carol 1003 4.5 en-gb-scotland+f4 \
  0.10 "Morning, all. Staging is green. I have to leave early."
