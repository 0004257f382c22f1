import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapSync

/// The agent path under measurement (`make bench`): a live room (real-time clock) whose one track
/// is a 10 ms tone burst every 100 ms, an agent hearing it and streaming to a local WebSocket
/// server. For every burst, latency = when the `input_audio_buffer.append` carrying it was read
/// by the server − when the room clock's tick rendered the burst's frame. It includes the
/// chunking (`--agent-chunk-ms`, default 40 ms: a burst waits for its chunk to fill), the 48→24 kHz
/// resampler, base64/JSON, WebSocket framing and loopback TCP. CPU: the process's CPU time with the
/// agent minus the same room without it, per second of room audio.
enum AgentPath {
    struct Outcome {
        var bursts: Int
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var maxMilliseconds: Double
        var chunkMilliseconds: Int
        var cpuMillisecondsPerRoomSecond: Double
        var seconds: Double
    }

    /// A tone burst in the first frame of every 10 (every 100 ms), silence otherwise.
    final class BurstSource: FrameSource, @unchecked Sendable {
        let channels = 1
        var isFinished: Bool { false }
        static let period: Int64 = 10
        func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
            guard (roomSample / 480) % Self.period == 0 else {
                samples.update(repeating: 0)
                return .silence
            }
            for i in 0..<480 { samples[i] = Int16(20_000 * sin(2 * Double.pi * 1_000 * Double(i) / 48_000)) }
            return .normal
        }
    }

    private struct Arrival {
        let time: UInt64
        let samples: [Int16]
    }

    /// `chunkMilliseconds`: audio per append (nil: the agent's default).
    static func run(seconds: Double, port: UInt16, chunkMilliseconds: Int? = nil) throws -> Outcome {
        let chunk = chunkMilliseconds ?? RealtimeAgentConfiguration(apiKey: "bench").chunkMilliseconds
        let baseline = cpuSeconds { _ = try? room(seconds: seconds, port: nil, chunk: chunk) }
        var arrivals: [Arrival] = []
        var start: UInt64 = 0
        let withAgent = cpuSeconds {
            if let r = try? room(seconds: seconds, port: port, chunk: chunk) { (arrivals, start) = r }
        }
        // Each burst: the first loud sample after quiet, in the 24 kHz stream, with its chunk's time.
        var latencies: [Double] = []
        var quiet = 0
        for arrival in arrivals {
            for s in arrival.samples {
                if abs(Int(s)) > 4_000 && quiet > 200 {
                    // The burst's tick: the latest one (every 100 ms) due before the chunk arrived.
                    let age = Double(arrival.time - start) / 1e9
                    let tick = (age / 0.1).rounded(.down) * 0.1
                    latencies.append((age - tick) * 1_000)
                }
                quiet = abs(Int(s)) > 4_000 ? 0 : quiet + 1
            }
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Outcome(
            bursts: latencies.count, p50Milliseconds: percentile(0.5), p99Milliseconds: percentile(0.99),
            maxMilliseconds: latencies.last ?? .nan, chunkMilliseconds: chunk,
            cpuMillisecondsPerRoomSecond: (withAgent - baseline) / seconds * 1_000, seconds: seconds)
    }

    /// Runs the burst room for `seconds`; with a `port`, an agent streams it to a local server there.
    private static func room(seconds: Double, port: UInt16?, chunk: Int) throws -> ([Arrival], UInt64) {
        let arrivals = Locked<[Arrival]>([])
        let server = try port.map { port in
            try WebSocketTestServer(
                port: port,
                onMessage: { _, message in
                    let now = RealTimeClock.monotonicNow()
                    guard case .text(let text) = message, text.contains("input_audio_buffer.append"),
                        let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                        let audio = (object["audio"] as? String).flatMap({ Data(base64Encoded: $0) })
                    else { return }
                    let samples = audio.withUnsafeBytes { raw in
                        (0..<(raw.count / 2)).map {
                            Int16(bitPattern: UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8)
                        }
                    }
                    arrivals.withLock { $0.append(Arrival(time: now, samples: samples)) }
                })
        }
        defer { server?.stop() }
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false)
        let track = room.addTrack(name: "bursts", source: BurstSource())
        var agent: RealtimeAgent?
        if let server {
            let configuration = RealtimeAgentConfiguration(
                apiKey: "bench", url: server.url, chunkMilliseconds: chunk, transcript: nil, log: { _ in })
            let a = try RealtimeAgent(configuration: configuration)
            a.attach(to: room, hearing: [track])
            agent = a
        }
        room.start()
        agent?.start()
        usleep(UInt32(seconds * 1e6))
        room.stop()
        agent?.stop()
        room.waitUntilFinished()
        return (arrivals.withLock { $0 }, clock.startInstant)
    }

    private static func cpuSeconds(_ body: () -> Void) -> Double {
        func now() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        let before = now()
        body()
        return now() - before
    }

    static func line(_ o: Outcome) -> String {
        String(
            format:
                "agent path (%.0f s live room, %d-ms chunks, %d bursts): clock → socket p50 %.1f ms, p99 %.1f ms, "
                + "max %.1f ms; CPU %.2f ms per second of room audio (agent minus the same room without it)",
            o.seconds, o.chunkMilliseconds, o.bursts, o.p50Milliseconds, o.p99Milliseconds, o.maxMilliseconds,
            o.cpuMillisecondsPerRoomSecond)
    }
}
