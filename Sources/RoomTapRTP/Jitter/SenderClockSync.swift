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
/// A report that arrives before its stream's first packet (ffmpeg sends its first SR just before
/// its first RTP packet) cannot be applied yet: it is held by port and SSRC
/// (``holdEarlyReport(port:ssrc:_:)``) and handed to the stream when its first packet makes it
/// (``takeEarlyReport(port:ssrc:)``). At most ``maxEarlyReports`` are held, so a flood of reports
/// for SSRCs that never send cannot grow memory; a newer report for a held stream replaces the older.
///
/// Thread: any thread (an atomic offset; a short lock when a stream's needed delay changes, which
/// is rare: the delay moves in 10 ms steps, and for early reports, which only a stream's start and
/// reports for streams without packets touch).
public final class SenderClockSync: Sendable {
    /// The stream a held report belongs to.
    package struct EarlyKey: Hashable, Sendable {
        package let port: UInt16
        package let ssrc: UInt32
    }
    /// What a sender report says that places its stream: its NTP wall clock at an RTP timestamp.
    package struct EarlyReport: Equatable, Sendable {
        package let ntp: NTPTimestamp
        package let rtpTimestamp: UInt32
        package init(ntp: NTPTimestamp, rtpTimestamp: UInt32) {
            self.ntp = ntp
            self.rtpTimestamp = rtpTimestamp
        }
    }

    /// The most reports held for streams that have not sent a packet yet: 64.
    package static let maxEarlyReports = 64

    private let offset = Atomic<Int64>(.min)  // room sample of NTP 0, in 48 kHz samples; .min: unset
    private let groupDelay = Atomic<Int64>(0)
    private let needs = Locked<[ObjectIdentifier: Int64]>([:])
    private let early = Locked<[EarlyKey: EarlyReport]>([:])
    private let earlyCount = Atomic<Int>(0)

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

    /// Holds `report` of the stream (`port`, `ssrc`) that has no packet yet. Returns false (and
    /// drops it) when ``maxEarlyReports`` other streams' reports are held already. Any thread.
    @discardableResult
    package func holdEarlyReport(port: UInt16, ssrc: UInt32, _ report: EarlyReport) -> Bool {
        let key = EarlyKey(port: port, ssrc: ssrc)
        return early.withLock { held in
            guard held.count < Self.maxEarlyReports || held[key] != nil else { return false }
            held[key] = report
            earlyCount.store(held.count, ordering: .relaxed)
            return true
        }
    }

    /// The report held for (`port`, `ssrc`), removed; nil when none is. Called when the stream's
    /// first packet arrives (without a lock when nothing is held). Any thread.
    package func takeEarlyReport(port: UInt16, ssrc: UInt32) -> EarlyReport? {
        guard earlyCount.load(ordering: .relaxed) > 0 else { return nil }
        return early.withLock { held in
            let report = held.removeValue(forKey: EarlyKey(port: port, ssrc: ssrc))
            earlyCount.store(held.count, ordering: .relaxed)
            return report
        }
    }

    /// The delay shared by the streams placed by sender reports (samples). Any thread.
    var sharedDelay: Int64 { groupDelay.load(ordering: .relaxed) }

    /// An NTP timestamp in 48 kHz samples since 1900.
    static func samples(_ ntp: NTPTimestamp) -> Int64 {
        Int64(ntp.seconds) * 48_000 + Int64((UInt64(ntp.fraction) * 48_000) >> 32)
    }
}
