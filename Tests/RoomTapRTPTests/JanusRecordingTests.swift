import Foundation
import RoomTapCore
import RoomTapFuzzing
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// The Janus fixtures beside the checkout (`../shared/fixtures/janus-mjr/`), when present.
let janusFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/janus-mjr")
let haveJanusFixtures = FileManager.default.fileExists(atPath: janusFixtures.appendingPathComponent("README.md").path)

@Suite("Recordings: Janus .mjr reader and the recorded-stream source")
struct JanusRecordingTests {
    static let packets = JitterFixtures.encode(TestSignal.speechLike(samples: 150 * 960, seed: 13))
    static let u: Int64 = 1_796_070_494_461_418

    /// Renders `source` from room sample 0 until it finishes (at most `limit` frames).
    func render(_ source: RecordedStreamSource, limit: Int = 10_000) -> (samples: [Int16], statuses: [FrameStatus]) {
        var out: [Int16] = []
        var statuses: [FrameStatus] = []
        var frame = [Int16](repeating: 0, count: 480 * source.channels)
        var room: Int64 = 0
        while !source.isFinished && statuses.count < limit {
            let status = frame.withUnsafeMutableBufferPointer { source.render(into: $0, at: room) }
            out += frame
            statuses.append(status)
            room += 480
        }
        return (out, statuses)
    }

    @Test(.enabled(if: haveJanusFixtures, "needs ../shared/fixtures/janus-mjr beside the checkout"))
    func readsWhatJanusWrote() throws {
        let path = janusFixtures.appendingPathComponent("videoroom-587429-user-1001-1796070494380244-audio-0.mjr").path
        let recording = try JanusRecording.read(path: path)
        #expect(recording.codec == "opus")
        #expect(recording.firstPacketMicroseconds == 1_796_070_494_461_418)
        #expect(recording.createdMicroseconds == 1_796_070_494_380_245)
        #expect(recording.stream.packets.count == 877)
        #expect(recording.skippedFrames == 0 && !recording.isTruncated)
        // Janus rewrites sequence numbers from 1 and timestamps from 0: 20 ms packets end to end.
        #expect(recording.stream.packets.first?.sequence == 1)
        #expect(recording.stream.packets.allSatisfy { $0.duration == 960 && $0.place % 960 == 0 })
        #expect(recording.stream.durationSamples == 841_920)
    }

    @Test func aRecordingPlaysExactlyAsLibopusDecodesItsPackets() throws {
        let bytes = JanusRecordingBuilder.opus(Self.packets, u: Self.u).bytes()
        let recording = try JanusRecording.parse(bytes, path: "t.mjr")
        #expect(recording.stream.packets.count == Self.packets.count)
        #expect(recording.stream.durationSamples == Int64(Self.packets.count * 960))
        let offset = 12_345
        let source = try #require(RecordedStreamSource(stream: recording.stream, offset: Int64(offset)))
        let (samples, statuses) = render(source)
        let expected = placed(
            ReferenceOpusDecode.decode(Self.packets.map { .init(payload: $0, arrived: true) }), at: offset,
            length: samples.count)
        #expect(samples == expected, "first difference at \(firstDifference(samples, expected) ?? -1)")
        #expect(statuses.count == (offset + Self.packets.count * 960 + 479) / 480)
        #expect(statuses.first == .silence)
    }

    /// Loss, reordering and duplicates as Janus stores them (in arrival order): the file equals one
    /// libopus decoder given the packets in order and one PLC call per missing packet.
    @Test func lossReorderAndDuplicatesAreConcealedAsOnTheLivePath() throws {
        var builder = JanusRecordingBuilder(header: JanusRecordingBuilder.opusHeader(u: Self.u))
        let lost: Set<Int> = [10, 40, 41, 97]
        var order = Array(Self.packets.indices).filter { !lost.contains($0) }
        order.swapAt(20, 21)
        order.swapAt(60, 63)
        order.insert(30, at: 33)  // a duplicate, stored late
        for i in order {
            builder.append(
                payload: Self.packets[i], sequence: UInt16(i + 1), timestamp: UInt32(i * 960), ms: UInt32(i * 20))
        }
        let recording = try JanusRecording.parse(builder.bytes(), path: "t.mjr")
        let source = try #require(RecordedStreamSource(stream: recording.stream, offset: 480))
        let (samples, _) = render(source)
        let reference = ReferenceOpusDecode.decode(
            Self.packets.indices.map { .init(payload: Self.packets[$0], arrived: !lost.contains($0)) })
        let expected = placed(reference, at: 480, length: samples.count)
        #expect(samples == expected, "first difference at \(firstDifference(samples, expected) ?? -1)")
        #expect(source.statistics.lost == 4)
        #expect(source.statistics.duplicates == 1)
    }

