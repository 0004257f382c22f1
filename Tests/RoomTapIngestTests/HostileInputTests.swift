import Foundation
import RoomTapCore
import RoomTapIngest
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

@Suite("Hostile and damaged input")
struct HostileInputTests {
    // MARK: - Files that are refused before any output

    func reason(_ bytes: [UInt8]) throws -> IngestError? {
        let scratch = Scratch()
        let path = try scratch.write(bytes, as: "bob.opus")
        do {
            _ = try OggOpusFileInfo.inspect(path: path)
            return nil
        } catch {
            #expect(error.path == path)
            #expect(error.description == "\(path): \(error.message)")
            #expect(!error.message.contains("\n"))
            return error
        }
    }

    @Test func aMissingFileIsNotFound() {
        #expect(throws: IngestError.self) { try OggOpusFileInfo.inspect(path: "/nonexistent/roomtap/x.opus") }
        do {
            _ = try OggOpusFileSource(path: "/nonexistent/roomtap/x.opus")
        } catch {
            #expect(error.reason == .fileNotFound)
            #expect(error.description == "/nonexistent/roomtap/x.opus: no such file; check the path")
        }
    }

    @Test func aDirectoryIsUnreadable() {
        let scratch = Scratch()
        do {
            _ = try OggOpusFileInfo.inspect(path: scratch.directory)
            Issue.record("a directory was accepted")
        } catch {
            #expect(error.reason == .unreadable)
            #expect(error.message.contains("directory"))
        }
    }

    @Test func anEmptyFileIsNotOgg() throws {
        let error = try #require(try reason([]))
        #expect(error.reason == .notOgg)
        #expect(error.message.contains("empty"))
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func randomBytesAreNotOgg(_ seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
        if bytes.starts(with: Array("OggS".utf8)) { bytes[0] = 0 }
        let error = try #require(try reason(bytes))
        #expect(error.reason == .notOgg)
        #expect(
            error.message == "not an Ogg file (no OggS capture pattern at the start); give an Ogg Opus file (.opus)")
    }

