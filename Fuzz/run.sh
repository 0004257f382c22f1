#!/usr/bin/env bash
# Fuzzes roomtap's Ogg Opus ingest (OpusHead/OpusTags parsers, libogg reader, timeline, decoder,
# frame source) with libFuzzer for SECONDS (default 60).
#
#   bash Fuzz/run.sh [SECONDS]
#
# Recipe: `swift build --sanitize=fuzzer` instruments the Swift code for coverage and links
# libFuzzer, whose main() calls LLVMFuzzerTestOneInput (Fuzz/roomtap-fuzz/main.swift);
# `-Xswiftc -DFUZZING` compiles out that file's @main, which would clash with libFuzzer's main.
# A plain `swift build` makes a runner that replays files given as arguments (crash repros).
#
# Environment: FUZZ_CORPUS (default /tmp/roomtap-fuzz-corpus, seeded with Samples/room/*.opus and
# truncated copies), FUZZ_ARTIFACTS (crashing inputs, default /tmp/roomtap-fuzz-artifacts),
# FUZZ_SCRATCH (build directory, default /tmp/build-fuzz), SWIFT (default swift).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
swift="${SWIFT:-swift}"
scratch="${FUZZ_SCRATCH:-/tmp/build-fuzz}"
corpus="${FUZZ_CORPUS:-/tmp/roomtap-fuzz-corpus}"
artifacts="${FUZZ_ARTIFACTS:-/tmp/roomtap-fuzz-artifacts}"
flags=(--scratch-path "$scratch" -c debug --sanitize=fuzzer -Xswiftc -DFUZZING)

"$swift" build "${flags[@]}" --product roomtap-fuzz
bin="$("$swift" build "${flags[@]}" --show-bin-path)/roomtap-fuzz"

mkdir -p "$corpus" "$artifacts"
for f in Samples/room/*.opus; do
  name="$(basename "$f" .opus)"
  cp -f "$f" "$corpus/seed-$name.opus"
  head -c 4096 "$f" >"$corpus/seed-$name-4k.opus"   # a few pages: fast iterations, truncation
done

export SWIFT_BACKTRACE=enable=no
exec "$bin" "$corpus" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1