    /// A sender that pauses (no packets, timestamps jump 3 s on) leaves silence, and its audio
    /// after the pause lands where its timestamp says.
    @Test func aTimestampGapIsSilenceAndLaterAudioKeepsItsPlace() throws {
        var builder = JanusRecordingBuilder(header: JanusRecordingBuilder.opusHeader(u: Self.u))
        for i in 0..<100 {
            let timestamp = i < 50 ? i * 960 : i * 960 + 144_000
            builder.append(
                payload: Self.packets[i], sequence: UInt16(i + 1), timestamp: UInt32(timestamp), ms: UInt32(i * 20))
        }
        let recording = try JanusRecording.parse(builder.bytes(), path: "t.mjr")
        #expect(recording.stream.durationSamples == 100 * 960 + 144_000)
        let source = try #require(RecordedStreamSource(stream: recording.stream, offset: 0))
        let (samples, statuses) = render(source)
        let decoded = ReferenceOpusDecode.decode(Self.packets[0..<100].map { .init(payload: $0, arrived: true) })
        #expect(Array(samples[0..<48_000]) == Array(decoded[0..<48_000]))
        #expect(samples[48_000..<(48_000 + 144_000)].allSatisfy { $0 == 0 })
        #expect(statuses[100..<400].allSatisfy { $0 == .silence })
        // After the pause the decoder goes on with the next packet: libopus's decode of it.
        #expect(Array(samples[192_000..<(192_000 + 48_000)]) == Array(decoded[48_000..<96_000]))
    }

