import RoomTapSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Converts a `CLOCK_MONOTONIC` instant (nanoseconds) into a room-timeline position (samples per
/// channel at 48 kHz; negative before room sample 0). What a live source needs to place the first
/// packet of a stream (see the jitter buffer in RoomTapRTP). Must be callable from any thread.
public typealias RoomTimeMapping = @Sendable (_ monotonicNanoseconds: UInt64) -> Int64

/// The live room clock: one tick every 10 ms of wall-clock time, on absolute deadlines.
///
/// Frame `n` is due at `startInstant + n × 10 ms` (`CLOCK_MONOTONIC`); the clock sleeps with
/// `clock_nanosleep(TIMER_ABSTIME)` until that deadline, so sleeps never accumulate error and the
/// room does not drift against the monotonic clock over hours. A tick that starts more than
/// ``lateTolerance`` after its deadline is counted in ``lateTicks`` (and ``maxLatenessNanoseconds``);
/// it is never skipped: the room renders every frame and catches up by not sleeping until it is
/// back on schedule.
///
/// The origin (``startInstant``, the monotonic time of frame 0) is fixed once, by whichever comes
/// first: the `startInstant` given to `init`, the first ``roomSample(atMonotonic:)`` call (a packet
/// that arrived before the room started), or the start of ``run(_:)``.
///
/// Thread: `run` on the room clock's thread, once. Everything else is safe from any thread and
/// never blocks.
public final class RealTimeClock: RoomClock {
    /// Ticks starting later than this after their deadline count as late (5 ms).
    public let lateTolerance: UInt64

    private let origin = Atomic<UInt64>(0)  // 0 = not fixed yet
    private let lateCounter = Atomic<Int>(0)
    private let maxLateness = Atomic<UInt64>(0)
    private let ticks = Atomic<Int64>(0)

    /// Creates a clock. `startInstant` (monotonic ns, > 0) fixes frame 0's time; nil fixes it at
    /// first use. `lateToleranceNanoseconds` is how late a tick may start before it counts as late.
    public init(startInstant: UInt64? = nil, lateToleranceNanoseconds: UInt64 = 5_000_000) {
        precondition(startInstant != 0, "the start instant is a CLOCK_MONOTONIC time > 0")
        lateTolerance = lateToleranceNanoseconds
        if let startInstant { origin.store(startInstant, ordering: .releasing) }
    }

    public var isRealTime: Bool { true }

    /// Now, on `CLOCK_MONOTONIC`, in nanoseconds: ``MonotonicClock/now`` (the one monotonic clock)
    /// as the room counts it. One `clock_gettime`: the clock's thread reads it every tick (it
    /// never blocks, allocates or logs). Any thread.
    public static func monotonicNow() -> UInt64 { MonotonicClock.now.nanoseconds }

    /// Monotonic nanoseconds of frame 0 (fixing it now if nothing has yet). Idempotent.
    public var startInstant: UInt64 {
        let current = origin.load(ordering: .acquiring)
        if current != 0 { return current }
        let now = Self.monotonicNow()
        let (exchanged, original) = origin.compareExchange(
            expected: 0, desired: now, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        return exchanged ? now : original
    }

    /// The room sample (48 kHz, floor) at monotonic instant `nanoseconds`; negative before frame 0.
    public func roomSample(atMonotonic nanoseconds: UInt64) -> Int64 {
        let start = startInstant
        if nanoseconds >= start {
            let d = nanoseconds - start
            return Int64(d / 1_000_000_000) * 48_000 + Int64((d % 1_000_000_000) * 48_000 / 1_000_000_000)
        }
        let d = start - nanoseconds
        let whole = Int64(d / 1_000_000_000) * 48_000
        let part = (d % 1_000_000_000) * 48_000
        return -(whole + Int64((part + 999_999_999) / 1_000_000_000))
    }

    /// ``roomSample(atMonotonic:)`` as a closure, for a jitter buffer.
    public var roomTimeMapping: RoomTimeMapping { { [self] in roomSample(atMonotonic: $0) } }

    /// Ticks that started more than ``lateTolerance`` after their deadline.
    public var lateTicks: Int { lateCounter.load(ordering: .relaxed) }
    /// The largest lateness of any tick so far, in nanoseconds.
    public var maxLatenessNanoseconds: UInt64 { maxLateness.load(ordering: .relaxed) }
    /// Ticks run so far.
    public var tickCount: Int64 { ticks.load(ordering: .relaxed) }

    /// Ticks frame 0, 1, 2, … each no earlier than its deadline, until `tick` returns false.
    ///
    /// An origin fixed before `run` began (by `init`, so that frame 0 is when a recording says it
    /// started, however long the room took to set up) makes the ticks already due run at once; they
    /// catch up on the set-up and are not counted late.
    public func run(_ tick: (Int64) -> Bool) {
        let start = startInstant
        let began = Self.monotonicNow()
        var index: Int64 = 0
        while true {
            let deadline = start + UInt64(index) * AudioFrame.durationNanoseconds
            Self.sleep(until: deadline)
            let now = Self.monotonicNow()
            if now > deadline, deadline >= began {
                let lateness = now - deadline
                if lateness > maxLateness.load(ordering: .relaxed) { maxLateness.store(lateness, ordering: .relaxed) }
                if lateness > lateTolerance { lateCounter.add(1, ordering: .relaxed) }
            }
            ticks.store(index + 1, ordering: .relaxed)
            guard tick(index) else { return }
            index += 1
        }
    }

    /// Sleeps until monotonic `deadline` (absolute; returns at once if it has passed).
    private static func sleep(until deadline: UInt64) {
        #if os(Linux)
            var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        #else
            while true {
                let now = monotonicNow()
                guard now < deadline else { return }
                let d = deadline - now
                var ts = timespec(tv_sec: Int(d / 1_000_000_000), tv_nsec: Int(d % 1_000_000_000))
                nanosleep(&ts, nil)
            }
        #endif
    }
}
