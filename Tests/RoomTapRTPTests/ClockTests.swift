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

    /// Milliseconds each tick started after its deadline (origin + n × 10 ms), as the test saw it
    /// (a little after the clock did).
    static func lateness(_ starts: [UInt64], origin: UInt64) -> [Double] {
        starts.enumerated().map { Double(Int64($0.element) - Int64(origin)) / 1e6 - Double($0.offset) * 10 }
    }

    /// True when some tick started less than 10 ms after the one before: the clock waited for an
    /// absolute deadline, not for 10 ms after the last tick (that would drift by every tick's
    /// lateness and never catch up).
    static func caughtUp(_ starts: ArraySlice<UInt64>) -> Bool {
        zip(starts, starts.dropFirst()).contains { $1 - $0 < 10_000_000 }
    }

    // These tests hold on a loaded machine: how late a tick starts is the scheduler's doing, and
    // the clock's promise is to count it (any tick more than `lateTolerance` late, reported in
    // room.json as lateTicks), never to run a tick early, never to skip one, and to keep its
    // absolute deadlines. So they assert that, not the machine's punctuality.

    @Test func twoSecondsTickTwoHundredTimesOnAbsoluteDeadlinesWithoutDrift() {
        let (clock, starts) = Self.run(ticks: 200)
        #expect(clock.isRealTime)
        #expect(starts.count == 200 && clock.tickCount == 200)
        let origin = clock.startInstant
        for (n, t) in starts.enumerated() {
            #expect(t >= origin + UInt64(n) * 10_000_000, "tick \(n) ran before its deadline")
        }
        let lateness = Self.lateness(starts, origin: origin)
        // The clock counts a tick late by its own reading, taken just before the test's.
        #expect(clock.lateTicks <= lateness.filter { $0 > 5 }.count, "late ticks \(clock.lateTicks)")
        #expect(Double(clock.maxLatenessNanoseconds) / 1e6 <= lateness.max()!)
        #expect(Self.caughtUp(starts[...]), "absolute deadlines: some wait was shorter than 10 ms")
    }

    @Test func aSlowTickIsCountedLateAndTheClockCatchesUpWithoutSkipping() {
        let (clock, starts) = Self.run(ticks: 50) { index in
            if index == 10 { usleep(30_000) }  // the slow tick itself, the point of the test
        }
        #expect(starts.count == 50, "no tick skipped")
        // Tick 11 starts at least 30 ms after tick 10's deadline, 20 ms after its own: late
        // whatever the machine does.
        #expect(clock.lateTicks >= 1, "late ticks \(clock.lateTicks)")
        #expect(clock.maxLatenessNanoseconds >= 15_000_000)
        let origin = clock.startInstant
        let lateness = Self.lateness(starts, origin: origin)
        #expect(clock.lateTicks <= lateness.filter { $0 > 5 }.count, "late ticks \(clock.lateTicks)")
        #expect(lateness.allSatisfy { $0 >= 0 }, "no tick before its deadline")
        // Catching up: after the slow tick, ticks follow each other sooner than every 10 ms.
        #expect(Self.caughtUp(starts[11...]), "the clock kept its deadlines and caught up")
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
