public import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one monotonic clock of roomtap's own code: `CLOCK_MONOTONIC`, in nanoseconds.
///
/// Every product read of monotonic time goes through ``now``: the room clock's ticks, packet
/// arrivals, deadlines, timeouts, intervals and tickers. It is the clock of the kernel's
/// timestamps mapped by CLinuxNet, of `clock_nanosleep(CLOCK_MONOTONIC)` and of condition
/// variables set to `CLOCK_MONOTONIC` (``Latch``), so instants from any of them compare.
/// (`ContinuousClock` is not it on Linux: Swift reads `CLOCK_BOOTTIME` there, which also counts
/// suspended time; neither is `Date`, which steps with the wall clock.)
///
/// A Dispatch wait needs a `DispatchTime`: convert at that call with ``Instant/dispatchTime``.
///
/// Thread: any. ``now`` is one `clock_gettime` call: it never blocks, allocates or logs, so the
/// room clock's thread may read it every 10 ms.
public enum MonotonicClock {
    /// A moment on `CLOCK_MONOTONIC`: nanoseconds since an unspecified origin (the boot, on Linux).
    /// Arithmetic with `Duration` saturates; instants before the origin (an instant minus a long
    /// duration) are representable and compare as earlier.
    ///
    /// Thread: a value; any.
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// Nanoseconds since the clock's origin (negative only for an instant computed before it).
        public let signedNanoseconds: Int64

        /// The instant `nanoseconds` after the clock's origin (a `CLOCK_MONOTONIC` reading in ns,
        /// such as a packet's arrival).
        public init(nanoseconds: UInt64) { signedNanoseconds = Int64(clamping: nanoseconds) }

        /// The instant `signedNanoseconds` after the clock's origin.
        public init(signedNanoseconds: Int64) { self.signedNanoseconds = signedNanoseconds }

        /// Nanoseconds since the clock's origin, as the wire and the room clock count them (0 for
        /// an instant before the origin).
        public var nanoseconds: UInt64 { UInt64(clamping: signedNanoseconds) }

        public func advanced(by duration: Duration) -> Instant {
            let (sum, overflow) = signedNanoseconds.addingReportingOverflow(duration.saturatingNanoseconds)
            if overflow { return Instant(signedNanoseconds: duration < .zero ? .min : .max) }
            return Instant(signedNanoseconds: sum)
        }

        public func duration(to other: Instant) -> Duration {
            let (difference, overflow) = other.signedNanoseconds.subtractingReportingOverflow(signedNanoseconds)
            if overflow { return .nanoseconds(other.signedNanoseconds < signedNanoseconds ? Int64.min : Int64.max) }
            return .nanoseconds(difference)
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.signedNanoseconds < rhs.signedNanoseconds }

        /// The time from `rhs` to `lhs` (negative when `lhs` is earlier).
        public static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }

        /// `duration` after `lhs` (saturating).
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }

        /// `duration` before `lhs` (saturating).
        public static func - (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: .zero - rhs) }

        /// Moves `lhs` `rhs` later (saturating).
        public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }

        /// Moves `lhs` `rhs` earlier (saturating).
        public static func -= (lhs: inout Instant, rhs: Duration) { lhs = lhs - rhs }

        /// The `DispatchTime` of this instant, for a Dispatch wait (a semaphore's timeout): now on
        /// Dispatch's clock plus the time left until this instant (none when it has passed).
        /// Reads both clocks; for the control side, not the room clock's thread.
        public var dispatchTime: DispatchTime {
            let left = signedNanoseconds &- MonotonicClock.now.signedNanoseconds
            return left <= 0 ? .now() : .now() + .nanoseconds(Int(clamping: left))
        }

        /// Seconds from now until this instant (negative once it has passed): `Date`'s
        /// `timeIntervalSinceNow` on the monotonic clock. Reads the clock.
        package var secondsFromNow: Double { (self - MonotonicClock.now) / .seconds(1) }

        /// ``MonotonicClock/now`` (so `.now` reads where an instant is expected).
        public static var now: Instant { MonotonicClock.now }

        public var description: String { "\(signedNanoseconds) ns (monotonic)" }
    }

    /// Now. One `clock_gettime(CLOCK_MONOTONIC)`: never blocks, allocates or logs.
    public static var now: Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(signedNanoseconds: Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec))
    }
}

extension Duration {
    /// This duration in whole nanoseconds (toward zero), saturating at `Int64`'s bounds. Pure.
    package var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, carry) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if carry { return seconds < 0 ? .min : .max }
        return sum
    }
}
