import RoomTapCore
import RoomTapIngest
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

/// One synthetic file and how to decode it.
struct DecodeCase: Sendable, CustomTestStringConvertible {
    var fileChannels: Int
    var decodeChannels: Int
    var frameMilliseconds: Double
    var gainQ8: Int16 = 0
    var samples = 72_017  // 1.5 s and a bit: the end trim cuts inside a packet

    var testDescription: String {
        "\(fileChannels)ch file → \(decodeChannels)ch, \(frameMilliseconds) ms frames, gain \(gainQ8)/256 dB"
    }

    static let all: [DecodeCase] = {
        var cases: [DecodeCase] = []
        for file in [1, 2] {
            for decode in [1, 2] {
                for ms in [10.0, 20.0, 60.0] {
                    cases.append(DecodeCase(fileChannels: file, decodeChannels: decode, frameMilliseconds: ms))
                }
            }
        }
        cases.append(DecodeCase(fileChannels: 1, decodeChannels: 1, frameMilliseconds: 20, gainQ8: -1536))
        cases.append(DecodeCase(fileChannels: 2, decodeChannels: 2, frameMilliseconds: 40, gainQ8: 512))
        cases.append(DecodeCase(fileChannels: 2, decodeChannels: 1, frameMilliseconds: 10, gainQ8: -300))
        return cases
    }()
}

@Suite("Decoding is exactly libopus's own decode")
struct DecodeExactnessTests {
    @Test(arguments: DecodeCase.all)
    func renderedFramesEqualTheReferenceDecode(_ c: DecodeCase) throws {
        let scratch = Scratch()
        let pcm = TestSignal.speechLike(samples: c.samples, channels: c.fileChannels)
        let writer = OggOpusWriter(
            channels: c.fileChannels, frameMilliseconds: c.frameMilliseconds, bitrate: 48_000, outputGainQ8: c.gainQ8,
            packetsPerPage: 7)
        let file = writer.encode(pcm)
        let path = try scratch.write(file.bytes)
        let reference = referenceDecode(
            packets: file.packets, channels: c.decodeChannels, preSkip: file.preSkip, totalSamples: c.samples,
            gainQ8: Int(c.gainQ8))
        #expect(reference.count == c.samples * c.decodeChannels)

        let source = try OggOpusFileSource(path: path, channels: c.decodeChannels)
        #expect(source.info.durationSamples == Int64(c.samples))
        #expect(source.info.head.outputGainQ8 == c.gainQ8)
        #expect(source.info.head.channelCount == c.fileChannels)
        #expect(!source.info.isTruncated && source.info.corruptPages == 0)
        let r = renderAll(source, extra: 2)
        let frames = (c.samples + 479) / 480
        #expect(r.finishedAfterFrame == frames - 1)
        let played = r.samples.prefix(c.samples * c.decodeChannels)
        #expect(firstDifference(played, reference[...]) == nil)
        #expect(played.count == reference.count)
        #expect(r.samples[(c.samples * c.decodeChannels)...].allSatisfy { $0 == 0 }, "silence after the end")
        #expect(r.statuses.prefix(frames).allSatisfy { $0 == .normal })
        #expect(r.statuses.dropFirst(frames).allSatisfy { $0 == .silence })
        #expect(source.concealedSamples == 0 && source.decodeErrors == 0 && source.holes == 0)
    }

    @Test func aGainChangesTheOutput() throws {
        let pcm = TestSignal.sine(samples: 9_600)
        let plain = OggOpusWriter().encode(pcm)
        let quiet = OggOpusWriter(outputGainQ8: -6 * 256).encode(pcm)
        let a = try decodeInMemory(plain.bytes).samples
        let b = try decodeInMemory(quiet.bytes).samples
        let peakA = a.map { abs(Int($0)) }.max() ?? 0
        let peakB = b.map { abs(Int($0)) }.max() ?? 0
        #expect(Double(peakB) / Double(peakA) > 0.45 && Double(peakB) / Double(peakA) < 0.56, "-6 dB")
    }

    @Test func aStreamStartingAtANonzeroGranuleStartsAtItsFirstSample() throws {
        let pcm = TestSignal.speechLike(samples: 48_000)
        let writer = OggOpusWriter(startGranule: 48_000 * 3600)
        let file = writer.encode(pcm)
        let info = try file.bytes.withUnsafeBytes { (raw) throws(IngestError) in
            try OggOpusFileInfo.inspect(bytes: raw, name: "live")
        }
        #expect(info.durationSamples == 48_000)
        let decoded = try decodeInMemory(file.bytes).samples
        let reference = referenceDecode(packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: 48_000)
        #expect(decoded == reference)
    }

    @Test func mappingFamilyOneStereoDecodesLikeFamilyZero() throws {
        let pcm = TestSignal.speechLike(samples: 24_000, channels: 2)
        let writer = OggOpusWriter(channels: 2)
        let (packets, preSkip) = writer.encodePackets(pcm)
        let head = OpusHeaderBytes.head(channels: 2, preSkip: preSkip, mappingFamily: 1, streams: 1, coupled: 1)
        let file = writer.mux(packets: packets, preSkip: preSkip, totalSamples: 24_000, head: head)
        let decoded = try decodeInMemory(file.bytes, channels: 2).samples
        #expect(decoded == referenceDecode(packets: packets, channels: 2, preSkip: preSkip, totalSamples: 24_000))
    }
}
