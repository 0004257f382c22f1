/// One Opus packet of a Sora audio-streaming request body, as Sora sends it with
/// `audio_streaming_header = true` in `sora.conf`: a 20-byte big-endian header, then the packet.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          timestamp: microseconds since the Unix epoch         |
/// |                        (u64, big-endian)                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  sequence number (u64, big-endian)            |
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |              payload length in bytes (u32, big-endian)        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  Opus packet (length bytes) ...               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The layout is Shiguredo suzu's reader of the same body (`options.go`,
/// `optionReadPacketWithHeader`; `../shared/sora-reference.md` §2). Without the header Sora sends
/// bare packets whose boundaries the byte stream loses, so roomtap requires it.
///
/// Thread: a value; ``parse(_:)`` is pure and allocates nothing.
package struct SoraStreamingFrame: Equatable, Sendable {
    /// Bytes of the header before each packet.
    package static let headerSize = 20
    /// The largest payload taken (an RTP payload in one Ethernet MTU; Opus packets are far smaller).
    package static let maxPayload = 1500

    /// When the packet was captured: microseconds since the Unix epoch.
    package let timestamp: UInt64
    /// The packet's sequence number (one more per packet; a gap is a lost packet).
    package let sequence: UInt64
    /// Where the Opus packet lies in the bytes given to ``parse(_:)``.
    package let payloadRange: Range<Int>
    /// A frame (for senders and tests; ``parse(_:)`` makes them from bytes).
    package init(timestamp: UInt64, sequence: UInt64, payloadRange: Range<Int>) {
        self.timestamp = timestamp
        self.sequence = sequence
        self.payloadRange = payloadRange
    }

    /// Header plus payload: the bytes this frame takes from the body.
    package var size: Int { payloadRange.upperBound }

    /// Why a body cannot be read on.
    package enum Failure: Equatable, Sendable, CustomStringConvertible {
        /// A header announcing an empty packet.
        case emptyPayload(sequence: UInt64)
        /// A header announcing more than ``SoraStreamingFrame/maxPayload`` bytes.
        case payloadTooLong(sequence: UInt64, length: UInt32)
        /// The body ended inside a frame (`have` of `need` bytes).
        case truncated(have: Int, need: Int)

        package var description: String {
            switch self {
            case .emptyPayload(let sequence):
                "the frame with sequence number \(sequence) announces an empty packet (length 0)"
            case .payloadTooLong(let sequence, let length):
                "the frame with sequence number \(sequence) announces \(length) bytes, more than "
                    + "\(SoraStreamingFrame.maxPayload) (is sora.conf's audio_streaming_header = true?)"
            case .truncated(let have, let need):
                "the body ends inside a frame (\(have) of its \(need) bytes)"
            }
        }
    }

    /// What the front of a body holds.
    package enum ParseResult: Equatable, Sendable {
        /// A whole frame at the start of the bytes.
        case frame(SoraStreamingFrame)
        /// Not enough bytes yet for the next frame (at the end of the body: ``Failure/truncated``).
        case needMore(Int)
        /// A header no packet can have: the body cannot be read on.
        case invalid(Failure)
    }

    /// Reads the frame at the start of `bytes`. Never traps, whatever the bytes.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult {
        guard bytes.count >= headerSize else { return .needMore(headerSize) }
        let timestamp = bigEndian(bytes, at: 0, count: 8)
        let sequence = bigEndian(bytes, at: 8, count: 8)
        let length = UInt32(truncatingIfNeeded: bigEndian(bytes, at: 16, count: 4))
        guard length > 0 else { return .invalid(.emptyPayload(sequence: sequence)) }
        guard length <= maxPayload else { return .invalid(.payloadTooLong(sequence: sequence, length: length)) }
        let end = headerSize + Int(length)
        guard bytes.count >= end else { return .needMore(end) }
        return .frame(SoraStreamingFrame(timestamp: timestamp, sequence: sequence, payloadRange: headerSize..<end))
    }

    /// Writes the header of a frame carrying `payloadLength` bytes into `out` (20 bytes). For
    /// senders and tests.
    package static func writeHeader(
        timestamp: UInt64, sequence: UInt64, payloadLength: UInt32, into out: inout [UInt8]
    ) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: timestamp >> shift)) }
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: sequence >> shift)) }
        for shift in stride(from: 24, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: payloadLength >> UInt32(shift)))
        }
    }

    /// The big-endian value of `count` bytes at `offset` (in bounds, checked by the caller).
    private static func bigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<count { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }
}
