import Foundation
import RoomTapCore
import Synchronization
import Testing

/// The live room clock: absolute 10 ms deadlines, late ticks counted, never skipped.
@Suite("Real-time room clock", .serialized)
struct ClockTests {
    /// Runs `ticks` ticks, recording when each started; `body` runs inside tick `n`.
    static func run(ticks: Int, body: (Int64) -> Void = { _ in }) -> (RealTimeClock, [UInt64]) {
        let clock = RealTimeClock()
        var starts: [UInt64] = []
        starts.reserveCapacity(ticks)
        clock.run { index in
            starts.append(RealTimeClock.monotonicNow())
            body(index)
            return index + 1 < Int64(ticks)
        }
        return (clock, starts)
    }

    @Test func twoSecondsTickTwoHundredTimesOnAbsoluteDeadlinesWithoutDrift() {
        let (clock, starts) = Self.run(ticks: 200)
        #expect(clock.isRealTime)
        #expect(starts.count == 200 && clock.tickCount == 200)
        let origin = clock.startInstant
        for (n, t) in starts.enumerated() {
            #expect(t >= origin + UInt64(n) * 10_000_000, "tick \(n) ran before its deadline")
        }
        // No drift: the 200th tick starts within a few ms of start + 1.99 s. Accumulated sleeps
        // would put every late tick behind; a scheduling hiccup delays one.
        let lateness = starts.enumerated().map { Double($0.element - origin) / 1e6 - Double($0.offset) * 10 }
        #expect(lateness[199] >= 0 && lateness[199] < 20, "200th tick \(lateness[199]) ms after its deadline")
        let settled = lateness.suffix(20).min()!
        #expect(settled < 3, "the last 20 ticks are all at least \(settled) ms late")
        #expect(lateness.sorted()[100] < 5, "median lateness \(lateness.sorted()[100]) ms")
    }

    @Test func aSlowTickIsCountedLateAndTheClockCatchesUpWithoutSkipping() {
        let (clock, starts) = Self.run(ticks: 50) { index in
            if index == 10 { usleep(30_000) }
        }
        #expect(starts.count == 50, "no tick skipped")
        #expect(clock.lateTicks >= 1 && clock.lateTicks <= 3, "late ticks \(clock.lateTicks)")
        #expect(clock.maxLatenessNanoseconds >= 15_000_000)
        // Back on schedule after catching up.
        let origin = clock.startInstant
        let lastLateness = Double(starts[49] - origin) / 1e6 - 490
        #expect(lastLateness >= 0 && lastLateness < 15)
    }

    @Test func monotonicTimeMapsToRoomSamples() {
        let clock = RealTimeClock(startInstant: 5_000_000_000)
        #expect(clock.roomSample(atMonotonic: 5_000_000_000) == 0)
        #expect(clock.roomSample(atMonotonic: 5_010_000_000) == 480)
        #expect(clock.roomSample(atMonotonic: 6_000_000_000) == 48_000)
        #expect(clock.roomSample(atMonotonic: 3_600_000_000_000 + 5_000_000_000) == 172_800_000)
        #expect(clock.roomSample(atMonotonic: 4_990_000_000) == -480)
        #expect(clock.roomSample(atMonotonic: 4_999_999_999) == -1)
        let mapping = clock.roomTimeMapping
        #expect(mapping(5_000_020_834) == 1)
    }

    @Test func theOriginIsFixedByTheFirstUse() {
        let clock = RealTimeClock()
        let before = RealTimeClock.monotonicNow()
        let first = clock.roomSample(atMonotonic: before + 1_000_000_000)
        #expect(first <= 48_000 && first > 47_000)
        let origin = clock.startInstant
        #expect(origin >= before)
        #expect(clock.startInstant == origin)
    }
}
