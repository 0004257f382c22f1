import RoomTapRTP
import RoomTapRTPTestSupport
import Testing

@Suite("Wire: RTP packet (RFC 3550 §5.1)")
struct WireRTPPacketTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var marker = false
        var payloadType: UInt8 = 111
        var sequenceNumber: UInt16 = 1
        var timestamp: UInt32 = 960
        var ssrc: UInt32 = 0xDEAD_BEEF
        var csrcs: [UInt32] = []
        var ext: RTPPacketBuilder.HeaderExtension?
        var payload: [UInt8] = [0xFC, 1, 2, 3]
        var padding = 0
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "plain Opus"),
        Case(name: "marker, PT 0", marker: true, payloadType: 0),
        Case(name: "PT 127, seq and ts at max", payloadType: 127, sequenceNumber: 0xFFFF, timestamp: 0xFFFF_FFFF),
        Case(name: "seq 0, ts 0, ssrc 0", sequenceNumber: 0, timestamp: 0, ssrc: 0),
        Case(name: "ssrc 0xFFFFFFFF", ssrc: 0xFFFF_FFFF),
        Case(name: "one CSRC", csrcs: [7]),
        Case(name: "15 CSRCs", csrcs: (1...15).map { UInt32($0) * 0x0101_0101 }),
        Case(name: "empty payload", payload: []),
        Case(name: "empty payload with padding", payload: [], padding: 4),
        Case(name: "padding 1 (just the count)", padding: 1),
        Case(name: "padding 255", padding: 255),
        Case(name: "raw extension, 0 words", ext: .raw(profile: 0x1234, data: [])),
        Case(name: "raw extension, 2 words", ext: .raw(profile: 0xABCD, data: [1, 2, 3, 4, 5, 6, 7, 8])),
        Case(name: "one-byte extension", ext: .oneByte([(id: 1, data: [0x9E])])),
        Case(
            name: "everything", marker: true, payloadType: 96, sequenceNumber: 0xFFFF, timestamp: 0xFFFF_FFFF,
            csrcs: [1, 2, 3], ext: .twoByte([(id: 200, data: [1, 2, 3])], appBits: 5), payload: [0x78, 9], padding: 7),
    ]

    @Test(arguments: cases)
    func builtPacketsRoundTrip(_ c: Case) throws {
        var b = RTPPacketBuilder(
            payloadType: c.payloadType, sequenceNumber: c.sequenceNumber, timestamp: c.timestamp, ssrc: c.ssrc,
            marker: c.marker, payload: c.payload)
        b.csrcs = c.csrcs
        b.extension = c.ext
        b.padding = c.padding
        let bytes = b.bytes()
        let p = try parseRTP(bytes).get()
        #expect(p.marker == c.marker)
        #expect(p.payloadType == c.payloadType)
        #expect(p.sequenceNumber == c.sequenceNumber)
        #expect(p.timestamp == c.timestamp)
        #expect(p.ssrc == c.ssrc)
        #expect(p.csrcs == c.csrcs)
        #expect(p.hasExtension == (c.ext != nil))
        #expect(p.payload == c.payload)
        #expect(p.payloadRange.lowerBound == b.payloadOffset)
        #expect(p.hasPadding == (c.padding > 0))
        #expect(p.paddingCount == c.padding)
        #expect(p.payloadRange.upperBound + p.paddingCount == bytes.count)
        if case .raw(let profile, let data, _) = c.ext {
            #expect(p.extensionProfile == profile)
            #expect(p.extensionData == data)
            #expect(p.elements.isEmpty)  // not an RFC 8285 profile
        }
    }

    /// Every header field at its extremes, swept together (2 × 4 × 4 × 4 × 3 packets).
    @Test func headerFieldSweep() throws {
        var checked = 0
        for marker in [false, true] {
            for pt: UInt8 in [0, 96, 111, 127] {
                for seq: UInt16 in [0, 1, 0x7FFF, 0xFFFF] {
                    for ts: UInt32 in [0, 1, 0x8000_0000, 0xFFFF_FFFF] {
                        for ssrc: UInt32 in [0, 0x8000_0001, 0xFFFF_FFFF] {
                            let b = RTPPacketBuilder(
                                payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc, marker: marker,
                                payload: [0xF8])
                            let p = try parseRTP(b.bytes()).get()
                            #expect(
                                p.marker == marker && p.payloadType == pt && p.sequenceNumber == seq
                                    && p.timestamp == ts && p.ssrc == ssrc && p.payload == [0xF8])
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 384)
    }

    /// RFC 3550 §5.1 layout written out by hand, independent of the builder.
    @Test func aHandWrittenPacketParses() throws {
        let bytes: [UInt8] =
            [0b1011_0010, 0x80 | 111] + wireBE16(0x1234) + wireBE32(0x0102_0304) + wireBE32(0xCAFE_BABE)
            + wireBE32(0x1111_1111) + wireBE32(0x2222_2222)  // CC = 2
            + wireBE16(0xBEDE) + wireBE16(1) + [0x10, 0xAA, 0x00, 0x00]  // X: one word
            + [0xFC, 0xFF, 0xFE]  // payload
            + [0, 0, 3]  // P: 3 bytes of padding
        let p = try parseRTP(bytes).get()
        #expect(p.hasPadding && p.hasExtension && p.marker)
        #expect(p.payloadType == 111 && p.sequenceNumber == 0x1234 && p.timestamp == 0x0102_0304)
        #expect(p.ssrc == 0xCAFE_BABE)
        #expect(p.csrcs == [0x1111_1111, 0x2222_2222])
        #expect(p.extensionProfile == 0xBEDE)
        #expect(p.elements == [.init(id: 1, data: [0xAA])])
        #expect(p.payloadRange == 28..<31)  // 12 + 2 CSRCs + 4 + one word
        #expect(p.payload == [0xFC, 0xFF, 0xFE])
        #expect(p.paddingCount == 3)
        bytes.withUnsafeBytes { raw in
            let packet = RTPPacket.parse(raw).packet
            #expect(packet?.version == 2)
            #expect(packet?.csrc(at: 2) == nil)
            #expect(packet?.csrc(at: -1) == nil)
        }
    }

    // MARK: - Hostile packets

    @Test func everyTruncationOfAValidPacketIsInvalidOrShorter() {
        var b = RTPPacketBuilder(payload: [1, 2, 3, 4, 5, 6, 7, 8])
        b.csrcs = [1, 2, 3]
        b.extension = .oneByte([(id: 3, data: [1, 2, 3, 4])])
        b.padding = 4
        let full = b.bytes()
        let headerEnd = b.payloadOffset
        for length in 0..<full.count {
            let cut = Array(full.prefix(length))
            let result = parseRTP(cut)
            switch length {
            case 0..<12:
                #expect(rtpError(cut) == .tooShort, "length \(length)")
            case 12..<24:
                #expect(rtpError(cut) == .csrcOverflow, "length \(length)")
            case 24..<headerEnd:
                #expect(rtpError(cut) == .extensionOverflow, "length \(length)")
            default:
                // The last byte is now a payload byte read as a padding count: 1...4 bytes fit.
                if case .success(let p) = result {
                    #expect(p.paddingCount >= 1 && p.payloadRange.upperBound + p.paddingCount == length)
                } else {
                    #expect(rtpError(cut) == .badPadding, "length \(length)")
                }
            }
        }
        #expect(rtpError(full) == nil)
    }

    @Test(arguments: [UInt8(0), 1, 3])
    func versionsOtherThanTwoAreRejected(_ version: UInt8) {
        var b = RTPPacketBuilder(payload: [0xFC])
        b.version = version
        #expect(rtpError(b.bytes()) == .badVersion)
    }

    @Test func aCSRCCountOf15WithAShortPacketIsRejected() {
        var b = RTPPacketBuilder(payload: [])
        b.csrcCountOverride = 15
        b.csrcs = [1, 2, 3]  // 12 bytes of the 60 announced
        #expect(rtpError(b.bytes()) == .csrcOverflow)
        b.csrcs = (0..<14).map { UInt32($0) }  // one short
        #expect(rtpError(b.bytes()) == .csrcOverflow)
        b.csrcs = (0..<15).map { UInt32($0) }
        #expect(rtpError(b.bytes()) == nil)
    }

    @Test(arguments: [UInt16(1), 2, 100, 0xFFFF])
    func anExtensionLengthPastTheEndIsRejected(_ words: UInt16) {
        var b = RTPPacketBuilder(payload: [])
        b.extension = .raw(profile: 0xBEDE, data: [], lengthWords: words)
        #expect(rtpError(b.bytes()) == .extensionOverflow)
        // The same length is fine when the bytes are there (as payload, which the extension takes).
        if words < 100 {
            b.payload = [UInt8](repeating: 0, count: Int(words) * 4)
            #expect(rtpError(b.bytes()) == nil)
        }
    }

    @Test func anExtensionHeaderCutShortIsRejected() {
        var b = RTPPacketBuilder(payload: [])
        b.extension = .raw(profile: 0xBEDE, data: [])
        let bytes = b.bytes()
        #expect(bytes.count == 16)
        for cut in 12..<16 { #expect(rtpError(Array(bytes.prefix(cut))) == .extensionOverflow) }
    }

    @Test func aPaddingCountOfZeroIsRejected() {
        var b = RTPPacketBuilder(payload: [1, 2, 3])
        b.padding = 4
        b.paddingCountOverride = 0
        #expect(rtpError(b.bytes()) == .badPadding)
    }

    @Test func paddingLongerThanThePayloadIsRejected() {
        var b = RTPPacketBuilder(payload: [1, 2, 3])
        b.padding = 2
        b.paddingCountOverride = 6  // 3 payload + 2 padding bytes after the header: 6 > 5
        #expect(rtpError(b.bytes()) == .badPadding)
        b.paddingCountOverride = 5  // exactly everything after the header: an empty payload
        let p = try? parseRTP(b.bytes()).get()
        #expect(p?.payload == [] && p?.paddingCount == 5)
        b.paddingCountOverride = 255
        #expect(rtpError(b.bytes()) == .badPadding)
    }

    @Test func paddingMayNotEatTheExtension() {
        var b = RTPPacketBuilder(payload: [])
        b.extension = .raw(profile: 0xBEDE, data: [0x10, 1, 0, 0])
        b.paddingCountOverride = 2  // P set, one byte appended; 2 would reach into the extension
        #expect(rtpError(b.bytes()) == .badPadding)
        b.paddingCountOverride = 1
        #expect(rtpError(b.bytes()) == nil)
    }

    @Test func aHeaderWithPaddingSetAndNoBytesAfterItIsRejected() {
        var bytes = RTPPacketBuilder(payload: []).bytes()
        bytes[0] |= 0x20
        #expect(rtpError(bytes) == .badPadding)
    }

    @Test func parseErrorsCanIndexACounterArray() {
        #expect(RTPParseError.allCases.map(\.rawValue) == Array(0..<UInt8(RTPParseError.allCases.count)))
        #expect(RTCPParseError.allCases.map(\.rawValue) == Array(0..<UInt8(RTCPParseError.allCases.count)))
    }
}
