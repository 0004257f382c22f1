/// Extends 16-bit RTP sequence numbers to a monotonic 64-bit count, so wraparound at 65535 -> 0
/// is free for everything after it (RFC 3550 Appendix A.1,
/// https://www.rfc-editor.org/rfc/rfc3550#appendix-A.1, without the probation).
///
/// Each number is placed at the 64-bit value nearest to the highest one seen so far (a signed
/// 16-bit distance), so reordering across the wrap is handled. The first number seen maps to
/// `65_536 + seq`, so packets reordered before it stay positive.
///
/// Thread: confined to the producer (receive) thread. A value type; pure except for `highest`.
struct SequenceUnwrapper {
    /// The highest extended number seen, or nil before the first.
    private(set) var highest: Int64?

    /// The extended number `seq` would get, without recording it, and its signed distance from
    /// the highest so far (0 for the first number).
    func peek(_ seq: UInt16) -> (extended: Int64, distance: Int64) {
        guard let highest else { return (65_536 + Int64(seq), 0) }
        let delta = Int64(Int16(bitPattern: seq &- UInt16(truncatingIfNeeded: highest)))
        return (highest + delta, delta)
    }

    /// Extends `seq` and records it. Returns the extended number.
    mutating func unwrap(_ seq: UInt16) -> Int64 {
        let (extended, _) = peek(seq)
        if extended > (highest ?? .min) { highest = extended }
        return extended
    }

    /// Forgets everything: the next number starts a new numbering (a sender restart; the jitter
    /// buffer adds an offset so its count goes on where the old sender's ended).
    mutating func reset() { highest = nil }
}
