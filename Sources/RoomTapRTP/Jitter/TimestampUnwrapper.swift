/// Extends 32-bit RTP timestamps (48 kHz units for Opus, RFC 7587 §4.1,
/// https://www.rfc-editor.org/rfc/rfc7587#section-4.1) to 64 bits so wraparound at 2^32 is free.
///
/// Each timestamp is placed at the 64-bit value nearest to the reference (the timestamp of the
/// packet with the highest sequence number so far): a signed 32-bit distance, so reordered
/// packets from before the wrap land before it. The first timestamp maps to `2^32 + ts`.
///
/// Thread: confined to the producer (receive) thread. A value type.
struct TimestampUnwrapper {
    /// The extended timestamp of the reference packet, or nil before the first.
    private(set) var reference: Int64?

    /// The extended value of `ts` near the reference (nothing recorded).
    func extend(_ ts: UInt32) -> Int64 {
        guard let reference else { return (1 << 32) + Int64(ts) }
        return reference + Int64(Int32(bitPattern: ts &- UInt32(truncatingIfNeeded: reference)))
    }

    /// Makes `extended` the reference (call for the packet with the newest sequence number).
    mutating func setReference(_ extended: Int64) { reference = extended }

    /// Forgets the reference: the next timestamp starts a new numbering (sender restart).
    mutating func reset() { reference = nil }
}
