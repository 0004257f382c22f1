import RoomTapSora
import Testing

/// Sora's microsecond timestamps as 48 kHz RTP timestamps: a jittering clock plays seamlessly, a
/// lost packet leaves its duration, a pause and a new request are placed at their own times, a
/// late packet leaves the chain alone.
@Suite("Sora timestamps as RTP timestamps")
struct SoraTimestampMappingTests {
    static let t0: UInt64 = 1_700_000_000_000_000

    static func frame(_ micros: UInt64, _ sequence: UInt64) -> SoraStreamingFrame {
        SoraStreamingFrame(timestamp: micros, sequence: sequence, payloadRange: 20..<23)
    }

    @Test func timestampsThatJitterWithinTenMillisecondsPlayEndToEnd() {
        var mapping = SoraTimestampMapping()
        let first = mapping.rtpTimestamp(of: Self.frame(Self.t0, 5), duration: 960)
        #expect(first.placed && first.0 == UInt32(truncatingIfNeeded: SoraTimestampMapping.samples(of: Self.t0)))
        var generator = SplitMix(seed: 7)
        for i in 1..<500 {
            let jitter = Int64(generator.next() % 19_000) - 9_000  // ±9 ms
            let micros = UInt64(Int64(Self.t0) + Int64(i) * 20_000 + jitter)
            let result = mapping.rtpTimestamp(of: Self.frame(micros, 5 + UInt64(i)), duration: 960)
            #expect(!result.placed && result.0 == first.0 &+ UInt32(i * 960), "packet \(i)")
        }
    }

    @Test func aLostPacketLeavesItsDurationAndAPauseIsPlacedAtItsTime() {
        var mapping = SoraTimestampMapping()
        let base = mapping.rtpTimestamp(of: Self.frame(Self.t0, 100), duration: 960).0
        // 101 and 102 lost: 103 lands three packets on, though its timestamp is 4 ms off.
        let afterLoss = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 64_000, 103), duration: 960)
        #expect(!afterLoss.placed && afterLoss.0 == base &+ 3 * 960)
        // A 2 s pause, sequence numbers going on: its own time.
        let resumed = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 2_080_000, 104), duration: 960)
        #expect(resumed.placed && resumed.0 == base &+ 99_840)
        // And the chain goes on from there.
        let next = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 2_100_500, 105), duration: 960)
        #expect(!next.placed && next.0 == resumed.0 &+ 960)
    }

    @Test func aLateOrRepeatedPacketLeavesTheChainAlone() {
        var mapping = SoraTimestampMapping()
        let base = mapping.rtpTimestamp(of: Self.frame(Self.t0, 10), duration: 960).0
        _ = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 40_000, 12), duration: 960)
        let late = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 20_000, 11), duration: 960)
        #expect(late.placed && late.0 == base &+ 960, "a late packet at its own time")
        let next = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 60_000, 13), duration: 960)
        #expect(!next.placed && next.0 == base &+ 3 * 960, "the chain continues from 12, not 11")
    }

    @Test func durationsOtherThanTwentyMillisecondsAndANewRequest() {
        var mapping = SoraTimestampMapping()
        let base = mapping.rtpTimestamp(of: Self.frame(Self.t0, 0), duration: 2_880).0  // 60 ms
        let next = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 61_000, 1), duration: 2_880)
        #expect(!next.placed && next.0 == base &+ 2_880)
        mapping.reset()
        let again = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 121_000, 2), duration: 2_880)
        #expect(
            again.placed && again.0 == UInt32(truncatingIfNeeded: SoraTimestampMapping.samples(of: Self.t0 + 121_000)))
        // A sequence jump beyond 1000 is no continuation, whatever its time.
        let jump = mapping.rtpTimestamp(of: Self.frame(Self.t0 + 181_000, 5_000), duration: 2_880)
        #expect(jump.placed)
    }
}
