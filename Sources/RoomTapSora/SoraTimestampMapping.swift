public import RoomTapRTP

/// Sora's packet times (microseconds since the Unix epoch, 64-bit sequence numbers) as a stream's
/// 48 kHz RTP timestamps (RFC 7587 §4.1), and as NTP times for the sender-report mapping.
///
/// A packet whose timestamp lies within ``snapSamples`` of where its sequence number puts it after
/// the previous packet (previous timestamp + its duration × the sequence distance) takes exactly
/// that place, so timestamps that jitter by a few milliseconds (a capture clock, an arrival time)
/// play seamlessly and a lost packet leaves exactly its duration; one further away (a pause, the
/// first of a request, a restart) is placed at its own timestamp, and says so (`placed`). A late
/// (reordered or repeated) packet is placed at its own timestamp and leaves the chain as it is.
///
/// Thread: a value; its owner's thread.
package struct SoraTimestampMapping: Sendable {
    /// How far (48 kHz samples, 10 ms) a timestamp may be from the place its sequence number gives
    /// it and still be taken as contiguous.
    package static let snapSamples: Int32 = 480
    /// A sequence distance larger than this (either way) is not a continuation.
    package static let maxSequenceDistance: UInt64 = 1_000

    private var previous: (sequence: UInt64, timestamp: UInt32, duration: UInt32)?

    package init() {}

    /// Forgets the chain: the next packet is placed at its own timestamp (a new request).
    package mutating func reset() { previous = nil }

    /// The RTP timestamp of `frame` (whose Opus packet lasts `duration` samples; 0 if unknown),
    /// and whether it was placed at its own timestamp (true) rather than continuing the chain.
    package mutating func rtpTimestamp(of frame: SoraStreamingFrame, duration: UInt32) -> (UInt32, placed: Bool) {
        let own = UInt32(truncatingIfNeeded: Self.samples(of: frame.timestamp))
        guard let p = previous else {
            previous = (frame.sequence, own, duration > 0 ? duration : 960)
            return (own, true)
        }
        let ahead = frame.sequence > p.sequence && frame.sequence - p.sequence <= Self.maxSequenceDistance
        let behind = frame.sequence <= p.sequence && p.sequence - frame.sequence <= Self.maxSequenceDistance
        var result = (own, placed: true)
        if ahead {
            let predicted = p.timestamp &+ p.duration &* UInt32(frame.sequence - p.sequence)
            if abs(Int64(Int32(bitPattern: own &- predicted))) <= Int64(Self.snapSamples) {
                result = (predicted, false)
            }
        }
        if !behind { previous = (frame.sequence, result.0, duration > 0 ? duration : p.duration) }
        return result
    }

    /// Microseconds since the Unix epoch as 48 kHz samples since then, rounded down.
    package static func samples(of micros: UInt64) -> UInt64 {
        micros / 1_000_000 * 48_000 + micros % 1_000_000 * 48 / 1_000
    }

    /// Microseconds since the Unix epoch as an NTP timestamp (RFC 5905 §6: seconds since 1900),
    /// the fraction rounded up so that the sender-report mapping (which rounds NTP down to 48 kHz
    /// samples) lands on the same sample as ``samples(of:)``.
    package static func ntp(of micros: UInt64) -> NTPTimestamp {
        let seconds = micros / 1_000_000 + 2_208_988_800
        let fraction = ((micros % 1_000_000) << 32 + 999_999) / 1_000_000
        return NTPTimestamp(seconds: UInt32(truncatingIfNeeded: seconds), fraction: UInt32(fraction))
    }
}
