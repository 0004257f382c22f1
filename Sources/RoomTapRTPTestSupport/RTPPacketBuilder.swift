/// Builds RTP packets byte by byte from the RFC 3550 §5.1 layout, independent of the parser under
/// test: any header field (including invalid versions and CSRC counts), CSRCs, RFC 8285 one-byte
/// and two-byte header extensions or a raw extension, padding, payload. For parser tests and for
/// test senders that put the bytes on a UDP socket.
///
/// ```swift
/// var b = RTPPacketBuilder(payloadType: 111, sequenceNumber: 7, timestamp: 960, ssrc: 0xCAFE)
/// b.extension = .oneByte([(id: 1, data: [0x80 | 30])])   // ssrc-audio-level, voice, -30 dBov
/// b.payload = opusBytes
/// let datagram: [UInt8] = b.bytes()
/// ```
public struct RTPPacketBuilder: Sendable {
    /// A header extension (RFC 3550 §5.3.1; RFC 8285 §4.2, §4.3).
    public enum HeaderExtension: Sendable {
        /// Profile 0xBEDE; each element gets its `ID | L` byte (L = data.count - 1, so data must be
        /// 1...16 bytes and the ID 1...14 for a valid element; anything is written as given).
        /// `paddingBetween` zero bytes go between elements; zero bytes pad the end to 32 bits.
        case oneByte([(id: UInt8, data: [UInt8])], paddingBetween: Int = 0)
        /// Profile 0x100X with `appBits` X; each element is `ID, L, data` (0...255 bytes).
        case twoByte([(id: UInt8, data: [UInt8])], appBits: UInt8 = 0, paddingBetween: Int = 0)
        /// Any profile and data (padded with zeros to 32 bits); `lengthWords` overrides the
        /// length field (to point past the end).
        case raw(profile: UInt16, data: [UInt8], lengthWords: UInt16? = nil)
    }

    /// Version field (2 bits; 2 is valid).
    public var version: UInt8 = 2
    public var marker = false
    /// Payload type, 0...127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32] = []
    /// Writes this CC instead of `csrcs.count` (to build a header that announces more than it has).
    public var csrcCountOverride: UInt8?
    public var `extension`: HeaderExtension?
    public var payload: [UInt8] = []
    /// Padding bytes at the end including the count byte (0: none, P clear). 1...255.
    public var padding = 0
    /// Writes this as the last (count) byte instead of `padding` (0 or too large to test the
    /// parser's checks). Sets P even when `padding` is 0 (then one byte is appended).
    public var paddingCountOverride: UInt8?

    public init(
        payloadType: UInt8 = 111, sequenceNumber: UInt16 = 0, timestamp: UInt32 = 0, ssrc: UInt32 = 0x1234_5678,
        marker: Bool = false, payload: [UInt8] = []
    ) {
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.marker = marker
        self.payload = payload
    }

    /// Offset of the payload in ``bytes()`` (header, CSRCs and extension before it).
    public var payloadOffset: Int {
        12 + 4 * csrcs.count + (`extension`.map { 4 + Self.extensionData($0).count } ?? 0)
    }

    /// The packet.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payloadOffset + payload.count + padding + 1)
        let hasPadding = padding > 0 || paddingCountOverride != nil
        let cc = csrcCountOverride ?? UInt8(truncatingIfNeeded: csrcs.count)
        out.append((version & 3) << 6 | (hasPadding ? 0x20 : 0) | (`extension` != nil ? 0x10 : 0) | (cc & 0x0F))
        out.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        out += RTPWire.be16(sequenceNumber) + RTPWire.be32(timestamp) + RTPWire.be32(ssrc)
        for c in csrcs { out += RTPWire.be32(c) }
        if let ext = `extension` {
            let data = Self.extensionData(ext)
            var words = UInt16(truncatingIfNeeded: data.count / 4)
            let profile: UInt16
            switch ext {
            case .oneByte: profile = 0xBEDE
            case .twoByte(_, let appBits, _): profile = 0x1000 | UInt16(appBits & 0x0F)
            case .raw(let p, _, let lengthWords):
                profile = p
                if let lengthWords { words = lengthWords }
            }
            out += RTPWire.be16(profile) + RTPWire.be16(words) + data
        }
        out += payload
        if hasPadding {
            let n = max(padding, 1)
            out += [UInt8](repeating: 0, count: n - 1)
            out.append(paddingCountOverride ?? UInt8(truncatingIfNeeded: n))
        }
        return out
    }

    static func extensionData(_ ext: HeaderExtension) -> [UInt8] {
        var data: [UInt8] = []
        switch ext {
        case .oneByte(let elements, let between):
            for (i, e) in elements.enumerated() {
                if i > 0 { data += [UInt8](repeating: 0, count: between) }
                data.append(e.id << 4 | UInt8(truncatingIfNeeded: max(e.data.count, 1) - 1) & 0x0F)
                data += e.data
            }
        case .twoByte(let elements, _, let between):
            for (i, e) in elements.enumerated() {
                if i > 0 { data += [UInt8](repeating: 0, count: between) }
                data += [e.id, UInt8(truncatingIfNeeded: e.data.count)] + e.data
            }
        case .raw(_, let raw, _):
            data = raw
        }
        while data.count % 4 != 0 { data.append(0) }
        return data
    }
}

