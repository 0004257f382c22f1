// swift-tools-version: 6.0
// roomtap: record and route the audio of a multi-party call room.
// Data path: ingest (RoomTapIngest, RoomTapRTP, ALSA capture) -> room clock, tracks, controls, mixer
// (RoomTapCore) -> sinks (RoomTapSinks, ALSA playback, RTP out, the agent); control socket (RoomTapControl).
// Linux only (Debian 12 and later): epoll, recvmmsg, eventfd, ALSA, SCHED_FIFO; SwiftPM has no
// platforms entry for Linux, so there is none.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "roomtap",
    products: [
        .library(name: "RoomTap", targets: ["RoomTap"]),
        .executable(name: "roomtap", targets: ["roomtap"]),
    ],
    targets: [
        // C libraries from Debian, through system-library targets (shim.h holds inline wrappers
        // for the variadic ctl functions Swift cannot call).
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "COgg", pkgConfig: "ogg", providers: [.apt(["libogg-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // libavformat, loaded at first use (dlopen): its 134 libraries would cost every run start-up time.
        .target(name: "CAVFormat"),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CSpanDSP", pkgConfig: "spandsp", providers: [.apt(["libspandsp-dev"])]),
        // OpenSSL: libcrypto's MD5/SHA-256 digests and HMAC-SHA256 (S3 checksums, webhook signatures);
        // libssl's DTLS with use_srtp and keying-material export (DTLS-SRTP for WebRTC joins).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libnice: ICE for WebRTC joins, on the GLib main loop.
        .systemLibrary(name: "CNice", pkgConfig: "nice", providers: [.apt(["libnice-dev"])]),
        // libnghttp2: HTTP/2 (framing, HPACK, flow control) for Sora's audio streaming.
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),

        // The one lock type of our own code (`Locked`: a heap-allocated pthread mutex and value).
        .target(name: "RoomTapSync", dependencies: ["CLinuxNet"], swiftSettings: strict),
        // Output files: exclusive or overwriting create (never through a link), complete writes,
        // fsync, and atomic replace (temporary file, rename, directory fsync); typed OutputFileError.
        .target(name: "RoomTapFiles", swiftSettings: strict),
        // The room core: frames, tracks, sinks, the room clock, the mixer. No C library (CLinuxNet:
        // pthread_setname_np).
        .target(name: "RoomTapCore", dependencies: ["RoomTapSync", "CLinuxNet"], swiftSettings: strict),
        // Ingest: Ogg Opus files (libogg + libopus) turned into 10 ms frame sources.
        .target(name: "RoomTapIngest", dependencies: ["RoomTapCore", "COpus", "COgg"], swiftSettings: strict),
        // The one JSON reader (positions for messages; room files, .mjr headers, control requests,
        // Realtime events) and `JSONValue`, the plain value the control protocol and agent use.
        .target(name: "RoomTapJSON", swiftSettings: strict),
        // Sample-rate conversion: the one wrapper of libsoxr, with the recipe each user needs (files,
        // the agent's ears, the telephone codecs on the live clock).
        .target(name: "RoomTapResampling", dependencies: ["CSoxr"], swiftSettings: strict),
        // Linux calls Glibc's Swift module leaves out (epoll, eventfd, recvmmsg), behind plain C types.
        .target(name: "CLinuxNet"),
        // Live ingest: RTP/RTCP wire formats, room descriptions (SDP, JSON), SRTP (libsrtp2) and who
        // may send, the jitter buffer; the PBX codecs (G.711/G.722 through libspandsp, L16) resampled to
        // 48 kHz by libsoxr.
        .target(
            name: "RoomTapRTP",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapJSON", "COpus", "CLinuxNet", "CSRTP", "CSpanDSP",
                "RoomTapResampling",
            ],
            swiftSettings: strict),
        // Recordings in containers: the Opus tracks of WebM, Matroska and MP4 (demuxed by libavformat,
        // played through the RTP jitter buffer as recorded streams), and Sora's recording folders
        // (their archive and report JSONs through the one JSON reader).
        .target(
            name: "RoomTapContainer", dependencies: ["RoomTapCore", "RoomTapRTP", "RoomTapJSON", "CAVFormat"],
            swiftSettings: strict),
        // Sinks that do I/O: WAV/RF64 files (crash-safe), repair; FLAC (libFLAC) and Ogg Opus (libopus +
        // libogg) files, any rate (libsoxr), loudness (libebur128).
        .target(
            name: "RoomTapSinks",
            dependencies: [
                "RoomTapSync", "RoomTapFiles", "RoomTapCore", "CFLAC", "COpus", "COgg", "RoomTapResampling", "CEBUR128",
            ],
            swiftSettings: strict),
        // Track controls over a Unix socket: the line-delimited JSON protocol, server and client.
        .target(
            name: "RoomTapControl", dependencies: ["RoomTapSync", "RoomTapJSON"], swiftSettings: strict),
        // ALSA (libasound2): playback of a track through a sound device, capture of a microphone.
        .target(name: "RoomTapALSA", dependencies: ["RoomTapSync", "RoomTapCore", "CALSA"], swiftSettings: strict),
        // RFC 6455 WebSocket client: libcurl (CONNECT_ONLY: TCP, TLS, proxies) + libwslay framing.
        .target(name: "RoomTapWebSocket", dependencies: ["RoomTapSync", "CCurl", "CWslay"], swiftSettings: strict),
        // The OpenAI Realtime agent: hears the room (mix-minus, 24 kHz via libsoxr), speaks a track;
        // the pipeline agent: per-speaker turns to a chat model and speech over HTTP (libcurl, RoomTapStorage).
        .target(
            name: "RoomTapAgent",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapWebSocket", "RoomTapResampling", "RoomTapJSON", "COpus",
                "RoomTapStorage",
            ],
            swiftSettings: strict),
        // Object storage and events: S3 (SigV4 through libcurl), the recording uploader with its
        // journal, webhooks signed with HMAC-SHA256 (libcrypto).
        .target(
            name: "RoomTapStorage", dependencies: ["RoomTapSync", "RoomTapFiles", "RoomTapJSON", "CCurl", "COpenSSL"],
            swiftSettings: strict),
        // The fleet: room jobs on Redis Streams (libhiredis), leases with fencing epochs, the worker
        // that records each room as a child `roomtap record`, failover joins (from disk or the bucket's
        // segments), metrics, sd_notify.
        .target(
            name: "RoomTapFleet",
            dependencies: [
                "RoomTapSync", "RoomTapFiles", "RoomTapCore", "RoomTapSinks", "RoomTapJSON", "RoomTapStorage",
                "CHiredis",
                "CLinuxNet",
            ],
            swiftSettings: strict),
        // Joining a room as a WebRTC participant: ICE (libnice), DTLS-SRTP (OpenSSL, libsrtp2), SDP
        // offer/answer, and a signaling adapter per server kind (Janus VideoRoom, WHEP) feeding
        // the live room's tracks.
        .target(
            name: "RoomTapWebRTC",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapRTP", "RoomTapJSON", "RoomTapStorage", "RoomTapWebSocket",
                "CNice", "COpenSSL",
            ],
            swiftSettings: strict),
        // Sora's audio streaming: an HTTP/2 server (libnghttp2, h2c) taking each Sora connection's
        // Opus packets (POST /speech) into a track of the live room.
        .target(
            name: "RoomTapSora",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapRTP", "RoomTapJSON", "RoomTapWebRTC", "CNGHTTP2", "COpus",
                "COpenSSL",
                "CLinuxNet",
            ],
            swiftSettings: strict),
        // Every library target under one import, for the recorder, the tests and the benchmarks (not
        // a product: the library's users import the curated RoomTap).
        .target(
            name: "RoomTapAll",
            dependencies: [
                "RoomTapCore", "RoomTapIngest", "RoomTapRTP", "RoomTapContainer", "RoomTapSinks", "RoomTapControl",
                "RoomTapALSA", "RoomTapWebSocket", "RoomTapAgent", "RoomTapFleet", "RoomTapWebRTC", "RoomTapSora",
            ],
            swiftSettings: strict),
        // The public library, curated: the Sora-shaped core, the sources (files, RTP, recordings in
        // containers, WebRTC joins, Sora's audio streaming, ALSA), the sinks, the agent, the recorder.
        // Not the control protocol, the fleet or the WebSocket client: the recorder's own parts.
        .target(
            name: "RoomTap",
            dependencies: [
                "RoomTapCore", "RoomTapIngest", "RoomTapRTP", "RoomTapContainer", "RoomTapSinks", "RoomTapALSA",
                "RoomTapAgent", "RoomTapWebRTC", "RoomTapSora", "RoomTapRecorder",
            ],
            swiftSettings: strict),
        // The recorder as a library: the commands (record, export, control verbs, the fleet's
        // worker...), the recording's assembly, output routing, supervision and report.
        .target(
            name: "RoomTapRecorder",
            dependencies: ["RoomTapSync", "RoomTapFiles", "RoomTapAll", "RoomTapJSON", "RoomTapStorage", "CLinuxNet"],
            swiftSettings: strict),
        // The command-line tool: main.swift only, around RoomTapRecorder's CommandDispatch.
        .executableTarget(
            name: "roomtap", dependencies: ["RoomTapRecorder", "CLinuxNet"],
            swiftSettings: strict),

        // Sample program: the Sora documentation's "record every stream to WAV", with this library.
        .executableTarget(
            name: "record-everyone", dependencies: ["RoomTap"], path: "Samples/RecordEveryone",
            swiftSettings: strict),
        // Benchmarks (make bench) and fuzz entry points (make fuzz).
        .executableTarget(
            name: "roomtap-bench",
            dependencies: [
                "RoomTapSync", "RoomTapAll", "RoomTapTestSupport", "RoomTapMediaTestSupport", "RoomTapRTPTestSupport",
                "RoomTapAgentTestSupport", "COpus",
            ],
            path: "Benchmarks/roomtap-bench", swiftSettings: strict),
        // The yardstick of `make bench`: the smallest one-thread program for the offline job.
        .executableTarget(
            name: "roomtap-minimal", dependencies: ["COpus", "COgg"], path: "Benchmarks/roomtap-minimal",
            swiftSettings: strict),
        // The fuzz harnesses: one entry per parser family of outside input, with the invariants each
        // checks; out of the product targets, shared by roomtap-fuzz and the hostile-input tests.
        .target(
            name: "RoomTapFuzzing",
            dependencies: [
                "RoomTapCore", "RoomTapRTP", "RoomTapContainer", "RoomTapJSON", "RoomTapControl", "RoomTapStorage",
                "RoomTapAgent", "RoomTapFleet", "RoomTapWebRTC", "RoomTapSora",
            ],
            path: "Fuzz/Harnesses", swiftSettings: strict),
        .executableTarget(
            name: "roomtap-fuzz",
            dependencies: [
                "RoomTapCore", "RoomTapIngest", "RoomTapRTP", "RoomTapContainer", "RoomTapJSON", "RoomTapControl",
                "RoomTapAgent", "RoomTapFleet", "RoomTapWebRTC", "RoomTapSora", "RoomTapFuzzing",
            ],
            path: "Fuzz/roomtap-fuzz",
            swiftSettings: strict + [.unsafeFlags(["-parse-as-library"])]),

        // Test support, in layers, so a test target builds only what it tests (docs/ARCHITECTURE.md,
        // "Test support"); a layer depends on the core layer and the product targets it fakes, never
        // on another layer. The core: temporary directories, waitUntil, child processes, free ports,
        // loopback TCP, test signals, synthetic sources, collecting and slow sinks.
        .target(name: "RoomTapTestSupport", dependencies: ["RoomTapSync", "RoomTapCore"], swiftSettings: strict),
        // Media files and devices: the Ogg Opus writer and dumps, reference decode, WAV fixtures,
        // ALSA's file plugin.
        .target(
            name: "RoomTapMediaTestSupport",
            dependencies: ["RoomTapTestSupport", "RoomTapSinks", "COpus", "COgg", "CALSA"], swiftSettings: strict),
        // RTP: packet builders, the paced test sender (impairments, SRTP), source-bound sockets,
        // Janus recordings, reference decode of what was sent.
        .target(
            name: "RoomTapRTPTestSupport",
            dependencies: ["RoomTapTestSupport", "RoomTapSync", "RoomTapRTP", "COpus", "CSRTP"],
            swiftSettings: strict),
        // The agent's far ends: WebSocket and CONNECT/TLS test servers, the fake Realtime server, the
        // fake OpenAI HTTP server of the pipeline agent.
        .target(
            name: "RoomTapAgentTestSupport",
            dependencies: ["RoomTapTestSupport", "RoomTapSync", "RoomTapJSON", "RoomTapWebSocket", "RoomTapAgent"],
            swiftSettings: strict),
        // The command line and the services it talks to: the CLI runner, Redis, S3 (SeaweedFS), the
        // fault proxy, the webhook receiver, Janus, TURN and the aiortc peers.
        .target(
            name: "RoomTapCLITestSupport",
            dependencies: [
                "RoomTapTestSupport", "RoomTapSync", "RoomTapFleet", "RoomTapStorage", "RoomTapRecorder",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapCoreTests", dependencies: ["RoomTapSync", "RoomTapCore", "RoomTapTestSupport"],
            swiftSettings: strict),
        // Counts heap allocations per thread (interposes malloc); linked into the test binary only.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        .testTarget(
            name: "RealTimePathTests",
            dependencies: [
                "RoomTapSync", "RoomTapAll", "RoomTapRTP", "RoomTapTestSupport", "RoomTapRTPTestSupport",
                "CAllocationCounter", "RoomTapFuzzing",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapIngestTests",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapIngest", "RoomTapTestSupport", "RoomTapMediaTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapRTPTests",
            dependencies: [
                "RoomTapSync", "RoomTapAll", "RoomTapCore", "RoomTapRTP", "RoomTapTestSupport", "RoomTapRTPTestSupport",
                "COpus", "RoomTapFuzzing",
            ],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "RoomTapSinksTests",
            dependencies: [
                "RoomTapSync", "RoomTapFiles", "RoomTapCore", "RoomTapSinks", "RoomTapTestSupport",
                "RoomTapMediaTestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapFleetTests",
            dependencies: [
                "RoomTapSync", "RoomTapAll", "RoomTapFleet", "RoomTapStorage", "RoomTapTestSupport",
                "RoomTapMediaTestSupport", "RoomTapCLITestSupport", "RoomTapFuzzing",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapCLITests",
            dependencies: [
                "RoomTapSync", "RoomTapAll", "RoomTapSora", "RoomTapStorage", "RoomTapTestSupport",
                "RoomTapMediaTestSupport", "RoomTapRTPTestSupport", "RoomTapAgentTestSupport", "RoomTapCLITestSupport",
                "RoomTapFuzzing",
            ],
            swiftSettings: strict),
        // The recorder as a library, in the test's process (no roomtap child).
        .testTarget(
            name: "RoomTapRecorderTests",
            dependencies: ["RoomTapAll", "RoomTapRecorder", "RoomTapTestSupport", "RoomTapMediaTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapControlTests",
            dependencies: ["RoomTapSync", "RoomTapControl", "RoomTapTestSupport", "RoomTapJSON", "RoomTapFuzzing"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapALSATests",
            dependencies: ["RoomTapCore", "RoomTapALSA", "RoomTapTestSupport", "RoomTapMediaTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapWebSocketTests",
            dependencies: ["RoomTapSync", "RoomTapWebSocket", "RoomTapTestSupport", "RoomTapAgentTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapStorageTests",
            dependencies: ["RoomTapStorage", "RoomTapTestSupport", "RoomTapCLITestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapWebRTCTests",
            dependencies: [
                "RoomTapSync", "RoomTapJSON", "RoomTapRTP", "RoomTapWebRTC", "RoomTapTestSupport",
                "RoomTapRTPTestSupport", "RoomTapFuzzing",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapSoraTests",
            dependencies: ["RoomTapSync", "RoomTapSora", "RoomTapRTP", "RoomTapFuzzing"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapAgentTests",
            dependencies: [
                "RoomTapSync", "RoomTapCore", "RoomTapAgent", "RoomTapWebSocket", "RoomTapTestSupport",
                "RoomTapAgentTestSupport",
                "RoomTapFuzzing",
            ],
            swiftSettings: strict),
        // The WebRTC test peers (Tests/Interop/webrtc/, aiortc) against a real Janus and each other.
        // Real WebRTC peers (Janus, aiortc) against their harness and against `roomtap record --join/--whep`.
        .testTarget(
            name: "RoomTapWebRTCPeerTests",
            dependencies: [
                "RoomTapTestSupport", "RoomTapMediaTestSupport", "RoomTapAgentTestSupport", "RoomTapCLITestSupport",
            ], swiftSettings: strict),
    ]
)
