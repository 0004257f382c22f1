#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind: repeatable, unlike CPU time on a shared machine)
# of `roomtap record` on a room of 8 one-minute speakers against the bare libopus decode loop over
# the same packets. The bare count includes reading the packets (libogg) and process start-up, so
# the ratio slightly favours the bare loop. Run by `make bench` after roomtap-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release
files=(/tmp/roomtap-bench/speaker-{0..7}-60s.opus)
args=()
for i in "${!files[@]}"; do args+=(--file "s$i=${files[$i]}"); done
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -nE 's/.*refs: +([0-9,]+).*/\1/p' | tr -d ,; }
roomtap=$(count "$bin/roomtap" record "${args[@]}" --out /tmp/roomtap-bench/out-callgrind --force --quiet)
bare=$(count "$bin/roomtap-bench" --bare-only "${files[@]}")
awk -v r="$roomtap" -v b="$bare" 'BEGIN {
  printf "\ninstructions (callgrind), 8 speakers x 60 s:\n"
  printf "  roomtap record    %6.3f G\n  bare libopus loop %6.3f G\n  ratio (bare / roomtap) %.3f\n", r/1e9, b/1e9, b/r }'
