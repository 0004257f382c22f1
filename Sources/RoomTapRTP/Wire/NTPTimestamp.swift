/// A 64-bit NTP timestamp as RTCP sender reports carry it: seconds since 1900-01-01 00:00 UTC in
/// the upper 32 bits, the fraction of a second in units of 2^-32 s in the lower 32 bits (RFC 3550
/// §4, https://www.rfc-editor.org/rfc/rfc3550#section-4; RFC 5905 §6).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   seconds since 1900 (era 0)                  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 fraction of a second (2^-32 s)                |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Era 0 ends in February 2036; conversions here use era 0 only (times before 1900 and from 2036
/// on are clamped). A sender that has no wall clock may send any value (RFC 3550 §6.4.1 says it
/// may use elapsed time); compare differences of one sender's timestamps, not absolute values,
/// when mapping RTP time to the room. Thread: a value type.
public struct NTPTimestamp: Sendable, Hashable, Comparable {
    /// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    /// The 64 bits as on the wire.
    public var rawValue: UInt64

    /// A timestamp from its 64 bits.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A timestamp from the two 32-bit words of an SR.
    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The whole seconds since 1900 (most significant word).
    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    /// The fraction of a second in 2^-32 s (least significant word).
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }
    /// The middle 32 bits (16.16 fixed point seconds): the "last SR" (LSR) field of a report block
    /// (RFC 3550 §6.4.1).
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// Seconds since 1900-01-01 00:00 UTC (resolution about 0.2 ns, limited by `Double` to about
    /// 0.5 µs near the present).
    public var secondsSince1900: Double {
        Double(seconds) + Double(fraction) / 4_294_967_296.0
    }

    /// Seconds since the Unix epoch (negative before 1970).
    public var secondsSince1970: Double {
        secondsSince1900 - Double(Self.unixEpochOffset)
    }

    /// The timestamp of `secondsSince1900`, clamped to era 0 (NaN gives 0).
    public init(secondsSince1900 value: Double) {
        guard value > 0 else {  // also NaN
            self.init(rawValue: 0)
            return
        }
        guard value < 4_294_967_296.0 else {
            self.init(rawValue: .max)
            return
        }
        let whole = value.rounded(.down)
        // The fraction rounds to the nearest 2^-32 s; 1.0 - ε can round up to 2^32, carry it.
        let fraction = ((value - whole) * 4_294_967_296.0).rounded()
        let raw = UInt64(whole) << 32 &+ UInt64(fraction)
        self.init(rawValue: raw < UInt64(whole) << 32 ? .max : raw)
    }

    /// The timestamp of `secondsSince1970` (Unix time), clamped to era 0.
    public init(secondsSince1970 value: Double) {
        self.init(secondsSince1900: value + Double(Self.unixEpochOffset))
    }

    /// `other - self` in seconds (negative when `other` is earlier), for timestamps less than 2^31 s
    /// (68 years) apart, also across the end of an era: the wall-clock time between two reports of
    /// one sender. Exact to `Double` precision (below a nanosecond for differences under a day).
    public func seconds(to other: NTPTimestamp) -> Double {
        let delta = Int64(bitPattern: other.rawValue &- rawValue)
        return Double(delta) / 4_294_967_296.0
    }

    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}
