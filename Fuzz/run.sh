#!/usr/bin/env bash
# Fuzzes roomtap's parsers of outside input: Sora's audio-streaming body, RTP/RTCP, SDP (a=crypto) and the JSON room file (srtp,
# allow), SRTP/SRTCP unprotect through libsrtp2, Janus .mjr recordings (and their playout through
# the jitter buffer), Sora recording folders (archive and report JSONs), and the Ogg Opus
# ingest (OpusHead/OpusTags parsers, libogg reader, timeline, decoder,
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
# A Janus subscriber offer, Janus long-poll events, a WHEP Link header, Sora signaling messages
# (WebRTCFuzz); an HTTP request to the live page (HTTPFuzz); a Sora archive JSON and report (SoraFuzz);
# control requests of every command, one per line (ControlFuzz).
for f in Fuzz/seeds/*; do cp -f "$f" "$corpus/seed-$(basename "$f")"; done
for f in Tests/RoomTapRTPTests/Fixtures/*.sdp; do cp -f "$f" "$corpus/seed-$(basename "$f")"; done
# RTP with a one-byte header extension (RFC 8285) and an Opus TOC; an RTCP SR followed by a BYE.
printf '\x90\x6f\x12\x34\x00\x00\x03\xc0\x00\x0a\x11\xce\xbe\xde\x00\x01\x10\x85\x00\x00\xf8\xff\xfe' \
  >"$corpus/seed-rtp-extension.bin"
printf '\x80\xc8\x00\x06\x00\x0a\x11\xce\xe0\x00\x00\x00\x80\x00\x00\x00\x00\x00\x12\xc0\x00\x00\x00\x19\x00\x00\x02\x58\x81\xcb\x00\x01\x00\x00\x0b\x0b' \
  >"$corpus/seed-rtcp-sr-bye.bin"
# A Sora audio-streaming body (audio_streaming_header = true): two frames of a 3-byte Opus packet.
printf '\x00\x06\x0a\x24\x18\x20\x22\x40\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x03\xf8\xff\xfe\x00\x06\x0a\x24\x18\x20\x70\x60\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x03\xf8\xff\xfe' \
  >"$corpus/seed-sora-streaming.bin"
# Janus recordings (the shared fixtures, when the checkout sits beside them): whole and cut.
for f in ../shared/fixtures/janus-mjr/*.mjr; do
  [ -f "$f" ] || continue
  head -c 4096 "$f" >"$corpus/seed-janus-$(basename "$f" .mjr | tail -c 20)-4k.mjr"
done
# An SDES a=crypto value and a room file with SRTP keys and an allow list.
printf '1 AES_CM_128_HMAC_SHA1_32 inline:zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA|2^31' >"$corpus/seed-crypto.txt"
printf '{"allow": ["10.0.0.0/8", "::1"], "participants": [{"name": "a", "port": 25000, "ssrc": 1, "srtp": {"suite": 80, "key": "zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA"}}]}' \
  >"$corpus/seed-room-srtp.json"
# A PBX stream (PBXCodecFuzz): codec byte 0 (PCMU), then packets of 160 µ-law bytes, steps 1 and 8.
{ printf '\x00'; for _ in 1 2 3 4; do printf '\xa0\x01\x08'; head -c 160 /dev/zero | tr '\0' '\125'; done; } \
  >"$corpus/seed-pbx-pcmu.bin"
for f in Samples/room/*.opus; do
  name="$(basename "$f" .opus)"
  cp -f "$f" "$corpus/seed-$name.opus"
  head -c 4096 "$f" >"$corpus/seed-$name-4k.opus"   # a few pages: fast iterations, truncation
done

export SWIFT_BACKTRACE=enable=no
exec "$bin" "$corpus" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1
