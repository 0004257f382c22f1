/// When each Sora packet is due on this machine: the audio-streaming room's mapping from Sora's
/// packet timestamps (microseconds since the Unix epoch, Sora's clock) to `CLOCK_MONOTONIC`.
///
/// The first packet of any connection fixes it: its timestamp is due at its arrival. Every packet
/// is then handed to its track's jitter buffer when it is due (``dueTime(of:shift:)``), not when
/// it arrived: Sora sends live, but a body may also come faster than real time (a client sending
/// a prepared body, a backlog after a stall), and the live room's jitter buffers take packets on
/// the wall clock. A request whose first timestamp lies more than ``maxSkewNanos`` from where the
/// room's mapping puts it (a sender with a clock of its own) is shifted to be due on arrival.
///
/// Thread: confined to the audio-streaming server's thread.
final class SoraStreamClock {
    /// How far a request's first packet may be due from its arrival before it is re-based (10 s).
    static let maxSkewNanos: Int64 = 10_000_000_000

    private var epochMicros: UInt64?
    private var epochNanos: UInt64 = 0

    /// Whether the first packet has fixed the mapping.
    var isFixed: Bool { epochMicros != nil }

    /// The shift (ns) a request whose first packet has `timestamp` and arrived at `now` needs: 0
    /// when it is within ``maxSkewNanos`` of the mapping (fixing the mapping on the room's first
    /// packet), else what makes it due at `now`.
    func shift(forFirst timestamp: UInt64, arrivedAt now: UInt64) -> Int64 {
        guard epochMicros != nil else {
            epochMicros = timestamp
            epochNanos = now
            return 0
        }
        let due = dueTime(of: timestamp, shift: 0)
        let skew = due - Int64(bitPattern: now)
        return abs(skew) > Self.maxSkewNanos ? -skew : 0
    }

    /// `CLOCK_MONOTONIC` ns at which the packet with `timestamp` is due (may be in the past, or
    /// negative for a timestamp far before the room's first), plus `shift`.
    func dueTime(of timestamp: UInt64, shift: Int64) -> Int64 {
        guard let epochMicros else { return 0 }
        let micros = Int64(bitPattern: timestamp &- epochMicros)
        let (nanos, overflow) = micros.multipliedReportingOverflow(by: 1_000)
        let base = Int64(bitPattern: epochNanos)
        guard !overflow else { return micros < 0 ? .min / 2 : .max / 2 }
        let (sum, o1) = base.addingReportingOverflow(nanos)
        guard !o1 else { return nanos < 0 ? .min / 2 : .max / 2 }
        let (shifted, o2) = sum.addingReportingOverflow(shift)
        return o2 ? (shift < 0 ? .min / 2 : .max / 2) : shifted
    }
}