    @Test(arguments: [
        ("{\"t\": \"v\", \"c\": \"vp8\", \"s\": 1, \"u\": 2}", "video recording"),
        ("{\"t\": \"d\", \"c\": \"text\", \"s\": 1, \"u\": 2}", "data-channel recording"),
        ("{\"t\": \"a\", \"c\": \"pcmu\", \"s\": 1, \"u\": 2}", "pcmu audio"),
        ("{\"t\": \"a\", \"c\": \"opus\", \"s\": 1, \"u\": 2, \"e\": true}", "end-to-end encrypted"),
        ("{\"t\": \"a\", \"c\": \"opus\", \"s\": 1}", "no first-packet time"),
        ("{\"t\": \"a\", \"c\": \"opus\", \"s\": 1, \"u\": \"x\"}", "no first-packet time"),
        ("{\"c\": \"opus\", \"u\": 2}", "no media type"),
        ("[1, 2]", "not a JSON object"),
        ("{\"t\": \"a\", ", "not JSON"),
    ])
    func headersItCannotPlayAreRefusedWithOneLine(header: String, fragment: String) throws {
        var builder = JanusRecordingBuilder(header: header)
        builder.append(payload: Self.packets[0], sequence: 1, timestamp: 0, ms: 0)
        let error = try #require(throws: RecordingError.self) {
            try JanusRecording.parse(builder.bytes(), path: "x.mjr")
        }
        #expect(error.description.hasPrefix("x.mjr: "))
        #expect(error.message.contains(fragment), "\(error.message)")
        #expect(!error.description.contains("\n"))
    }

    @Test func otherFilesAndOldFormatsAreRefused() throws {
        let notJanus = try #require(throws: RecordingError.self) {
            try JanusRecording.parse(Array("OggS and more".utf8), path: "a")
        }
        #expect(notJanus.message.contains("not a Janus recording"))
        let old = try #require(throws: RecordingError.self) {
            try JanusRecording.parse(Array("MJR00001\u{0}\u{2}{}".utf8), path: "a")
        }
        #expect(old.message.contains("old format (MJR00001)"))
        let long = try #require(throws: RecordingError.self) {
            try JanusRecording.parse(Array("MJR00002".utf8) + [0xFF, 0xFF, 0x7B], path: "a")
        }
        #expect(long.message.contains("does not fit"))
    }

    /// Cut anywhere, a recording reads as far as its last whole frame and says it was cut.
    @Test func aRecordingCutAtEveryOffsetReadsItsWholeFrames() throws {
        let bytes = JanusRecordingBuilder.opus(Array(Self.packets[0..<12]), u: Self.u).bytes()
        let whole = try JanusRecording.parse(bytes, path: "t")
        #expect(!whole.isTruncated)
        for cut in 0..<bytes.count {
            guard let recording = try? JanusRecording.parse(Array(bytes[0..<cut]), path: "t") else { continue }
            let frames = recording.stream.packets.count
            #expect(frames <= 12)
            #expect(recording.stream.packets == Array(whole.stream.packets.prefix(frames)))
            let headerEnd = 10 + JanusRecordingBuilder.opusHeader(u: Self.u).utf8.count
            let boundary = cut == headerEnd || recording.stream.packets.last?.payload.upperBound == cut
            #expect(recording.isTruncated == !boundary, "cut at \(cut)")
        }
    }

    /// Frames that are not Opus RTP (RTCP, garbage, empty payloads) are skipped and counted.
    @Test func framesThatAreNotOpusRTPAreSkipped() throws {
        var builder = JanusRecordingBuilder.opus(Array(Self.packets[0..<10]), u: Self.u)
        builder.frames.insert((20, [0x80, 0xC8, 0x00, 0x06] + [UInt8](repeating: 0, count: 24)), at: 3)  // RTCP SR
        builder.frames.insert((40, [1, 2, 3]), at: 5)  // too short
        builder.frames.insert((60, RTPPacketBuilder(sequenceNumber: 99, payload: []).bytes()), at: 7)
        let recording = try JanusRecording.parse(builder.bytes(), path: "t")
        #expect(recording.stream.packets.count == 10)
        #expect(recording.skippedFrames == 3)
    }

    /// RFC 2198 RED (Janus's `or`): the primary encoding is played.
    @Test func redCarriesItsPrimaryEncoding() throws {
        var builder = JanusRecordingBuilder(
            header: "{\"t\": \"a\", \"c\": \"opus\", \"s\": 1, \"u\": 2, \"or\": 63}")
        for i in 0..<5 {
            let primary = Self.packets[i]
            let redundant = i > 0 ? Self.packets[i - 1] : []
            var payload: [UInt8] = []
            if !redundant.isEmpty {
                // F=1, PT 111, timestamp offset 960 (14 bits), length (10 bits): RFC 2198 §3.
                payload += [0x80 | 111, UInt8(960 >> 6), UInt8(redundant.count >> 8), UInt8(redundant.count & 0xFF)]
            }
            payload += [111] + redundant + primary
            var rtp = RTPPacketBuilder(
                payloadType: 63, sequenceNumber: UInt16(i + 1), timestamp: UInt32(i * 960), payload: payload)
            rtp.marker = false
            builder.frames.append((UInt32(i * 20), rtp.bytes()))
        }
        let recording = try JanusRecording.parse(builder.bytes(), path: "t")
        #expect(recording.stream.packets.count == 5)
        for (i, packet) in recording.stream.packets.enumerated() {
            #expect(Array(recording.stream.bytes[packet.payload]) == Self.packets[i])
        }
    }

    @Test func fiveThousandMutatedRecordingsNeverCrash() throws {
        var rng = SplitMix64(seed: 0x3A_0002)
        let base = JanusRecordingBuilder.opus(Array(Self.packets[0..<8]), u: Self.u).bytes()
        let headerEnd = 10 + JanusRecordingBuilder.opusHeader(u: Self.u).utf8.count
        for n in 0..<5_000 {
            var bytes = base
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes[i] = n % 3 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : bytes[i] ^ (1 << (rng.next() % 8))
            }
            if n % 5 == 0 { bytes.removeLast(Int(rng.next() % UInt64(bytes.count))) }
            bytes.withUnsafeBytes { RecordingFuzz.exercise($0, renderLimit: 96_000) }
            // The frames alone, as the fuzzer sees them after a valid header.
            Array(bytes.dropFirst(headerEnd)).withUnsafeBytes { RecordingFuzz.exercise($0, renderLimit: 96_000) }
        }
    }

    @Test func aJanusDirectoryGivesItsRoomsAudioRecordingsByParticipant() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("janus-dir-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in [
            "videoroom-5874-29-user-1001-1796070494380244-audio-0.mjr",
            "videoroom-5874-29-user-1001-1796070494380244-video-1.mjr",
            "videoroom-5874-29-user-1001-1796070499000000-audio-0.mjr",
            "videoroom-5874-29-user-ab-c-17-audio-2.mjr",
            "videoroom-5874-29-user-ab-c-17-data.mjr",
            "rec-sample-audio.mjr",
            "videoroom-1-user-2-x-audio-0.mjr",
            "notes.txt",
        ] {
            #expect(
                FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()))
        }
        let found = try JanusRoomDirectory.recordings(in: directory.path)
        #expect(found.map(\.name) == ["user-1001", "user-1001-2", "user-ab-c-2"])
        #expect(found[1].path.hasSuffix("/videoroom-5874-29-user-1001-1796070499000000-audio-0.mjr"))
        #expect(
            FileManager.default.createFile(
                atPath: directory.appendingPathComponent("audiobridge-77-user-5-1796070494380244-audio.mjr").path,
                contents: Data()))
        let error = try #require(throws: RecordingError.self) {
            try JanusRoomDirectory.recordings(in: directory.path)
        }
        #expect(error.message.contains("2 rooms (audiobridge-77, videoroom-5874-29)"), "\(error.message)")
    }
}

/// `decoded` at `offset` in `length` samples of silence.
func placed(_ decoded: [Int16], at offset: Int, length: Int) -> [Int16] {
    var out = [Int16](repeating: 0, count: length)
    for (i, v) in decoded.enumerated() where offset + i >= 0 && offset + i < length { out[offset + i] = v }
    return out
}
