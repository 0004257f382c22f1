#!/usr/bin/env bash
# make stress: the proof that the tests hold under load. Two full runs of the release test binary
# at the same time, while stress-ng keeps every core busy (--cpu = the machine's cores), then
# each run's summary. Both must pass. Logs: .build/stress-A.log, .build/stress-B.log.
set -uo pipefail
bin=$(swift build -c release --show-bin-path)/roomtapPackageTests.xctest
[[ -x $bin ]] || { echo "no test binary at $bin: run swift build -c release --build-tests first"; exit 2; }
cores=$(nproc)
stress-ng --cpu "$cores" --timeout 2h --quiet &
stress=$!
trap 'kill $stress 2>/dev/null' EXIT
start=$(date +%s)
"$bin" --testing-library swift-testing >.build/stress-A.log 2>&1 &
a=$!
"$bin" --testing-library swift-testing >.build/stress-B.log 2>&1 &
b=$!
peak=0
while kill -0 $a 2>/dev/null || kill -0 $b 2>/dev/null; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  peak=$(python3 -c "print(max($peak, $load))")
  sleep 10
done
wait $a; status_a=$?
wait $b; status_b=$?
echo "two runs side by side under stress-ng --cpu $cores: $(($(date +%s) - start)) s, peak load average $peak"
for run in A B; do
  log=.build/stress-$run.log
  echo "run $run: $(grep -E '^(✔|✘) Test run' "$log" | cut -c1-100)"
  grep -E '^✘ Test .* failed after' "$log" | grep -v '^✘ Test run' | sed 's/^/  /'
done
[[ $status_a -eq 0 && $status_b -eq 0 ]]
