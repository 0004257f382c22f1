public import RoomTapRTP

/// What a receiver knows of one incoming RTP stream for its RTCP receiver report (RFC 3550 §6.4.1,
/// A.3 and A.8, https://www.rfc-editor.org/rfc/rfc3550): the extended highest sequence number,
/// packets expected and received (cumulative and since the last report), the interarrival jitter in
/// timestamp units (48 kHz for Opus), and the last sender report's middle NTP bits and arrival.
///
/// Thread: confined to the thread that receives the stream (the ICE thread).
package struct ReceptionStatistics: Sendable {
    public let ssrc: UInt32
    private var baseSequence: UInt32 = 0
    private var cycles: UInt32 = 0
    private var maxSequence: UInt16 = 0
    private var started = false
    /// Packets received.
    public private(set) var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var transit: Int64 = 0
    /// RFC 3550 jitter, in 1/16 timestamp units (A.8).
    private var jitterQ4: Int64 = 0
    private var lastSenderReport: UInt32 = 0
    private var lastSenderReportArrival: UInt64 = 0

    public init(ssrc: UInt32) { self.ssrc = ssrc }

    /// Notes one packet (`arrival` CLOCK_MONOTONIC ns). Allocates nothing.
    public mutating func note(sequence: UInt16, timestamp: UInt32, arrival: UInt64) {
        if !started {
            started = true
            baseSequence = UInt32(sequence)
            maxSequence = sequence
        } else {
            let delta = sequence &- maxSequence
            if delta < 0x8000 {
                if sequence < maxSequence { cycles &+= 1 << 16 }
                maxSequence = sequence
            }
        }
        received &+= 1
        let arrivalUnits = Int64(arrival / 1_000_000_000) * 48_000 + Int64(arrival % 1_000_000_000) * 48 / 1_000_000
        let packetTransit = arrivalUnits - Int64(timestamp)
        if received > 1 {
            let d = abs(packetTransit - transit)
            jitterQ4 += d - ((jitterQ4 + 8) >> 4)  // J += (|D| − J) / 16, J kept ×16
        }
        transit = packetTransit
    }

    /// Notes a sender report of the stream (`arrival` CLOCK_MONOTONIC ns).
    public mutating func note(senderReport: RTCPSenderReport, arrival: UInt64) {
        lastSenderReport = UInt32(truncatingIfNeeded: senderReport.ntpTimestamp.rawValue >> 16)
        lastSenderReportArrival = arrival
    }

    /// The extended highest sequence number received.
    public var extendedHighest: UInt32 { cycles &+ UInt32(maxSequence) }
    /// Packets lost so far (expected − received, RFC 3550 A.3; may be negative with duplicates).
    public var cumulativeLost: Int64 { Int64(extendedHighest &- baseSequence &+ 1) - Int64(received) }
    /// Interarrival jitter in timestamp units.
    public var jitter: UInt32 { UInt32(clamping: jitterQ4 >> 4) }

    /// Writes one report block (24 bytes, RFC 3550 §6.4.1) at `out` and starts a new interval.
    package mutating func writeReportBlock(to out: inout [UInt8], now: UInt64) {
        let expected = extendedHighest &- baseSequence &+ 1
        let expectedInterval = expected &- expectedPrior
        let receivedInterval = received &- receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction: UInt8 =
            expectedInterval == 0 || lostInterval <= 0
            ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
        let lost = UInt32(bitPattern: Int32(clamping: max(-0x80_0000, min(0x7F_FFFF, cumulativeLost)))) & 0xFF_FFFF
        let delay: UInt32 =
            lastSenderReportArrival == 0
            ? 0 : UInt32(clamping: (now &- lastSenderReportArrival) * 65_536 / 1_000_000_000)
        append(ssrc, to: &out)
        append(UInt32(fraction) << 24 | lost, to: &out)
        append(extendedHighest, to: &out)
        append(jitter, to: &out)
        append(lastSenderReport, to: &out)
        append(delay, to: &out)
    }
}

func append(_ value: UInt32, to out: inout [UInt8]) {
    out.append(UInt8(value >> 24))
    out.append(UInt8(value >> 16 & 0xFF))
    out.append(UInt8(value >> 8 & 0xFF))
    out.append(UInt8(value & 0xFF))
}
