#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind: repeatable, unlike CPU time on a shared machine)
# of `roomtap record --threads 1` on a room of SPEAKERS (default 8) one-minute speakers, against
# roomtap-minimal (libogg + opus_decode on one room clock, the same WAVs with write(2)) and the
# bare libopus decode loop over the same packets. One render thread: callgrind runs threads one
# at a time, where a waiting render thread's spinning would count as work. The bare count
# includes reading the packets (libogg) and process start-up, so the ratio slightly favours the
# bare loop. Run by `make bench` after roomtap-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release
speakers=${SPEAKERS:-8}
files=()
for i in $(seq 0 $((speakers - 1))); do files+=("/tmp/roomtap-bench/speaker-$((i % 8))-60s.opus"); done
args=()
for i in "${!files[@]}"; do args+=(--file "s$i=${files[$i]}"); done
out=/dev/shm/roomtap-bench-callgrind
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -nE 's/.*refs: +([0-9,]+).*/\1/p' | tr -d ,; }
# valgrind 3.19 gives up on the C targets' DWARF 5 debug info (see docs/ARCHITECTURE.md, "Memory
# checkers"): count a copy without it (the same instructions).
objcopy --strip-debug "$bin/roomtap" "$out.roomtap"
objcopy --strip-debug "$bin/roomtap-bench" "$out.roomtap-bench"
roomtap=$(count "$out.roomtap" record "${args[@]}" --threads 1 --out "$out/roomtap" --force --quiet)
rm -rf "$out/minimal"
minimal=$(count "$bin/roomtap-minimal" "$out/minimal" "${files[@]}")
bare=$(count "$out.roomtap-bench" --bare-only "${files[@]}")
rm -rf "$out" "$out.roomtap" "$out.roomtap-bench"
awk -v r="$roomtap" -v m="$minimal" -v b="$bare" -v k="$speakers" 'BEGIN {
  printf "\ninstructions (callgrind), %d speakers x 60 s:\n", k
  printf "  roomtap record --threads 1 %7.3f G\n  roomtap-minimal            %7.3f G\n  bare libopus loop          %7.3f G\n", r/1e9, m/1e9, b/1e9
  printf "  ratio minimal / roomtap %.3f (target >= 0.95); bare / roomtap %.3f\n", m/r, b/r }'