    @Test func randomBytesAfterOggSAreRefusedWithoutACrash() throws {
        for seed in UInt64(1)...50 {
            var rng = SplitMix64(seed: seed)
            let bytes =
                Array("OggS".utf8)
                + (0..<Int.random(in: 0...3000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let error = try #require(try reason(bytes))
            #expect([.truncated, .badHeader, .notOpus].contains(error.reason), "seed \(seed): \(error)")
        }
    }

    @Test func oggVorbisIsOggButNotOpus() throws {
        let vorbis = OggStreamBuilder.singleStream(packets: [
            Array("\u{01}vorbis".utf8) + [0, 0, 0, 0, 1, 0x80, 0xBB, 0, 0], Array("\u{03}vorbis".utf8) + [0, 0],
            [5, 6, 7],
        ])
        let error = try #require(try reason(vorbis))
        #expect(error.reason == .notOpus)
        #expect(
            error.message
                == "an Ogg file but not Opus (first packet is not OpusHead); roomtap reads Ogg Opus (RFC 7845)")
    }

    /// OpusHead `head`, OpusTags and one audio packet, each on a page of its own.
    func headerOnly(head: [UInt8]) -> [UInt8] {
        let packets = [head, OpusHeaderBytes.tags(), [0xF8, 0xFF, 0xFE]]
        return OggPageBuilder().build(
            packets.enumerated().map {
                .init($0.element, granule: $0.offset == 2 ? 1272 : 0, flushAfter: true, endOfStream: $0.offset == 2)
            })
    }

    @Test(arguments: [
        (
            "version 16", OpusHeaderBytes.head(version: 16, channels: 1, preSkip: 312), IngestError.Reason.badHeader,
            "version"
        ),
        ("0 channels", OpusHeaderBytes.head(channels: 0, preSkip: 312), .badHeader, "0 channels"),
        ("3 channels, family 0", OpusHeaderBytes.head(channels: 3, preSkip: 312), .badHeader, "3 channels"),
        (
            "mapping 255", OpusHeaderBytes.head(channels: 2, preSkip: 312, mappingFamily: 255, streams: 2, coupled: 0),
            .unsupported, "family 255"
        ),
        (
            "5.1 surround",
            OpusHeaderBytes.head(
                channels: 6, preSkip: 312, mappingFamily: 1, streams: 4, coupled: 2, mapping: [0, 4, 1, 2, 3, 5]),
            .unsupported, "6 channels"
        ),
        (
            "mapping 255 without table", Array(OpusHeaderBytes.head(channels: 1, preSkip: 312).dropLast()) + [255],
            .badHeader, "mapping table"
        ),
        ("short head", Array("OpusHead".utf8) + [1, 1], .badHeader, "shorter"),
    ])
    func badOpusHeadsAreRefusedWithTheirReason(
        _ name: String, _ head: [UInt8], _ expected: IngestError.Reason, _ words: String
    ) throws {
        let error = try #require(try reason(headerOnly(head: head)))
        #expect(error.reason == expected, "\(name): \(error)")
        #expect(error.message.contains(words), "\(name): \(error.message)")
    }

    @Test func aFileThatStopsAfterTheHeadersIsTruncated() throws {
        let head = OpusHeaderBytes.head(channels: 1, preSkip: 312)
        let pages = OggPageBuilder().pages([
            .init(head, flushAfter: true), .init(OpusHeaderBytes.tags(), flushAfter: true),
        ])
        let error = try #require(try reason(pages.flatMap { $0 }))
        #expect(error.reason == .truncated)
        #expect(error.message.contains("no audio pages"))
        let headOnly = try #require(try reason(pages[0]))
        #expect(headOnly.reason == .truncated)
        let cut = try #require(try reason(Array(pages[0].prefix(20))))
        #expect(cut.reason == .truncated)
    }

    @Test func theSecondPacketMustBeOpusTags() throws {
        let head = OpusHeaderBytes.head(channels: 1, preSkip: 312)
        let bytes = OggStreamBuilder.singleStream(
            packets: [head, [0xF8, 1, 2], [0xF8, 1, 2]], granules: [0, 0, 960])
        let error = try #require(try reason(bytes))
        #expect(error.reason == .badHeader)
        #expect(error.message.contains("OpusTags"))
    }

    @Test func aDamagedFirstPageIsABadHeader() throws {
        var bytes = OggOpusWriter().encode(TestSignal.sine(samples: 4_800)).bytes
        bytes[30] ^= 0x40  // inside OpusHead: the page fails its CRC
        let error = try #require(try reason(bytes))
        #expect(error.reason == .badHeader)
        #expect(error.message.contains("CRC"))
    }

    // MARK: - Truncation

    static let clean: OggOpusFile = OggOpusWriter(frameMilliseconds: 20, packetsPerPage: 5).encode(
        TestSignal.speechLike(samples: 48_000))

    @Test func truncationAtEveryPageBoundaryAndMidPageDecodesTheCompletePrefix() throws {
        let file = Self.clean
        let offsets = file.pageOffsets + [file.bytes.count]
        var cuts: Set<Int> = [1, 3, 4]
        for (i, start) in offsets.enumerated() {
            cuts.insert(start)
            if i + 1 < offsets.count {
                cuts.insert((start + offsets[i + 1]) / 2)
                cuts.insert(start + 1)
                cuts.insert(start + 27)
            }
        }
        let firstAudioPageEnd = offsets[3]
        let scratch = Scratch()
        for cut in cuts.sorted() where cut > 0 {
            let bytes = Array(file.bytes.prefix(cut))
            let path = try scratch.write(bytes, as: "cut-\(cut).opus")
            if cut < 4 {
                #expect(throws: IngestError.self) { try OggOpusFileInfo.inspect(path: path) }
                continue
            }
            if cut < firstAudioPageEnd {
                do {
                    _ = try OggOpusFileInfo.inspect(path: path)
                    Issue.record("cut at \(cut), before the first audio page is complete, was accepted")
                } catch {
                    #expect(error.reason == .truncated, "cut \(cut): \(error)")
                }
                continue
            }
            let dump = try #require(OggPacketDump(bytes: bytes))
            let expected = max(0, Int(dump.lastGranule) - dump.preSkip)
            let source = try OggOpusFileSource(path: path)
            #expect(source.info.isTruncated == (cut < file.bytes.count), "cut \(cut)")
            #expect(source.info.durationSamples == Int64(expected), "cut \(cut)")
            #expect(source.info.corruptPages == 0, "cut \(cut)")
            let r = renderAll(source)
            let reference = referenceDecode(
                packets: dump.audioPackets, channels: 1, preSkip: dump.preSkip, totalSamples: expected)
            #expect(reference.count == expected)
            #expect(firstDifference(r.samples.prefix(expected), reference[...]) == nil, "cut \(cut)")
            #expect(r.samples.count == (expected + 479) / 480 * 480)
        }
    }

    // MARK: - Damage in the middle

    /// Decodes `damaged` and checks the timeline against the clean file: same length, exact
    /// before `damageStart`, close again `recovery` samples after `damageEnd`.
    func checkConcealed(
        _ damaged: [UInt8], damageStart: Int, damageEnd: Int, recovery: Int = 4_800, minimumSNR: Double = 20
    ) throws -> OggOpusFileSource {
        let file = Self.clean
        let scratch = Scratch()
        let path = try scratch.write(damaged)
        let source = try OggOpusFileSource(path: path)
        #expect(source.info.durationSamples == Int64(file.totalSamples), "the timeline keeps its length")
        #expect(!source.info.isTruncated)
        let reference = referenceDecode(
            packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: file.totalSamples)
        let r = renderAll(source)
        #expect(r.samples.count == (file.totalSamples + 479) / 480 * 480)
        #expect(
            firstDifference(r.samples.prefix(damageStart), reference.prefix(damageStart)) == nil,
            "exact before the damage")
        let after = (damageEnd + recovery)..<file.totalSamples
        let quality = snr(reference[after], r.samples[after])
        #expect(quality > minimumSNR, "audio after the damage is back in place: SNR \(quality) dB")
        let firstConcealed = damageStart / 480
        let lastConcealed = (damageEnd - 1) / 480
        #expect(r.statuses[firstConcealed...lastConcealed].allSatisfy { $0 == .concealed })
        #expect(r.statuses.filter { $0 == .concealed }.count == lastConcealed - firstConcealed + 1)
        return source
    }

