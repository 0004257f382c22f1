import RoomTapRTP
import Testing

/// Sender reports that arrive before their stream's first packet (ffmpeg sends its first SR just
/// before its first RTP packet) are held by the room's `SenderClockSync` until that packet, and only
/// so many: a flood of reports for SSRCs that never send cannot grow memory.
@Suite("Sender clock sync: reports before the first packet")
struct SenderClockSyncEarlyReportTests {
    static func report(_ n: UInt64) -> SenderClockSync.EarlyReport {
        .init(
            ntp: NTPTimestamp(rawValue: 0xE000_0000_0000_0000 + n << 32),
            rtpTimestamp: UInt32(truncatingIfNeeded: n * 960))
    }

    @Test func aHeldReportIsTakenOnceByItsStream() {
        let sync = SenderClockSync()
        #expect(sync.takeEarlyReport(port: 5004, ssrc: 7) == nil, "nothing held yet")
        #expect(sync.holdEarlyReport(port: 5004, ssrc: 7, Self.report(1)))
        #expect(sync.takeEarlyReport(port: 5006, ssrc: 7) == nil, "another port's stream")
        #expect(sync.takeEarlyReport(port: 5004, ssrc: 8) == nil, "another SSRC")
        #expect(sync.holdEarlyReport(port: 5004, ssrc: 7, Self.report(2)), "a newer report replaces the older")
        #expect(sync.takeEarlyReport(port: 5004, ssrc: 7) == Self.report(2))
        #expect(sync.takeEarlyReport(port: 5004, ssrc: 7) == nil, "taken once")
    }

    @Test func aFloodOfReportsHoldsAtMostTheBound() {
        let sync = SenderClockSync()
        let bound = SenderClockSync.maxEarlyReports
        #expect(bound == 64)
        for ssrc in 0..<UInt32(10_000) {
            _ = sync.holdEarlyReport(port: 5004, ssrc: ssrc, Self.report(UInt64(ssrc)))
        }
        let held = (0..<UInt32(10_000)).filter { sync.takeEarlyReport(port: 5004, ssrc: $0) != nil }
        #expect(held == Array(0..<UInt32(bound)), "the first \(bound) are held, the rest dropped")
        // Full: a held stream's newer report still replaces its own; a new stream's is refused.
        for ssrc in 0..<UInt32(bound) { sync.holdEarlyReport(port: 5004, ssrc: ssrc, Self.report(1)) }
        #expect(sync.holdEarlyReport(port: 5004, ssrc: 3, Self.report(9)))
        #expect(!sync.holdEarlyReport(port: 5004, ssrc: 999, Self.report(9)))
        #expect(sync.takeEarlyReport(port: 5004, ssrc: 3) == Self.report(9))
        #expect(sync.holdEarlyReport(port: 5004, ssrc: 999, Self.report(9)), "taking one makes room")
    }
}
