import RoomTapSync
import Synchronization

/// The room's mapping from senders' RTCP wall clock (NTP, RFC 3550 §6.4.1,
/// https://www.rfc-editor.org/rfc/rfc3550#section-6.4.1) to room samples, shared by the jitter
/// buffers of one live room so streams whose sender reports share a wall-clock base (an SFU or a
/// PBX forwarding them) play equal NTP instants at equal room times, whatever their network paths.
///
/// The first stream to combine a sender report with its arrival anchor fixes the mapping
/// (`room = ntp × 48 000 + offset`, so that stream itself does not move); every later one is
/// shifted onto it. The streams placed this way share one playout delay: the largest any of them
/// needs (a stream whose path is 80 ms longer makes the others wait for it, or it would be late).
///
/// Thread: any thread (an atomic offset; a short lock when a stream's needed delay changes, which
/// is rare: the delay moves in 10 ms steps).
public final class SenderClockSync: Sendable {
    private let offset = Atomic<Int64>(.min)  // room sample of NTP 0, in 48 kHz samples; .min: unset
    private let groupDelay = Atomic<Int64>(0)
    private let needs = Locked<[ObjectIdentifier: Int64]>([:])

    /// An empty mapping: the first stream with a sender report will fix it.
    public init() {}

    /// The room sample of NTP instant `ntpSamples` (NTP time in 48 kHz samples), fixing the
    /// mapping from `proposal` (the room sample the caller would place it at) if none is yet.
    func roomSample(ofNTP ntpSamples: Int64, proposal: Int64) -> Int64 {
        let wanted = proposal - ntpSamples
        let (exchanged, original) = offset.compareExchange(
            expected: .min, desired: wanted, ordering: .acquiringAndReleasing)
        return ntpSamples + (exchanged ? wanted : original)
    }

    /// Records the delay (samples) stream `id` needs; returns the largest of all streams placed by
    /// sender reports.
    func update(_ id: ObjectIdentifier, needs delay: Int64) -> Int64 {
        let largest = needs.withLock { table in
            table[id] = delay
            return table.values.max() ?? delay
        }
        groupDelay.store(largest, ordering: .relaxed)
        return largest
    }

    /// The delay shared by the streams placed by sender reports (samples). Any thread.
    var sharedDelay: Int64 { groupDelay.load(ordering: .relaxed) }

    /// An NTP timestamp in 48 kHz samples since 1900.
    static func samples(_ ntp: NTPTimestamp) -> Int64 {
        Int64(ntp.seconds) * 48_000 + Int64((UInt64(ntp.fraction) * 48_000) >> 32)
    }
}
