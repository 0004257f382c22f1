import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Captures the agent's log lines.
final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.snapshot(\.self) }
    var sink: @Sendable (String) -> Void { { [self] line in lines.withLock { $0.append(line) } } }
}

/// A live room (real-time clock, or `roomClock`) with human tracks, the agent's voice track (collected), a
/// mix-minus the agent hears, speaker activity on each human, and a fake Realtime server.
final class AgentTestRig {
    static let key = "sk-test-SECRET-0123456789"
    let server: FakeRealtimeServer
    let room: Room
    let agent: RealtimeAgent
    let voiceSink = CollectingSink(reserveFrames: 2_000)
    let humans: [AudioTrack]
    let voiceTrack: AudioTrack
    let log = LogCapture()

    /// Connects the agent first (so its session audio starts at room sample 0), then starts the room.
    init(
        port: UInt16, humans: [(String, any FrameSource)], server: FakeRealtimeServer? = nil,
        configure: (inout RealtimeAgentConfiguration) -> Void = { _ in }, startRoomAfterConnect: Bool = true,
        roomClock: any RoomClock = RealTimeClock()
    ) throws {
        let fake = try server ?? FakeRealtimeServer(port: port, expectedKey: Self.key)
        self.server = fake
        var configuration = RealtimeAgentConfiguration(
            apiKey: Self.key, url: fake.url, reconnectDelay: { _ in 0.05 }, minimumConnectionInterval: .milliseconds(50)
        )
        configuration.log = log.sink
        configure(&configuration)
        agent = try RealtimeAgent(configuration: configuration)
        let room = Room(clock: roomClock, endsWhenSourcesFinish: false)
        self.room = room
        self.humans = humans.map { room.addTrack(name: $0.0, source: $0.1) }
        voiceTrack = agent.attach(to: room, hearing: self.humans).voice
        voiceTrack.addSink(voiceSink)
        agent.start()
        if startRoomAfterConnect {
            _ = self.server.wait { $0.events(ofType: "session.update").count >= 1 }
            _ = wait { self.agent.statistics.state == .connected }
        }
        room.start()
    }

    /// Stops the agent, the room and the server.
    func finish() {
        agent.stop()
        room.stop()
        room.waitUntilFinished()
        server.stop()
    }

    /// Waits until `condition` holds; false on timeout (generous: a loaded machine).
    func wait(timeout: Double = 30, _ condition: () -> Bool) -> Bool { Self.waitFor(timeout: timeout, condition) }

    /// Waits until `condition` holds; false on timeout (generous: a loaded machine).
    static func waitFor(timeout: Double = 30, _ condition: () -> Bool) -> Bool {
        waitUntil(timeout: .milliseconds(Int(timeout * 1000)), condition)
    }

    /// The voice track's samples (48 kHz).
    var voice: [Int16] { voiceSink.samples }
}

/// 24 kHz sine samples.
func sine24(frequency: Double, count: Int, amplitude: Double = 12_000) -> [Int16] {
    (0..<count).map { Int16((amplitude * sin(2 * Double.pi * frequency * Double($0) / 24_000)).rounded()) }
}

/// Amplitude of `frequency` in `signal` at `rate` (one DFT bin), in sample units.
func toneAmplitude(_ frequency: Double, in signal: ArraySlice<Int16>, rate: Double) -> Double {
    var re = 0.0
    var im = 0.0
    for (k, v) in signal.enumerated() {
        let a = 2 * Double.pi * frequency * Double(k) / rate
        re += Double(v) * cos(a)
        im += Double(v) * sin(a)
    }
    return 2 * sqrt(re * re + im * im) / Double(max(1, signal.count))
}

/// Root mean square of `signal`.
func rms(_ signal: ArraySlice<Int16>) -> Double {
    sqrt(signal.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, signal.count)))
}
