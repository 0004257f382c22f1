import RoomTapRTP
import RoomTapRTPTestSupport
import Testing

@Suite("Wire: RTP header extensions (RFC 8285) and audio level (RFC 6464)")
struct WireHeaderExtensionTests {
    typealias Element = RTPSnapshot.Element

    func elements(_ ext: RTPPacketBuilder.HeaderExtension) throws -> (elements: [Element], wellFormed: Bool) {
        var b = RTPPacketBuilder(payload: [0xFC])
        b.extension = ext
        let p = try parseRTP(b.bytes()).get()
        #expect(p.payload == [0xFC])
        return (p.elements, p.elementsWellFormed)
    }

    @Test func oneByteElementsOfEverySizeRoundTrip() throws {
        for size in 1...16 {
            for id in UInt8(1)...14 {
                let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ Int(id)) }
                let r = try elements(.oneByte([(id: id, data: data), (id: 14 - id + 1, data: [0x42])]))
                #expect(r.elements == [Element(id: id, data: data), Element(id: 15 - id, data: [0x42])])
                #expect(r.wellFormed)
            }
        }
    }

    @Test func twoByteElementsIncludingEmptyAndLongOnesRoundTrip() throws {
        for size in [0, 1, 2, 15, 16, 17, 255] {
            for id: UInt8 in [1, 14, 15, 16, 128, 255] {
                let data = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
                let r = try elements(.twoByte([(id: id, data: data), (id: 7, data: [])], appBits: 0xF))
                #expect(r.elements == [Element(id: id, data: data), Element(id: 7, data: [])])
                #expect(r.wellFormed)
            }
        }
    }

    @Test func paddingBytesBetweenElementsAreSkipped() throws {
        let one = try elements(
            .oneByte([(id: 1, data: [1]), (id: 2, data: [2, 2]), (id: 3, data: [3])], paddingBetween: 3))
        #expect(one.elements == [Element(id: 1, data: [1]), Element(id: 2, data: [2, 2]), Element(id: 3, data: [3])])
        let two = try elements(.twoByte([(id: 1, data: [1]), (id: 200, data: [2, 2])], paddingBetween: 5))
        #expect(two.elements == [Element(id: 1, data: [1]), Element(id: 200, data: [2, 2])])
    }

    @Test func aZeroIDByteWithLengthBitsIsOnePaddingByte() throws {
        // 0x05 has ID 0: one byte of padding whatever its length bits say (libwebrtc's reading).
        let r = try elements(.raw(profile: 0xBEDE, data: [0x05, 0x10, 0xAB, 0x00]))
        #expect(r.elements == [Element(id: 1, data: [0xAB])])
    }

    @Test func id15EndsAOneByteExtension() throws {
        let r = try elements(.raw(profile: 0xBEDE, data: [0x10, 0xAA, 0xF3, 0x20, 0xBB, 0, 0, 0]))
        #expect(r.elements == [Element(id: 1, data: [0xAA])])
        #expect(r.wellFormed)
    }

    @Test func aOneByteLengthPastTheEndStopsCleanly() throws {
        // ID 2, L = 7 (8 bytes) but only 2 remain in the one-word extension.
        let r = try elements(.raw(profile: 0xBEDE, data: [0x10, 0xAA, 0x27, 0x01]))
        #expect(r.elements == [Element(id: 1, data: [0xAA])])
        #expect(!r.wellFormed)
    }

    @Test func aTwoByteLengthPastTheEndStopsCleanly() throws {
        let r = try elements(.raw(profile: 0x1000, data: [0x05, 0x01, 0xAA, 0x06, 0xFF, 0x00, 0x00, 0x00]))
        #expect(r.elements == [Element(id: 5, data: [0xAA])])
        #expect(!r.wellFormed)
        // An ID in the very last byte has no length byte.
        let s = try elements(.raw(profile: 0x1000, data: [0x00, 0x00, 0x00, 0x09]))
        #expect(s.elements.isEmpty && !s.wellFormed)
    }

    @Test func otherProfilesHaveNoElements() throws {
        for profile: UInt16 in [0x0000, 0xBEDF, 0x2000, 0x0100, 0xFFFF] {
            let r = try elements(.raw(profile: profile, data: [0x10, 0xAA, 0, 0]))
            #expect(r.elements.isEmpty && r.wellFormed, "profile \(profile)")
        }
        for appBits: UInt16 in 0...15 {
            let r = try elements(.raw(profile: 0x1000 | appBits, data: [0x01, 0x01, 0xAA, 0]))
            #expect(r.elements == [Element(id: 1, data: [0xAA])], "appbits \(appBits)")
        }
    }

    @Test func noExtensionMeansNoElements() throws {
        let p = try parseRTP(RTPPacketBuilder(payload: [1]).bytes()).get()
        #expect(p.elements.isEmpty && p.elementsWellFormed && p.extensionProfile == nil && p.extensionData == nil)
    }

    // MARK: - RFC 6464 audio level

    func level(_ ext: RTPPacketBuilder.HeaderExtension, id: UInt8) -> RTPAudioLevel? {
        var b = RTPPacketBuilder(payload: [0xFC])
        b.extension = ext
        return b.bytes().withUnsafeBytes { RTPPacket.parse($0).packet?.extensionElements.audioLevel(id: id) }
    }

    @Test func theAudioLevelIsReadFromTheConfiguredID() {
        // A browser's packet: abs-send-time (id 3, 3 bytes), ssrc-audio-level (id 1), mid (id 4).
        let ext = RTPPacketBuilder.HeaderExtension.oneByte([
            (id: 3, data: [0x12, 0x34, 0x56]), (id: 1, data: [0x80 | 42]), (id: 4, data: Array("0".utf8)),
        ])
        #expect(level(ext, id: 1) == RTPAudioLevel(byte: 0xAA))
        #expect(level(ext, id: 1)?.voiceActivity == true)
        #expect(level(ext, id: 1)?.level == 42)
        #expect(level(ext, id: 1)?.dBov == -42)
        #expect(level(ext, id: 2) == nil)  // not present
        #expect(level(ext, id: 0) == nil)  // padding never matches
        #expect(level(ext, id: 15) == nil)
    }

    @Test(arguments: [UInt8(0x00), 0x7F, 0x80, 0xFF, 0x1E])
    func everyLevelByteDecodes(_ byte: UInt8) {
        let one = level(.oneByte([(id: 5, data: [byte])]), id: 5)
        let two = level(.twoByte([(id: 5, data: [byte])]), id: 5)
        #expect(one == two)
        #expect(one?.voiceActivity == (byte >= 0x80))
        #expect(one?.level == byte & 0x7F)
        #expect(one.map { (-127...0).contains($0.dBov) } == true)
    }

    @Test func anEmptyTwoByteElementHasNoLevel() {
        #expect(level(.twoByte([(id: 5, data: [])]), id: 5) == nil)
    }
}