    /// Playable sample range of audio page `page` (0-based, after the two header pages).
    func playableRange(ofAudioPage page: Int, packetsPerPage: Int = 5, frame: Int = 960) -> Range<Int> {
        let start = page * packetsPerPage * frame - Self.clean.preSkip
        return max(0, start)..<(start + packetsPerPage * frame)
    }

    @Test func aBitFlipInTheMiddleIsConcealedAndKeepsTheTimeline() throws {
        let file = Self.clean
        let page = 4
        var damaged = file.bytes
        damaged[file.pageOffsets[2 + page] + 60] ^= 0x10
        let range = playableRange(ofAudioPage: page)
        let source = try checkConcealed(damaged, damageStart: range.lowerBound, damageEnd: range.upperBound)
        #expect(source.info.corruptPages == 1)
        #expect(source.holes == 1)
        #expect(source.concealedSamples == range.count)
        #expect(source.decodeErrors == 0)
    }

    @Test func aPageCutOutCleanlyIsAHole() throws {
        let file = Self.clean
        let page = 3
        var damaged = file.bytes
        damaged.removeSubrange(file.pageOffsets[2 + page]..<file.pageOffsets[3 + page])
        let range = playableRange(ofAudioPage: page)
        let source = try checkConcealed(damaged, damageStart: range.lowerBound, damageEnd: range.upperBound)
        #expect(source.info.corruptPages == 1)
        #expect(source.holes == 1)
        #expect(source.concealedSamples == range.count)
    }

    @Test func aLongHoleIsPLCThenSilenceAndLaterAudioKeepsItsTime() throws {
        let file = Self.clean
        var damaged = file.bytes
        damaged.removeSubrange(file.pageOffsets[2 + 2]..<file.pageOffsets[2 + 6])  // 4 pages = 400 ms
        let range = playableRange(ofAudioPage: 2).lowerBound..<playableRange(ofAudioPage: 5).upperBound
        let source = try checkConcealed(damaged, damageStart: range.lowerBound, damageEnd: range.upperBound)
        #expect(source.concealedSamples == range.count)
        #expect(source.holes == 1)
        let scratch = Scratch()
        let r = renderAll(try OggOpusFileSource(path: try scratch.write(damaged)))
        let silent = (range.lowerBound + 9_600)..<range.upperBound
        #expect(r.samples[silent].allSatisfy { $0 == 0 }, "after 200 ms of PLC the hole is silence")
    }

    @Test func junkBetweenPagesIsSkippedWithoutLosingAnySample() throws {
        let file = Self.clean
        var damaged = file.bytes
        var rng = SplitMix64(seed: 3)
        damaged.insert(
            contentsOf: (0..<300).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: file.pageOffsets[6])
        let scratch = Scratch()
        let source = try OggOpusFileSource(path: try scratch.write(damaged))
        #expect(source.info.corruptPages == 1, "one place where libogg lost sync")
        #expect(source.info.durationSamples == Int64(file.totalSamples))
        let r = renderAll(source)
        let reference = referenceDecode(
            packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: file.totalSamples)
        #expect(Array(r.samples.prefix(file.totalSamples)) == reference, "no page was lost")
        #expect(source.holes == 1)
        #expect(source.concealedSamples == 0)
        #expect(!r.statuses.contains(.concealed))
    }

