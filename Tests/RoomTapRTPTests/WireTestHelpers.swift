import RoomTapRTP

/// An owning copy of everything `RTPPacket.parse` reports, so tests can compare values after the
/// borrowed buffer is gone.
struct RTPSnapshot: Equatable {
    struct Element: Equatable {
        var id: UInt8
        var data: [UInt8]
    }
    var hasPadding: Bool
    var hasExtension: Bool
    var marker: Bool
    var payloadType: UInt8
    var sequenceNumber: UInt16
    var timestamp: UInt32
    var ssrc: UInt32
    var csrcs: [UInt32]
    var extensionProfile: UInt16?
    var extensionData: [UInt8]?
    var elements: [Element]
    var elementsWellFormed: Bool
    var payloadRange: Range<Int>
    var payload: [UInt8]
    var paddingCount: Int
}

/// Parses `bytes` as RTP and copies the result out.
func parseRTP(_ bytes: [UInt8]) -> Result<RTPSnapshot, RTPParseError> {
    bytes.withUnsafeBytes { raw in
        switch RTPPacket.parse(raw) {
        case .invalid(let reason):
            return .failure(reason)
        case .packet(let p):
            return .success(
                RTPSnapshot(
                    hasPadding: p.hasPadding, hasExtension: p.hasExtension, marker: p.marker,
                    payloadType: p.payloadType, sequenceNumber: p.sequenceNumber, timestamp: p.timestamp,
                    ssrc: p.ssrc, csrcs: (0..<p.csrcCount).compactMap { p.csrc(at: $0) },
                    extensionProfile: p.extensionProfile, extensionData: p.extensionRange.map { Array(raw[$0]) },
                    elements: p.extensionElements.map { .init(id: $0.id, data: Array(raw[$0.dataRange])) },
                    elementsWellFormed: p.extensionElements.isWellFormed, payloadRange: p.payloadRange,
                    payload: Array(p.payload), paddingCount: p.paddingCount))
        }
    }
}

/// The reason `bytes` is invalid RTP, or nil when it parses.
func rtpError(_ bytes: [UInt8]) -> RTPParseError? {
    if case .failure(let e) = parseRTP(bytes) { return e }
    return nil
}

/// One RTCP packet of a compound, copied out.
struct RTCPSnapshot: Equatable {
    var packetType: UInt8
    var count: Int
    var range: Range<Int>
    var body: [UInt8]
}

/// Walks a compound RTCP packet: the packets yielded and the error the walk stopped on.
func walkRTCP(_ bytes: [UInt8]) -> (packets: [RTCPSnapshot], error: RTCPParseError?) {
    bytes.withUnsafeBytes { raw in
        var it = RTCPCompoundPacket(raw).makeIterator()
        var out: [RTCPSnapshot] = []
        while let p = it.next() {
            out.append(
                RTCPSnapshot(packetType: p.packetType, count: p.count, range: p.range, body: Array(raw[p.bodyRange])))
        }
        return (out, it.error)
    }
}

/// Runs `body` on the first RTCP packet of `bytes` (nil when there is none).
func withFirstRTCPPacket<T>(_ bytes: [UInt8], _ body: (RTCPPacket) -> T?) -> T? {
    bytes.withUnsafeBytes { raw in
        var it = RTCPCompoundPacket(raw).makeIterator()
        return it.next().flatMap(body)
    }
}

/// A BYE copied out.
struct ByeSnapshot: Equatable {
    var ssrcs: [UInt32]
    var reason: String?
}

func parseBye(_ bytes: [UInt8]) -> ByeSnapshot? {
    withFirstRTCPPacket(bytes) { p in
        RTCPBye.parse(p).map { bye in
            ByeSnapshot(
                ssrcs: (0..<bye.ssrcCount).compactMap { bye.ssrc(at: $0) },
                reason: bye.reason.map { String(decoding: $0, as: UTF8.self) })
        }
    }
}

/// The (SSRC, CNAME) pairs of the first packet (an SDES) and whether the walk stopped early.
func parseCNAMEs(_ bytes: [UInt8]) -> (chunks: [(UInt32, String?)], malformed: Bool)? {
    bytes.withUnsafeBytes { raw in
        var walk = RTCPCompoundPacket(raw).makeIterator()
        guard let p = walk.next(), let sdes = RTCPSourceDescription.parse(p) else { return nil }
        var it = sdes.makeIterator()
        var out: [(UInt32, String?)] = []
        while let c = it.next() {
            out.append((c.ssrc, c.cnameRange.map { String(decoding: raw[$0], as: UTF8.self) }))
        }
        return (out, it.stoppedOnMalformedChunk)
    }
}

func wireBE16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
func wireBE32(_ v: UInt32) -> [UInt8] {
    [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
}
