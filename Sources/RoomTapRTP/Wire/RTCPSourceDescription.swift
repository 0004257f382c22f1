/// An RTCP source description (SDES) packet, read for each chunk's CNAME (RFC 3550 §6.5,
/// https://www.rfc-editor.org/rfc/rfc3550#section-6.5; CNAME §6.5.1). A non-owning view.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    SC   |  PT=SDES=202  |             length            |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_1                          |
///   1    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |    CNAME=1    |     length    | user and domain name        ...
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |  other items (type, length, text)...  |  0 (end)  | 0 pad to 4 |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_2                          |
///   2    :                              ...                              :
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
///
/// Each chunk starts on a 32-bit boundary; its item list ends with a null octet (item type 0) and
/// is padded with nulls to the next boundary. A CNAME is at most 255 bytes (one length octet).
/// The walk yields up to SC chunks and stops at the first one whose items run past the body or
/// that lacks the terminating null (``Iterator/stoppedOnMalformedChunk``).
///
/// Thread: pure, allocates nothing; valid only while the caller's bytes are.
package struct RTCPSourceDescription: Sequence {
    /// The SDES item type of a CNAME.
    public static let cnameItem: UInt8 = 1

    let packet: RTCPPacket

    /// Views an SDES packet, or nil when `packet` is not one (type 202).
    public static func parse(_ packet: RTCPPacket) -> RTCPSourceDescription? {
        guard packet.packetType == RTCPPacket.sourceDescription else { return nil }
        return RTCPSourceDescription(packet: packet)
    }

    /// Chunks announced by the header (SC), 0...31; the walk may yield fewer if they do not fit.
    public var chunkCount: Int { packet.count }

    public func makeIterator() -> Iterator {
        Iterator(
            bytes: packet.bytes, offset: packet.bodyRange.lowerBound, end: packet.bodyRange.upperBound,
            remaining: packet.count)
    }

    /// Walks the chunks; see ``RTCPSourceDescription``.
    public struct Iterator: IteratorProtocol {
        let bytes: UnsafeRawBufferPointer
        var offset: Int
        let end: Int
        var remaining: Int
        /// True once the walk stopped on a chunk that does not fit the body.
        public private(set) var stoppedOnMalformedChunk = false

        public mutating func next() -> RTCPSourceDescriptionChunk? {
            guard remaining > 0 else { return nil }
            guard offset + 4 <= end else { return malformed() }
            let ssrc = bytes.bigEndianUInt32(at: offset)
            var i = offset + 4
            var cname: Range<Int>?
            while true {
                guard i < end else { return malformed() }
                let type = bytes[i]
                if type == 0 { break }
                guard i + 2 <= end else { return malformed() }
                let start = i + 2
                let stop = start + Int(bytes[i + 1])
                guard stop <= end else { return malformed() }
                if type == RTCPSourceDescription.cnameItem && cname == nil { cname = start..<stop }
                i = stop
            }
            // Skip the null terminator, then to the next 32-bit boundary (the body starts on one).
            i += 1
            i += (4 - (i & 3)) & 3
            offset = Swift.min(i, end)
            remaining -= 1
            return RTCPSourceDescriptionChunk(ssrc: ssrc, cnameRange: cname)
        }

        private mutating func malformed() -> RTCPSourceDescriptionChunk? {
            stoppedOnMalformedChunk = true
            remaining = 0
            return nil
        }
    }
}

/// One SDES chunk: a source and where its CNAME lies in the datagram (nil when it has none).
public struct RTCPSourceDescriptionChunk: Sendable, Equatable {
    /// The source described.
    public let ssrc: UInt32
    /// The CNAME text (UTF-8, ≤ 255 bytes) as offsets into the datagram, or nil.
    public let cnameRange: Range<Int>?
}
