import RoomTapCore
import RoomTapRTP
import Testing

/// RTCP sender reports align streams whose network paths differ: equal NTP instants of senders
/// sharing a wall clock land at equal room times.
@Suite("Opus jitter buffer: sender-report timing")
struct JitterSenderReportTests {
    static let packets = 600  // 12 s
    /// NTP seconds at fake monotonic 0 (the senders' shared wall clock).
    static let ntpBase = 3_900_000_000.0

    /// One sender: a loud marker packet each second at the same wall-clock instants as the other
    /// sender's (`offset` packets later start, so its markers sit `offset` indices earlier).
    static func sender(offset: Int, pathMilliseconds: Double, seed: UInt64, sequence: UInt16, timestamp: UInt32)
        -> (sent: [SentPacket], arrived: [Delivery])
    {
        let quiet = JitterDriftTests.packets
        let payloads = (0..<packets).map { ($0 + offset) % 50 == 49 ? quiet[49] : quiet[($0 + offset) % 49] }
        let s = simulateSender(
            payloads: payloads, firstSequence: sequence, firstTimestamp: timestamp,
            startNanos: 13_370_000 + UInt64(offset) * 20_000_000,
            impairment: Impairment(jitterMilliseconds: 2, baseDelayMilliseconds: pathMilliseconds, seed: seed))
        return (s.sent, s.arrived)
    }

    /// Renders sender A (5 ms path) and B (85 ms path, starting 200 ms later) into two buffers;
    /// with `reports`, each sends an SR a second. Returns both outputs and statistics.
    static func run(reports: Bool) -> [(output: [Int16], statistics: JitterStatistics)] {
        let clock = SenderClockSync()
        let a = sender(offset: 0, pathMilliseconds: 5, seed: 3, sequence: 100, timestamp: 4_294_000_000)
        let b = sender(offset: 10, pathMilliseconds: 85, seed: 4, sequence: 65_000, timestamp: 77)
        var harnesses: [JitterHarness] = []
        for (stream, path) in [(a, 5.0), (b, 85.0)] {
            let harness = JitterHarness(senderClock: reports ? clock : nil)
            for i in stride(from: 3, to: packets, by: 50) {
                let sent = stream.sent[i]
                harness.deliverReport(
                    arrivalNanos: sent.sendNanos + UInt64(path * 1_000_000),
                    ntp: NTPTimestamp(secondsSince1900: ntpBase + Double(sent.sendNanos) / 1e9), rtp: sent.timestamp)
            }
            harness.deliver(stream.arrived)
            harnesses.append(harness)
        }
        // Frame by frame, as one room clock renders both tracks.
        for _ in 0..<1300 {
            for harness in harnesses { harness.render(frames: 1) }
        }
        return harnesses.map { ($0.output, $0.buffer.statistics) }
    }

    /// Sample indices where a marker starts (loud after 100 ms of quiet).
    static func onsets(_ pcm: [Int16]) -> [Int] {
        var found: [Int] = []
        var lastLoud = -10_000
        for (i, x) in pcm.enumerated() where abs(Int(x)) > 8000 {
            if i - lastLoud > 4800 { found.append(i) }
            lastLoud = i
        }
        return found
    }

    @Test func sendersWithReportsAreAlignedWithinOneFrame() {
        let tracks = Self.run(reports: true)
        let a = Self.onsets(tracks[0].output)
        let b = Self.onsets(tracks[1].output)
        #expect(a.count >= 10 && b.count >= 10, "markers: \(a.count), \(b.count)")
        // After the shift has been applied (in quiet frames), the last markers coincide.
        for (x, y) in zip(a.suffix(4), b.suffix(4)) {
            #expect(abs(x - y) <= 480, "A at \(x), B at \(y): \(Double(y - x) / 48) ms apart")
        }
        let (sa, sb) = (tracks[0].statistics, tracks[1].statistics)
        #expect(sa.senderReportTimingUsed && sb.senderReportTimingUsed)
        #expect(sa.senderReportCorrectionMilliseconds == 0)
        #expect(abs(sb.senderReportCorrectionMilliseconds + 80) <= 3, "B: \(sb.senderReportCorrectionMilliseconds) ms")
        // They share one delay, enough for B's longer path; nothing was late for it.
        #expect(sa.delayMilliseconds == sb.delayMilliseconds && sb.delayMilliseconds >= 90)
        #expect(sa.late == 0 && sb.late == 0 && sa.lost == 0 && sb.lost == 0, "late \(sa.late), \(sb.late)")
        #expect(tracks.allSatisfy { $0.output.count == 1300 * 480 })
    }

    @Test func withoutReportsTheLongerPathPlaysLater() {
        let tracks = Self.run(reports: false)
        let a = Self.onsets(tracks[0].output)
        let b = Self.onsets(tracks[1].output)
        #expect(a.count >= 10 && b.count >= 10)
        for (x, y) in zip(a.suffix(4), b.suffix(4)) {
            #expect(abs(y - x - 80 * 48) <= 480, "A at \(x), B at \(y): \(Double(y - x) / 48) ms apart")
        }
        #expect(!tracks[0].statistics.senderReportTimingUsed && !tracks[1].statistics.senderReportTimingUsed)
        #expect(tracks[1].statistics.senderReportCorrectionMilliseconds == 0)
    }
}