    @Test func anUndecodablePacketIsConcealedForItsDuration() throws {
        let file = Self.clean
        var packets = file.packets
        let bad = 23
        packets[bad] = [0xF2, 0xFA, 0x00]  // CELT 2 x 10 ms, first frame claims 250 bytes: OPUS_INVALID_PACKET
        let writer = OggOpusWriter(frameMilliseconds: 20, packetsPerPage: 5)
        let damaged = writer.mux(packets: packets, preSkip: file.preSkip, totalSamples: file.totalSamples)
        let start = bad * 960 - file.preSkip
        let source = try checkConcealed(damaged.bytes, damageStart: start, damageEnd: start + 960)
        #expect(source.decodeErrors == 1)
        #expect(source.concealedSamples == 960)
        #expect(source.holes == 0)
        #expect(source.info.corruptPages == 0)
    }

    @Test func flippedBytesAnywhereNeverCrashAndKeepTheLength() throws {
        let file = Self.clean
        var rng = SplitMix64(seed: 42)
        let audioStart = file.pageOffsets[2]
        let lastPage = file.pageOffsets.last!
        for _ in 0..<60 {
            var damaged = file.bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                damaged[Int.random(in: audioStart..<lastPage, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            }
            let (samples, decoder) = try decodeInMemory(damaged)
            #expect(samples.count == file.totalSamples, "flips before the last page keep the length")
            #expect(decoder.holes >= 1)
        }
    }

    @Test func mutatedFilesNeverCrashOrRunAway() throws {
        var rng = SplitMix64(seed: 7)
        let file = Self.clean
        for _ in 0..<300 {
            var bytes = file.bytes
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                for _ in 0..<Int.random(in: 1...20, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            case 1:
                let a = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.removeSubrange(a..<min(bytes.count, a + Int.random(in: 1...3000, using: &rng)))
            case 2:
                let a = Int.random(in: 0..<bytes.count, using: &rng)
                bytes.insert(
                    contentsOf: (0..<Int.random(in: 1...500, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    }, at: a)
            default:
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng)))
            }
            do {
                let info = try bytes.withUnsafeBytes { (raw) throws(IngestError) in
                    try OggOpusFileInfo.inspect(bytes: raw, name: "m")
                }
                let (samples, _) = try decodeInMemory(bytes, limit: 48_000 * 60)
                #expect(Int64(samples.count) == min(info.durationSamples, 48_000 * 60), "inspect and decode agree")
            } catch {
                #expect((error as? IngestError)?.message.isEmpty == false, "\(error)")
            }
        }
    }

    // MARK: - Several streams

    @Test func theFirstOpusStreamOfAMultiplexedFileIsDecoded() throws {
        let file = Self.clean
        let other = OggPageBuilder(serial: 77).pages([
            .init(Array("\u{01}vorbis".utf8) + [1, 2, 3], flushAfter: true),
            .init([9, 9, 9], granule: 100, flushAfter: true),
            .init([8, 8], granule: 200, flushAfter: true, endOfStream: true),
        ])
        // BOS pages first (RFC 3533 §4), then pages of both streams interleaved.
        var bytes = other[0] + file.pages[0]
        for (i, page) in file.pages.dropFirst().enumerated() {
            bytes += page
            if i + 1 < other.count { bytes += other[i + 1] }
        }
        let decoded = try decodeInMemory(bytes).samples
        #expect(
            decoded
                == referenceDecode(
                    packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: file.totalSamples))
        let info = try bytes.withUnsafeBytes { (raw) throws(IngestError) in
            try OggOpusFileInfo.inspect(bytes: raw, name: "mux")
        }
        #expect(info.durationSamples == Int64(file.totalSamples))
        #expect(info.corruptPages == 0)
    }

    @Test func aChainedFileIsReadUpToTheEndOfItsFirstLink() throws {
        let first = Self.clean
        let second = OggOpusWriter(serial: 99).encode(TestSignal.sine(samples: 10_000))
        let bytes = first.bytes + second.bytes
        let info = try bytes.withUnsafeBytes { (raw) throws(IngestError) in
            try OggOpusFileInfo.inspect(bytes: raw, name: "chain")
        }
        #expect(info.durationSamples == Int64(first.totalSamples))
        #expect(!info.isTruncated)
        #expect(try decodeInMemory(bytes).samples.count == first.totalSamples)
    }
}
