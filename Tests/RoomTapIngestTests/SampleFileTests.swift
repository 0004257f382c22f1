import RoomTapCore
import RoomTapIngest
import RoomTapMediaTestSupport
import Testing

@Suite("The sample room's files (Samples/room)")
struct SampleFileTests {
    @Test(arguments: [("alice", Int64(432_000)), ("bob", 384_000), ("carol", 216_000)])
    func inspectReportsTheirLengthAndHeaders(_ name: String, _ samples: Int64) throws {
        let info = try OggOpusFileInfo.inspect(path: sampleFile(name))
        #expect(info.durationSamples == samples)
        #expect(info.durationSeconds == Double(samples) / 48_000)
        #expect(info.head.channelCount == 1)
        #expect(info.head.preSkip == 312)
        #expect(info.head.mappingFamily == 0)
        #expect(info.head.outputGainQ8 == 0)
        #expect(info.tags?.value(forKey: "title") == name)
        #expect(info.tags?.vendor.hasPrefix("libopus") == true)
        #expect(info.corruptPages == 0)
        #expect(!info.isTruncated)
        #expect(info.audioPackets == Int((samples + 312 + 959) / 960))
    }

    @Test(arguments: ["alice", "bob", "carol"], [1, 2])
    func decodingEqualsLibopusOverTheFilesPackets(_ name: String, _ channels: Int) throws {
        let dump = try #require(OggPacketDump(path: sampleFile(name)))
        let total = Int(dump.lastGranule) - dump.preSkip
        let reference = referenceDecode(
            packets: dump.audioPackets, channels: channels, preSkip: dump.preSkip, totalSamples: total)
        #expect(reference.count == total * channels)
        let source = try OggOpusFileSource(path: sampleFile(name), channels: channels)
        let r = renderAll(source)
        #expect(r.frames == (total + 479) / 480)
        #expect(firstDifference(r.samples.prefix(total * channels), reference[...]) == nil)
        #expect(r.samples.count == total * channels, "the lengths are whole frames")
    }
}
