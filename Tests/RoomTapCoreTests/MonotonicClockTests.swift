import Dispatch
import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The one monotonic clock (`CLOCK_MONOTONIC`, the room clock's and the packets' timeline), its
/// instants' saturating arithmetic, and the virtual clock's waits (semaphore accounting included).
@Suite struct MonotonicClockTests {
    @Test func nowIsClockMonotonicAndTheRoomClockReadsIt() {
        var before = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        let now = MonotonicClock.now
        let room = RealTimeClock.monotonicNow()
        var after = timespec()
        clock_gettime(CLOCK_MONOTONIC, &after)
        let low = UInt64(before.tv_sec) * 1_000_000_000 + UInt64(before.tv_nsec)
        let high = UInt64(after.tv_sec) * 1_000_000_000 + UInt64(after.tv_nsec)
        #expect((low...high).contains(now.nanoseconds))
        #expect((now.nanoseconds...high).contains(room))
    }

    @Test func instantArithmeticSaturatesAndGoesBeforeTheOrigin() {
        let origin = MonotonicClock.Instant(nanoseconds: 5_000_000_000)
        let early = origin - .seconds(3600)
        #expect(early < origin && early.nanoseconds == 0 && early.signedNanoseconds == -3_595_000_000_000)
        #expect(origin - early == .seconds(3600))
        #expect(early + .seconds(3600) == origin)
        let far = origin + .seconds(Int64.max)
        #expect(far.signedNanoseconds == .max)
        #expect((early - .seconds(Int64.max)).signedNanoseconds == .min)
        #expect(origin.duration(to: origin + .milliseconds(1)) == .milliseconds(1))
        #expect(MonotonicClock.Instant(nanoseconds: .max).signedNanoseconds == .max)
    }

    @Test func pollMillisecondsRoundUpAndCap() {
        #expect(Duration.pollMilliseconds(nil) == -1)
        #expect(Duration.pollMilliseconds(.zero) == 0)
        #expect(Duration.pollMilliseconds(.nanoseconds(-5)) == 0)
        #expect(Duration.pollMilliseconds(.nanoseconds(1)) == 1)
        #expect(Duration.pollMilliseconds(.milliseconds(7)) == 7)
        #expect(Duration.pollMilliseconds(.seconds(5), cap: 1000) == 1000)
    }

    @Test func virtualWaitsEndAtTheDeadlineOrTheSignalAndKeepTheSemaphoresCount() {
        let clock = VirtualDeadlineClock()
        let semaphore = DispatchSemaphore(value: 0)
        let deadline = clock.now + .seconds(60)
        let woke = Locked<[Bool]>([])
        let waiter = RoomThread.start("test.virtual") {
            let signalled = clock.wait(semaphore, until: deadline)
            woke.withLock { $0.append(signalled) }
        }
        #expect(waitUntil { clock.nextDeadline == deadline })
        clock.advance(by: .seconds(59))
        #expect(clock.waiters == 1 && woke.withLock { $0.isEmpty }, "not before the deadline")
        clock.advance(by: .seconds(1))
        waiter.join()
        #expect(woke.withLock { $0 } == [false], "the deadline, not a signal")
        #expect(clock.waiters == 0 && clock.elapsed == .seconds(60))

        // A signal wakes a waiter at once; a deadline already passed takes a pending signal.
        let signaller = RoomThread.start("test.signal") {
            _ = waitUntil { clock.waiters == 1 }
            semaphore.signal()
        }
        #expect(clock.wait(semaphore, until: clock.now + .seconds(1)))
        signaller.join()
        semaphore.signal()
        #expect(clock.wait(semaphore, until: clock.now))
        #expect(!clock.wait(semaphore, until: clock.now))
    }
}
