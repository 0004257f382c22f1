import CLinuxNet
import Synchronization

/// What one listen socket lets through before anything is parsed: the sources that may send
/// (``SourceFilter``; nil: anyone) and SRTP/SRTCP authentication (``SRTPContext``; nil: plain
/// RTP). ``RTPReceiver`` applies it to every datagram of its socket, first the source, then SRTP;
/// a datagram that fails either is counted here and dropped, so it never reaches a parser, never
/// creates a track and costs no allocation.
///
/// Thread: made on a control thread; ``admit(_:length:source:)`` on the receive thread only; the
/// counters are atomics readable anywhere.
public final class ReceiveGuard: Sendable {
    private let rejectedCount = Atomic<Int>(0)
    private let notAllowedCount = Atomic<Int>(0)
    /// Who may send; nil: anyone.
    public let allow: SourceFilter?
    /// The SRTP keys of the socket's participants; nil: plain RTP.
    public let srtp: SRTPContext?

    /// A guard; with neither a filter nor SRTP it admits everything.
    public init(allow: SourceFilter?, srtp: SRTPContext?) {
        self.allow = allow
        self.srtp = srtp
    }

    /// Datagrams dropped because their source is not allowed.
    public var notAllowed: Int { notAllowedCount.load(ordering: .relaxed) }
    /// Datagrams dropped because they failed SRTP/SRTCP authentication or replay protection (or
    /// came from an SSRC without a key).
    public var srtpRejected: Int { rejectedCount.load(ordering: .relaxed) }

    /// The source of a datagram, as the receive batch reports it.
    struct Source {
        var family: Int32
        var high: UInt64
        var low: UInt64
    }

    /// Checks one datagram and unprotects it in place: the length of the plain packet to parse, or
    /// nil when it is dropped (and counted). Receive thread only; allocates nothing.
    func admit(_ bytes: UnsafeMutableRawPointer, length: Int, source: Source) -> Int? {
        if let allow,
            source.family == 0 || !allow.allows(isIPv6: source.family == 6, high: source.high, low: source.low)
        {
            notAllowedCount.add(1, ordering: .relaxed)
            return nil
        }
        guard let srtp else { return length }
        let datagram = UnsafeRawBufferPointer(start: bytes, count: length)
        let plain =
            RTPDemux.isRTCP(datagram)
            ? srtp.unprotectRTCP(bytes, length: length) : srtp.unprotectRTP(bytes, length: length)
        if plain == nil { rejectedCount.add(1, ordering: .relaxed) }
        return plain
    }
}
