/// The elements of an RTP header extension in the RFC 8285 general mechanism, one-byte or two-byte
/// form: what browsers put there (ssrc-audio-level, abs-send-time, transport-cc, mid) survives an
/// SFU forwarding their packets.
///
/// RFC 8285 §4.2 (one-byte form, profile 0xBEDE),
/// https://www.rfc-editor.org/rfc/rfc8285#section-4.2:
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       0xBE    |    0xDE       |           length=3            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ID   | L=0   |     data      |  ID   |  L=1  |   data...
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       ...data   |    0 (pad)    |    0 (pad)    |  ID   | L=3   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                          data                                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// ID 1...14, L + 1 data bytes. A byte whose ID is 0 is one byte of padding (its length bits are
/// ignored, as libwebrtc does); ID 15 ends the extension ("processing of the entire extension
/// should terminate at that point").
///
/// RFC 8285 §4.3 (two-byte form, profile 0x100 followed by 4 "appbits"),
/// https://www.rfc-editor.org/rfc/rfc8285#section-4.3:
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         0x100         |appbits|           length=3            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      ID       |     L=0       |     ID        |     L=1       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       data    |    0 (pad)    |       ID      |      L=4      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                          data                                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// ID 1...255, L data bytes (0 allowed). A 0 byte where an ID is expected is one byte of padding.
///
/// An element whose length runs past the extension ends the iteration; ``isWellFormed`` says
/// whether that happened. Thread: pure, allocates nothing; the sequence borrows the packet's bytes.
public struct RTPHeaderExtensionElements: Sequence {
    /// One-byte form profile (RFC 8285 §4.2).
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// Two-byte form profile, with the low 4 bits ("appbits") masked off (RFC 8285 §4.3).
    public static let twoByteProfile: UInt16 = 0x1000

    let bytes: UnsafeRawBufferPointer
    let profile: UInt16
    let range: Range<Int>

    /// Whether the extension uses the RFC 8285 one-byte form.
    public var isOneByte: Bool { profile == Self.oneByteProfile }
    /// Whether the extension uses the RFC 8285 two-byte form.
    public var isTwoByte: Bool { profile & 0xFFF0 == Self.twoByteProfile }

    public func makeIterator() -> Iterator {
        Iterator(
            bytes: bytes, form: isOneByte ? .one : isTwoByte ? .two : .none, offset: range.lowerBound,
            end: range.upperBound)
    }

    /// False when an element's length runs past the end of the extension. ID 15 (one-byte form)
    /// ends the walk cleanly, and a profile that is not RFC 8285 has nothing to check: both true.
    /// Walks the elements.
    public var isWellFormed: Bool {
        var it = makeIterator()
        while it.next() != nil {}
        return !it.stoppedOnMalformedLength
    }

    /// The data of the first element with `id`, or nil (ID 0 and, in the one-byte form, 15 never
    /// match).
    public func data(id: UInt8) -> UnsafeRawBufferPointer? {
        for element in self where element.id == id {
            return UnsafeRawBufferPointer(rebasing: bytes[element.dataRange])
        }
        return nil
    }

    /// The client-to-mixer audio level (RFC 6464) in the element with `id`, the ID the session
    /// negotiated for `urn:ietf:params:rtp-hdrext:ssrc-audio-level` (SDP `a=extmap`). Nil when
    /// there is no such element or it holds no data.
    public func audioLevel(id: UInt8) -> RTPAudioLevel? {
        guard let data = data(id: id), let first = data.first else { return nil }
        return RTPAudioLevel(byte: first)
    }

    /// Walks the elements. Stops at the end of the extension, at ID 15 (one-byte form) or at an
    /// element whose data would run past the end (then ``stoppedOnMalformedLength`` is true).
    public struct Iterator: IteratorProtocol {
        enum Form { case one, two, none }
        let bytes: UnsafeRawBufferPointer
        let form: Form
        var offset: Int
        let end: Int
        /// True once the walk stopped on an element whose length does not fit.
        public private(set) var stoppedOnMalformedLength = false

        public mutating func next() -> RTPHeaderExtensionElement? {
            switch form {
            case .none:
                return nil
            case .one:
                while offset < end {
                    let b = bytes[offset]
                    let id = b >> 4
                    if id == 0 {
                        offset += 1
                        continue
                    }
                    if id == 15 {
                        offset = end
                        return nil
                    }
                    let start = offset + 1
                    let stop = start + Int(b & 0x0F) + 1
                    guard stop <= end else { return malformed() }
                    offset = stop
                    return RTPHeaderExtensionElement(id: id, dataRange: start..<stop)
                }
                return nil
            case .two:
                while offset < end {
                    let id = bytes[offset]
                    if id == 0 {
                        offset += 1
                        continue
                    }
                    guard offset + 2 <= end else { return malformed() }
                    let start = offset + 2
                    let stop = start + Int(bytes[offset + 1])
                    guard stop <= end else { return malformed() }
                    offset = stop
                    return RTPHeaderExtensionElement(id: id, dataRange: start..<stop)
                }
                return nil
            }
        }

        private mutating func malformed() -> RTPHeaderExtensionElement? {
            stoppedOnMalformedLength = true
            offset = end
            return nil
        }
    }
}

/// One RFC 8285 header extension element: its local ID and where its data lies in the packet.
public struct RTPHeaderExtensionElement: Sendable, Equatable {
    /// The local identifier (1...14 one-byte form, 1...255 two-byte form), mapped to a URI by SDP
    /// `a=extmap`.
    public let id: UInt8
    /// The element's data, as byte offsets into the packet (``RTPPacket/bytes``).
    public let dataRange: Range<Int>
}

/// The audio level a client measured for the packet it sends (RFC 6464 §3,
/// https://www.rfc-editor.org/rfc/rfc6464#section-3).
///
/// ```
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// |V|    level    |
/// +-+-+-+-+-+-+-+-+
/// ```
public struct RTPAudioLevel: Sendable, Equatable {
    /// The V flag: the sender's voice activity detector thinks the packet holds speech (only
    /// meaningful when the `vad=on` extension attribute was negotiated).
    public var voiceActivity: Bool
    /// The level in -dBov, 0...127: 0 is the loudest (full scale), 127 is silence (-127 dBov).
    public var level: UInt8

    /// Reads the element's data byte.
    public init(byte: UInt8) {
        voiceActivity = byte & 0x80 != 0
        level = byte & 0x7F
    }

    /// The level in dBov (0 or below).
    public var dBov: Int { -Int(level) }
}