/// Builds RTCP packets (RFC 3550 §6.4-6.6) byte by byte; concatenate them for a compound packet.
public enum RTCPPacketBuilder {
    /// A report block (RFC 3550 §6.4.1), 24 bytes.
    public struct ReportBlock: Sendable {
        public var ssrc: UInt32
        public var fractionLost: UInt8 = 0
        public var cumulativeLost: UInt32 = 0
        public var highestSequence: UInt32 = 0
        public var jitter: UInt32 = 0
        public var lastSR: UInt32 = 0
        public var delaySinceLastSR: UInt32 = 0

        public init(ssrc: UInt32) { self.ssrc = ssrc }

        var bytes: [UInt8] {
            RTPWire.be32(ssrc) + [fractionLost] + Array(RTPWire.be32(cumulativeLost & 0xFF_FFFF).dropFirst())
                + RTPWire.be32(highestSequence) + RTPWire.be32(jitter) + RTPWire.be32(lastSR)
                + RTPWire.be32(delaySinceLastSR)
        }
    }

    /// One packet: header (V=2 unless `version`, P when `padding` > 0, the count, the type, the
    /// length in words − 1 unless `lengthOverride`) and `body`, padded to 32 bits with zeros.
    public static func packet(
        type: UInt8, count: Int, body: [UInt8], padding: Int = 0, version: UInt8 = 2, lengthOverride: UInt16? = nil
    ) -> [UInt8] {
        var body = body
        while body.count % 4 != 0 { body.append(0) }
        if padding > 0 {
            body += [UInt8](repeating: 0, count: padding - 1)
            body.append(UInt8(truncatingIfNeeded: padding))
        }
        let words = UInt16(truncatingIfNeeded: (body.count + 3) / 4)
        return [
            (version & 3) << 6 | (padding > 0 ? 0x20 : 0) | UInt8(truncatingIfNeeded: count) & 0x1F, type,
        ] + RTPWire.be16(lengthOverride ?? words) + body
    }

    /// A sender report (type 200).
    public static func senderReport(
        ssrc: UInt32, ntp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        blocks: [ReportBlock] = [], padding: Int = 0
    ) -> [UInt8] {
        var body = RTPWire.be32(ssrc) + RTPWire.be32(UInt32(truncatingIfNeeded: ntp >> 32))
        body += RTPWire.be32(UInt32(truncatingIfNeeded: ntp)) + RTPWire.be32(rtpTimestamp)
        body += RTPWire.be32(packetCount) + RTPWire.be32(octetCount)
        for b in blocks { body += b.bytes }
        return packet(type: 200, count: blocks.count, body: body, padding: padding)
    }

    /// A receiver report (type 201).
    public static func receiverReport(ssrc: UInt32, blocks: [ReportBlock] = []) -> [UInt8] {
        packet(type: 201, count: blocks.count, body: RTPWire.be32(ssrc) + blocks.flatMap(\.bytes))
    }

    /// A BYE (type 203) for `ssrcs`, with an optional reason (UTF-8, ≤ 255 bytes).
    public static func bye(ssrcs: [UInt32], reason: String? = nil) -> [UInt8] {
        var body = ssrcs.flatMap(RTPWire.be32)
        if let reason {
            let r = Array(reason.utf8.prefix(255))
            body += [UInt8(r.count)] + r
        }
        return packet(type: 203, count: ssrcs.count, body: body)
    }

    /// An SDES (type 202): one chunk per source, each with its items (type, text), e.g.
    /// `[(1, "alice@host")]` for a CNAME, terminated and padded as RFC 3550 §6.5 says.
    public static func sourceDescription(chunks: [(ssrc: UInt32, items: [(type: UInt8, text: String)])]) -> [UInt8] {
        var body: [UInt8] = []
        for chunk in chunks {
            body += RTPWire.be32(chunk.ssrc)
            for item in chunk.items {
                let t = Array(item.text.utf8.prefix(255))
                body += [item.type, UInt8(t.count)] + t
            }
            body.append(0)
            while body.count % 4 != 0 { body.append(0) }
        }
        return packet(type: 202, count: chunks.count, body: body)
    }

    /// An SDES with one CNAME per source.
    public static func cnames(_ chunks: [(ssrc: UInt32, cname: String)]) -> [UInt8] {
        sourceDescription(chunks: chunks.map { (ssrc: $0.ssrc, items: [(type: UInt8(1), text: $0.cname)]) })
    }
}

/// Big-endian byte helpers for the builders.
enum RTPWire {
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (24 - 8 * $0)) & 0xFF) } }
}
