import RoomTapRTP
import RoomTapRTPTestSupport
import Testing

@Suite("Wire: RTCP (RFC 3550 §6) and RTP/RTCP demultiplexing (RFC 5761 §4)")
struct WireRTCPTests {
    static let ntp: UInt64 = 0xE8A1_2345_8000_0000  // 2023-ish, .5 s

    func senderReport(_ bytes: [UInt8]) -> RTCPSenderReport? {
        withFirstRTCPPacket(bytes) { RTCPSenderReport.parse($0) }
    }

    @Test func aSenderReportParses() {
        let block = RTCPPacketBuilder.ReportBlock(ssrc: 9)
        for blocks in [[], [block], Array(repeating: block, count: 31)] {
            let bytes = RTCPPacketBuilder.senderReport(
                ssrc: 0xCAFE_0001, ntp: Self.ntp, rtpTimestamp: 0xFFFF_FFF0, packetCount: 500, octetCount: 0xFFFF_FFFF,
                blocks: blocks)
            #expect(
                senderReport(bytes)
                    == RTCPSenderReport(
                        ssrc: 0xCAFE_0001, ntpTimestamp: NTPTimestamp(rawValue: Self.ntp), rtpTimestamp: 0xFFFF_FFF0,
                        packetCount: 500, octetCount: 0xFFFF_FFFF, reportCount: blocks.count))
        }
    }

    @Test func aSenderReportShorterThanItsReportBlocksIsRejected() {
        var bytes = RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5)
        bytes[0] |= 2  // RC = 2, no blocks
        #expect(walkRTCP(bytes).error == nil)  // the packet itself is well framed
        #expect(senderReport(bytes) == nil)
        // Sender info cut to 20 bytes (length 5 words).
        let short = RTCPPacketBuilder.packet(type: 200, count: 0, body: Array(repeating: 1, count: 20))
        #expect(senderReport(short) == nil)
    }

    @Test func aSenderReportWithPaddingParses() {
        let bytes = RTCPPacketBuilder.senderReport(
            ssrc: 1, ntp: Self.ntp, rtpTimestamp: 3, packetCount: 4, octetCount: 5, padding: 8)
        let walk = walkRTCP(bytes)
        #expect(walk.error == nil && walk.packets.count == 1 && walk.packets[0].body.count == 24)
        #expect(senderReport(bytes)?.ntpTimestamp.rawValue == Self.ntp)
    }

    @Test func badRTCPPaddingIsRejected() {
        var bytes = RTCPPacketBuilder.senderReport(
            ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5, padding: 4)
        bytes[bytes.count - 1] = 0
        #expect(walkRTCP(bytes).error == .badPadding)
        bytes[bytes.count - 1] = 29  // body is 24 + 4: 29 > 28
        #expect(walkRTCP(bytes).error == .badPadding)
        bytes[bytes.count - 1] = 28  // everything: an empty body, which is not an SR
        #expect(walkRTCP(bytes).error == nil)
        #expect(senderReport(bytes) == nil)
    }

    @Test func byeWithAndWithoutReason() {
        #expect(parseBye(RTCPPacketBuilder.bye(ssrcs: [0xAB])) == ByeSnapshot(ssrcs: [0xAB], reason: nil))
        #expect(
            parseBye(RTCPPacketBuilder.bye(ssrcs: [1, 2, 0xFFFF_FFFF], reason: "call ended"))
                == ByeSnapshot(ssrcs: [1, 2, 0xFFFF_FFFF], reason: "call ended"))
        #expect(parseBye(RTCPPacketBuilder.bye(ssrcs: [], reason: "x")) == ByeSnapshot(ssrcs: [], reason: "x"))
        let long = String(repeating: "é", count: 127)  // 254 bytes
        #expect(parseBye(RTCPPacketBuilder.bye(ssrcs: [5], reason: long))?.reason == long)
        #expect(
            parseBye(RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5))
                == nil)
    }

    @Test func aByeAnnouncingMoreSourcesThanItHoldsIsRejected() {
        var bytes = RTCPPacketBuilder.bye(ssrcs: [1, 2])
        bytes[0] = (bytes[0] & 0xE0) | 3
        #expect(walkRTCP(bytes).error == nil)
        #expect(parseBye(bytes) == nil)
    }

    @Test func aByeReasonPastTheBodyIsRejected() {
        // SC = 1, then a reason length of 10 with 3 bytes left in the body.
        let bytes = RTCPPacketBuilder.packet(type: 203, count: 1, body: wireBE32(7) + [10, 65, 66, 67])
        #expect(parseBye(bytes) == nil)
    }

    @Test func sdesCNAMEsForEveryChunk() throws {
        let names = ["alice@10.0.0.1", "", "b", "{c4f3-uuid}", String(repeating: "x", count: 255)]
        let bytes = RTCPPacketBuilder.cnames(names.enumerated().map { (UInt32($0.offset + 1), $0.element) })
        let r = try #require(parseCNAMEs(bytes))
        #expect(!r.malformed)
        #expect(r.chunks.map(\.0) == [1, 2, 3, 4, 5])
        #expect(r.chunks.map(\.1) == names.map { Optional($0) })
    }

    @Test func sdesOtherItemsAreSkippedAndAChunkWithoutCNAMEHasNone() throws {
        let bytes = RTCPPacketBuilder.sourceDescription(chunks: [
            (ssrc: 10, items: [(type: 2, text: "Alice"), (type: 1, text: "alice@example"), (type: 6, text: "tool")]),
            (ssrc: 11, items: [(type: 2, text: "Bob")]),
            (ssrc: 12, items: []),
        ])
        let r = try #require(parseCNAMEs(bytes))
        #expect(r.chunks.map(\.0) == [10, 11, 12])
        #expect(r.chunks.map(\.1) == ["alice@example", nil, nil])
        #expect(!r.malformed)
    }

    @Test func sdesItemsPastTheBodyStopTheWalk() throws {
        // Chunk 1 fine, chunk 2's CNAME says 40 bytes with 6 left.
        let body = wireBE32(1) + [1, 2, 65, 66, 0, 0, 0, 0] + wireBE32(2) + [1, 40, 65, 66, 67, 68]
        let bytes = RTCPPacketBuilder.packet(type: 202, count: 2, body: body)
        let r = try #require(parseCNAMEs(bytes))
        #expect(r.chunks.count == 1 && r.chunks[0].1 == "AB")
        #expect(r.malformed)
        // SC says 3 chunks, the body has 1.
        let more = RTCPPacketBuilder.packet(type: 202, count: 3, body: wireBE32(1) + [1, 1, 65, 0])
        let m = try #require(parseCNAMEs(more))
        #expect(m.chunks.count == 1 && m.malformed)
        // An item list without its terminating null.
        let open = RTCPPacketBuilder.packet(type: 202, count: 1, body: wireBE32(1) + [1, 2, 65, 66])
        #expect(try #require(parseCNAMEs(open)).malformed)
    }

    // MARK: - Compound packets

    @Test func aCompoundPacketIsWalkedInOrder() {
        let sr = RTCPPacketBuilder.senderReport(
            ssrc: 1, ntp: Self.ntp, rtpTimestamp: 3, packetCount: 4, octetCount: 5,
            blocks: [.init(ssrc: 2)])
        let sdes = RTCPPacketBuilder.cnames([(1, "alice")])
        let bye = RTCPPacketBuilder.bye(ssrcs: [1], reason: "bye")
        let app = RTCPPacketBuilder.packet(type: 204, count: 3, body: wireBE32(1) + Array("ROOM".utf8))
        let bytes = sr + sdes + app + bye
        let walk = walkRTCP(bytes)
        #expect(walk.error == nil)
        #expect(walk.packets.map(\.packetType) == [200, 202, 204, 203])
        let a = sr.count
        let b = a + sdes.count
        let c = b + app.count
        let expected: [Range<Int>] = [0..<a, a..<b, b..<c, c..<bytes.count]
        #expect(walk.packets.map(\.range) == expected)
        #expect(c + bye.count == bytes.count)
        #expect(walk.packets[2].count == 3)
    }

    @Test func aBadLengthInTheMiddleStopsTheWalkThere() {
        let sr = RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5)
        let sdes = RTCPPacketBuilder.cnames([(1, "alice")])
        var bad = RTCPPacketBuilder.bye(ssrcs: [1])
        bad[2] = 0x01  // length 256 words
        let bytes = sr + bad + sdes
        let walk = walkRTCP(bytes)
        #expect(walk.packets.map(\.packetType) == [200])
        #expect(walk.error == .lengthOverflow)
        #expect(bytes.withUnsafeBytes { RTCPCompoundPacket($0).error } == .lengthOverflow)
    }

    @Test func aBadVersionOrTrailingBytesStopTheWalk() {
        let rr = RTCPPacketBuilder.receiverReport(ssrc: 1)
        var v1 = RTCPPacketBuilder.bye(ssrcs: [1])
        v1[0] = (v1[0] & 0x3F) | 0x40
        #expect(walkRTCP(rr + v1).error == .badVersion)
        #expect(walkRTCP(rr + v1).packets.count == 1)
        #expect(walkRTCP(rr + [0x81, 203]).error == .tooShort)
        #expect(walkRTCP([]).error == .tooShort)
        #expect(walkRTCP(rr).error == nil)
        #expect(walkRTCP(rr).packets.map(\.body) == [wireBE32(1)])
    }

    @Test func everyTruncationOfACompoundPacketIsSafe() {
        let bytes =
            RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5)
            + RTCPPacketBuilder.cnames([(1, "alice@host")]) + RTCPPacketBuilder.bye(ssrcs: [1], reason: "done")
        for length in 0...bytes.count {
            let walk = walkRTCP(Array(bytes.prefix(length)))
            let covered = walk.packets.last?.range.upperBound ?? 0
            #expect((walk.error == nil) == (covered == length && length > 0), "length \(length)")
        }
    }

    // MARK: - Demultiplexing (RFC 5761 §4)

    @Test func rtcpAndRTPAreToldApart() {
        let sr = RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5)
        let rr = RTCPPacketBuilder.receiverReport(ssrc: 1)
        let bye = RTCPPacketBuilder.bye(ssrcs: [1])
        let sdes = RTCPPacketBuilder.cnames([(1, "a")])
        for rtcp in [sr, rr, bye, sdes, sr + sdes] {
            #expect(rtcp.withUnsafeBytes { RTPDemux.isRTCP($0) })
        }
        for pt: UInt8 in [0, 8, 96, 97, 111, 127] {
            for marker in [false, true] {
                let rtp = RTPPacketBuilder(payloadType: pt, marker: marker, payload: [0xFC]).bytes()
                #expect(!rtp.withUnsafeBytes { RTPDemux.isRTCP($0) }, "PT \(pt) marker \(marker)")
            }
        }
    }

    @Test func theDemuxRuleIsExactlyRFC5761() {
        for first in 0...255 {
            for second in 0...255 {
                let expected = first >> 6 == 2 && (192...223).contains(second)
                #expect(RTPDemux.isRTCP(firstByte: UInt8(first), secondByte: UInt8(second)) == expected)
            }
        }
        #expect(![UInt8]().withUnsafeBytes { RTPDemux.isRTCP($0) })
        #expect(![UInt8(0x80)].withUnsafeBytes { RTPDemux.isRTCP($0) })
    }
}
