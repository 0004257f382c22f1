// swift-tools-version: 6.0
// roomtap: record and route the audio of a multi-party call room.
// Data path: ingest (RoomTapIngest, RoomTapRTP, ALSA capture) -> room clock, tracks, controls, mixer
// (RoomTapCore) -> sinks (RoomTapSinks, ALSA playback, RTP out, the agent); control socket (RoomTapControl).
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "roomtap",
    platforms: [.macOS(.v15)],
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
        .systemLibrary(name: "CSpanDSP", pkgConfig: "spandsp", providers: [.apt(["libspandsp-dev"])]),

        // The room core: frames, tracks, sinks, the room clock, the mixer. No C dependencies.
        .target(name: "RoomTapCore", swiftSettings: strict),
        // Ingest: Ogg Opus files (libogg + libopus) turned into 10 ms frame sources.
        .target(name: "RoomTapIngest", dependencies: ["RoomTapCore", "COpus", "COgg"], swiftSettings: strict),
        // Linux calls Glibc's Swift module leaves out (epoll, eventfd, recvmmsg), behind plain C types.
        .target(name: "CLinuxNet"),
        // Live ingest: RTP/RTCP wire formats, room descriptions (SDP, JSON), the jitter buffer; the
        // PBX codecs (G.711/G.722 through libspandsp, L16) resampled to 48 kHz by libsoxr.
        .target(
            name: "RoomTapRTP", dependencies: ["RoomTapCore", "COpus", "CLinuxNet", "CSpanDSP", "CSoxr"],
            swiftSettings: strict),
        // Sinks that do I/O: WAV/RF64 files (crash-safe), repair.
        .target(name: "RoomTapSinks", dependencies: ["RoomTapCore"], swiftSettings: strict),
        // Track controls over a Unix socket: the line-delimited JSON protocol, server and client.
        .target(name: "RoomTapControl", dependencies: ["RoomTapCore"], swiftSettings: strict),
        // ALSA (libasound2): playback of a track through a sound device, capture of a microphone.
        .target(name: "RoomTapALSA", dependencies: ["RoomTapCore", "CALSA"], swiftSettings: strict),
        // RFC 6455 WebSocket client: libcurl (CONNECT_ONLY: TCP, TLS, proxies) + libwslay framing.
        .target(name: "RoomTapWebSocket", dependencies: ["CCurl", "CWslay"], swiftSettings: strict),
        // The OpenAI Realtime agent: hears the room (mix-minus, 24 kHz via libsoxr), speaks a track.
        .target(
            name: "RoomTapAgent", dependencies: ["RoomTapCore", "RoomTapWebSocket", "CSoxr", "COpus"],
            swiftSettings: strict),
        // The public library: re-exports the targets above.
        .target(
            name: "RoomTap",
            dependencies: [
                "RoomTapCore", "RoomTapIngest", "RoomTapRTP", "RoomTapSinks", "RoomTapControl", "RoomTapALSA",
                "RoomTapWebSocket", "RoomTapAgent",
            ],
            swiftSettings: strict),
        // The command-line tool.
        .executableTarget(name: "roomtap", dependencies: ["RoomTap"], swiftSettings: strict),

        // Sample program: the Sora documentation's "record every stream to WAV", with this library.
        .executableTarget(
            name: "record-everyone", dependencies: ["RoomTap"], path: "Samples/RecordEveryone",
            swiftSettings: strict),
        // Benchmarks (make bench) and fuzz entry points (make fuzz).
        .executableTarget(
            name: "roomtap-bench", dependencies: ["RoomTap", "RoomTapTestSupport", "COpus", "COgg"],
            path: "Benchmarks/roomtap-bench", swiftSettings: strict),
        // The yardstick of `make bench`: the smallest one-thread program for the offline job.
        .executableTarget(
            name: "roomtap-minimal", dependencies: ["COpus", "COgg"], path: "Benchmarks/roomtap-minimal",
            swiftSettings: strict),
        .executableTarget(
            name: "roomtap-fuzz", dependencies: ["RoomTap"], path: "Fuzz/roomtap-fuzz",
            swiftSettings: strict + [.unsafeFlags(["-parse-as-library"])]),

        // Test support: fakes and builders shared by the tests (Ogg Opus writer, sine source,
        // collecting sink, RTP senders, CLI runner, ALSA file-plugin config, WebSocket and fake
        // Realtime servers).
        .target(
            name: "RoomTapTestSupport", dependencies: ["RoomTap", "COpus", "COgg", "CWslay", "CALSA"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapCoreTests", dependencies: ["RoomTapCore", "RoomTapTestSupport"], swiftSettings: strict),
        // Counts heap allocations per thread (interposes malloc); linked into the test binary only.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        .testTarget(
            name: "RealTimePathTests", dependencies: ["RoomTap", "RoomTapTestSupport", "CAllocationCounter", "COpus"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapIngestTests", dependencies: ["RoomTapIngest", "RoomTapTestSupport", "COpus"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapRTPTests", dependencies: ["RoomTapRTP", "RoomTapTestSupport", "COpus"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "RoomTapSinksTests", dependencies: ["RoomTapSinks", "RoomTapTestSupport"], swiftSettings: strict),
        .testTarget(name: "RoomTapCLITests", dependencies: ["RoomTapTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "RoomTapControlTests", dependencies: ["RoomTapControl", "RoomTapTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "RoomTapALSATests", dependencies: ["RoomTapALSA", "RoomTapTestSupport", "CALSA"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapWebSocketTests", dependencies: ["RoomTapWebSocket", "RoomTapTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RoomTapAgentTests", dependencies: ["RoomTapAgent", "RoomTapTestSupport"], swiftSettings: strict),
    ]
)
