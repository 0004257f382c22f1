/// One RTCP packet of a compound packet: a parsed, non-owning view (RFC 3550 §6.4.1 common
/// header, https://www.rfc-editor.org/rfc/rfc3550#section-6.4.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  count  |  packet type  |   length (32-bit words - 1)   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  body (length × 4 bytes) ...                  |
/// |                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                               |  padding (P=1)| padding count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// `count` is the report count (SR, RR) or source count (SDES, BYE) or a subtype (APP, feedback).
/// Read the body with ``RTCPSenderReport/parse(_:)``, ``RTCPBye/parse(_:)`` and
/// ``RTCPSourceDescription/parse(_:)``; other packet types (RR, APP, feedback, XR) are there for a
/// receiver to skip and count.
///
/// Thread: pure, allocates nothing; valid only while the caller's bytes are.
public struct RTCPPacket {
    /// Sender report (RFC 3550 §6.4.1).
    public static let senderReport: UInt8 = 200
    /// Receiver report (RFC 3550 §6.4.2).
    public static let receiverReport: UInt8 = 201
    /// Source description (RFC 3550 §6.5).
    public static let sourceDescription: UInt8 = 202
    /// Goodbye (RFC 3550 §6.6).
    public static let bye: UInt8 = 203
    /// Application-defined (RFC 3550 §6.7).
    public static let app: UInt8 = 204

    /// The compound datagram this packet is part of.
    public let bytes: UnsafeRawBufferPointer
    /// This packet in ``bytes``: header, body and padding (4 × (length + 1) bytes).
    public let range: Range<Int>
    /// The P bit: this packet ends with padding (already removed from ``bodyRange``).
    public let hasPadding: Bool
    /// The 5-bit count field (report count, source count or subtype), 0...31.
    public let count: Int
    /// The packet type (200 SR, 201 RR, 202 SDES, 203 BYE, 204 APP, 205/206 feedback, 207 XR...).
    public let packetType: UInt8
    /// The body: after the 4-byte header, before any padding, as offsets into ``bytes``.
    public let bodyRange: Range<Int>
}

/// Why a compound RTCP packet stopped parsing. `rawValue` indexes a fixed array of counters.
public enum RTCPParseError: UInt8, CaseIterable, Sendable, Error {
    /// Fewer than 4 bytes where a packet header should be (including an empty datagram).
    case tooShort
    /// A packet's version field is not 2.
    case badVersion
    /// A packet's length (in 32-bit words) runs past the end of the datagram.
    case lengthOverflow
    /// P is set but the padding count is 0 or more than the packet's body.
    case badPadding
}

/// The packets of a compound RTCP datagram (RFC 3550 §6.1,
/// https://www.rfc-editor.org/rfc/rfc3550#section-6.1): header-checked packets, one after another.
///
/// The walk yields each packet whose header is valid and whose length fits, and stops at the first
/// that is not, recording why in ``Iterator/error``; packets before a bad one are still yielded
/// (RFC 3550 §A.2 would discard the whole compound; a receiver that wants that checks `error`
/// after the walk, before acting). The first packet is not required to be an SR or RR: reduced-size
/// RTCP (RFC 5506) sends single feedback packets.
///
/// Thread: pure, allocates nothing; borrows the caller's bytes.
public struct RTCPCompoundPacket: Sequence {
    /// The datagram.
    public let bytes: UnsafeRawBufferPointer

    /// Views `bytes` as a compound RTCP packet (nothing is read until iteration).
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// Why the datagram is not entirely well-formed, or nil when every byte belongs to a valid
    /// packet. Walks the packets.
    public var error: RTCPParseError? {
        var it = makeIterator()
        while it.next() != nil {}
        return it.error
    }

    /// Walks the packets; see ``RTCPCompoundPacket``.
    public struct Iterator: IteratorProtocol {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        /// Why the walk stopped before the end of the datagram, once it has; nil while it is going
        /// and when it reached the end cleanly.
        public private(set) var error: RTCPParseError?

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            if bytes.isEmpty { error = .tooShort }
        }

        public mutating func next() -> RTCPPacket? {
            let count = bytes.count
            guard error == nil, offset < count else { return nil }
            guard count - offset >= 4 else { return fail(.tooShort) }
            let b0 = bytes[offset]
            guard b0 >> 6 == 2 else { return fail(.badVersion) }
            let start = offset
            let end = start + 4 * (Int(bytes.bigEndianUInt16(at: start + 2)) + 1)
            guard end <= count else { return fail(.lengthOverflow) }
            let hasPadding = b0 & 0x20 != 0
            var bodyEnd = end
            if hasPadding {
                let pad = Int(bytes[end - 1])
                guard pad >= 1, pad <= end - (start + 4) else { return fail(.badPadding) }
                bodyEnd = end - pad
            }
            offset = end
            return RTCPPacket(
                bytes: bytes, range: start..<end, hasPadding: hasPadding, count: Int(b0 & 0x1F),
                packetType: bytes[start + 1], bodyRange: (start + 4)..<bodyEnd)
        }

        private mutating func fail(_ reason: RTCPParseError) -> RTCPPacket? {
            error = reason
            offset = bytes.count
            return nil
        }
    }
}
