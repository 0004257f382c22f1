#!/bin/bash
# valgrind memcheck on the paths the test binary cannot take under valgrind 3.19 (it dies of an
# internal SIGSEGV in libdispatch's signal handling there): a debug build with DWARF 4 debug info
# (3.19 cannot read clang 21's DWARF 5), then
#   1. roomtap record of the sample room (three Ogg Opus files and a mix),
#   2. the agent path (roomtap-bench --agent: a live room, RealtimeAgent, a local WebSocket stand-in),
#   3. a live recorder (ffmpeg sending Opus RTP) steered over its control socket by every verb,
#      each client under memcheck too.
# Logs in .build-valgrind/memcheck/; the last lines are each process's ERROR SUMMARY.
set -u
cd "$(dirname "$0")/../.."
B=.build-valgrind
M=$B/memcheck
swift build --build-tests --scratch-path $B -Xcc -gdwarf-4 -Xswiftc -dwarf-version=4 || exit 1
rm -rf $M && mkdir -p $M
RT=$B/debug/roomtap
VG="valgrind --tool=memcheck --num-callers=30 --error-exitcode=99 --suppressions=Tests/Sanitizers/valgrind.supp"
export SWIFT_BACKTRACE=enable=no
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

$VG --log-file=$M/record.%p.log $RT record --file alice=Samples/room/alice.opus \
  --file bob=Samples/room/bob.opus@2.5 --file carol=Samples/room/carol.opus --out "$work/offline" --mix \
  > $M/record.out 2>&1
echo "record: exit $?"

$VG --log-file=$M/agent.%p.log $B/debug/roomtap-bench --agent --seconds 5 > $M/agent.out 2>&1
echo "agent path: exit $?"

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sock="$work/control.sock"
$VG --log-file=$M/live.%p.log $RT record --listen 127.0.0.1:$port --out "$work/live" --mix --duration 900 \
  --control "$sock" > $M/live.out 2>&1 &
recorder=$!
for _ in $(seq 1 300); do [ -S "$sock" ] && break; sleep 1; done
ffmpeg -hide_banner -loglevel error -re -i Samples/room/alice.opus -c:a copy -f rtp "rtp://127.0.0.1:$port" \
  > $M/ffmpeg.out 2>&1 &
sender=$!
for _ in $(seq 1 300); do ls "$work"/live/ssrc-*.wav > /dev/null 2>&1 && break; sleep 1; done
name=$(basename "$(ls "$work"/live/ssrc-*.wav | head -1)" .wav)
n=0
for verb in "tracks --json" "volume $name -6dB" "mute $name --scope record" "solo $name" "unsolo" "status --json"; do
  n=$((n + 1))
  $VG --log-file=$M/client-$n.%p.log $RT $verb --control "$sock" > $M/client-$n.out 2>&1
  echo "$verb: exit $?"
done
$VG --log-file=$M/client-stop.%p.log $RT stop --control "$sock" > $M/client-stop.out 2>&1
echo "stop: exit $?"
wait $recorder
echo "live recorder: exit $?"
kill $sender 2> /dev/null
grep -H 'ERROR SUMMARY' $M/*.log
! grep -h 'ERROR SUMMARY' $M/*.log | grep -qv ' 0 errors'
