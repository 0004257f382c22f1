import RoomTapIngest
import RoomTapMediaTestSupport
import Testing

@Suite("OpusHead and OpusTags parsing (RFC 7845 §5)")
struct OpusHeaderTests {
    @Test func parsesAMonoFamilyZeroHeader() throws {
        let bytes = OpusHeaderBytes.head(channels: 1, preSkip: 312, inputSampleRate: 44_100, gainQ8: -512)
        let head = try #require(bytes.withUnsafeBytes { OpusHead.parse($0) })
        #expect(head.version == 1)
        #expect(head.channelCount == 1)
        #expect(head.preSkip == 312)
        #expect(head.inputSampleRate == 44_100)
        #expect(head.outputGainQ8 == -512)
        #expect(head.mappingFamily == 0)
        #expect(head.isDecodableWithSingleStreamDecoder)
    }

    @Test func parsesAFamilyOneStereoHeaderWithItsMappingTable() throws {
        let bytes = OpusHeaderBytes.head(
            channels: 2, preSkip: 3840, mappingFamily: 1, streams: 1, coupled: 1, mapping: [0, 1])
        let head = try #require(bytes.withUnsafeBytes { OpusHead.parse($0) })
        #expect(head.channelMapping == [0, 1])
        #expect(head.streamCount == 1 && head.coupledStreamCount == 1)
        #expect(head.isDecodableWithSingleStreamDecoder)
    }

    @Test func acceptsMinorVersionsAndTrailingBytes() throws {
        let bytes = OpusHeaderBytes.head(version: 0x0F, channels: 2, preSkip: 0) + [1, 2, 3]
        let head = try #require(bytes.withUnsafeBytes { OpusHead.parse($0) })
        #expect(head.version == 0x0F && head.channelCount == 2)
    }

    @Test(arguments: [
        ("major version 1", OpusHeaderBytes.head(version: 0x10, channels: 1, preSkip: 312)),
        ("zero channels", OpusHeaderBytes.head(channels: 0, preSkip: 312)),
        ("family 0 with 3 channels", OpusHeaderBytes.head(channels: 3, preSkip: 312)),
        ("family 1 with 9 channels", OpusHeaderBytes.head(channels: 9, preSkip: 312, mappingFamily: 1)),
        ("mapping past the streams", OpusHeaderBytes.head(channels: 2, preSkip: 0, mappingFamily: 1, mapping: [0, 7])),
        ("zero streams", OpusHeaderBytes.head(channels: 1, preSkip: 0, mappingFamily: 1, streams: 0, coupled: 0)),
        (
            "more coupled than streams",
            OpusHeaderBytes.head(channels: 2, preSkip: 0, mappingFamily: 1, streams: 1, coupled: 2)
        ),
        ("18 bytes", Array(OpusHeaderBytes.head(channels: 1, preSkip: 312).prefix(18))),
        ("table cut short", Array(OpusHeaderBytes.head(channels: 2, preSkip: 0, mappingFamily: 1).dropLast())),
        ("Vorbis", Array("\u{01}vorbis\0\0\0\0\u{01}\u{44}\u{AC}\0\0".utf8)),
        ("empty", []),
    ])
    func rejectsInvalidHeaders(_ name: String, _ bytes: [UInt8]) {
        #expect(bytes.withUnsafeBytes { OpusHead.parse($0) } == nil, "\(name)")
    }

    @Test func family255IsValidButNotForASingleStreamDecoder() throws {
        let bytes = OpusHeaderBytes.head(channels: 6, preSkip: 312, mappingFamily: 255, streams: 6, coupled: 0)
        let head = try #require(bytes.withUnsafeBytes { OpusHead.parse($0) })
        #expect(head.mappingFamily == 255)
        #expect(!head.isDecodableWithSingleStreamDecoder)
    }

    @Test func parsesTags() throws {
        let bytes = OpusHeaderBytes.tags(vendor: "libopus 1.3.1", comments: ["TITLE=alice", "artist=Alice", "EMPTY="])
        let tags = try #require(bytes.withUnsafeBytes { OpusTags.parse($0) })
        #expect(tags.vendor == "libopus 1.3.1")
        #expect(tags.comments == ["TITLE=alice", "artist=Alice", "EMPTY="])
        #expect(tags.value(forKey: "ARTIST") == "Alice")
        #expect(tags.value(forKey: "empty") == "")
        #expect(tags.value(forKey: "album") == nil)
    }

    @Test func rejectsTagsWhoseLengthsPointPastTheEnd() {
        var bytes = OpusHeaderBytes.tags(vendor: "v", comments: ["A=1"])
        #expect(bytes.withUnsafeBytes { OpusTags.parse($0) } != nil)
        for cut in 0..<bytes.count {
            #expect(Array(bytes.prefix(cut)).withUnsafeBytes { OpusTags.parse($0) } == nil, "cut at \(cut)")
        }
        bytes[bytes.count - 8] = 0xFF  // comment count 0xFF000001 with 7 bytes left
        #expect(bytes.withUnsafeBytes { OpusTags.parse($0) } == nil)
        let huge = Array("OpusTags".utf8) + [0, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0x7F]
        #expect(huge.withUnsafeBytes { OpusTags.parse($0) } == nil)
    }
}
