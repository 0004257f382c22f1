import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import Testing

/// `roomtap record` on the bundled sample room, checked for files, lengths, alignment and content.
@Suite("CLI: record the sample room")
struct RecordSampleRoomTests {
    /// bob joins at 2.5 s = 120 000 samples; the room is bob's 8 s after that: 10.5 s.
    static let bobOffset = 120_000
    static let roomSamples = 504_000

    /// On the binary: a whole recording through the executable, as a user runs it.
    @Test func everySpeakerFileIsTheReferenceDecodeAtItsOffset() throws {
        let out = try temporaryDirectory()
        let outcome = try roomtapBinary(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))", "--out", out.path, "--mix",
            ], expect: 0)
        #expect(try listing(out) == ["alice.wav", "bob.wav", "carol.wav", "mix.wav", "room.json"])

        var decoded: [String: [Int16]] = [:]
        for (name, offset) in [("alice", 0), ("bob", Self.bobOffset), ("carol", 0)] {
            let (file, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path)
            #expect(file.channels == 1 && file.sampleRate == 48_000 && file.bitsPerSample == 16)
            #expect(samples.count == Self.roomSamples, "\(name).wav has \(samples.count) samples")
            let reference = try referenceDecode(of: sample(name))
            var expected = [Int16](repeating: 0, count: Self.roomSamples)
            expected.replaceSubrange(offset..<(offset + reference.count), with: reference)
            #expect(samples == expected, "\(name).wav differs from libopus's decode placed at \(offset)")
            decoded[name] = samples
        }
        // bob's first sample is exactly at his offset: silence before, the file's sample 0 at 120000.
        let bob = try #require(decoded["bob"])
        #expect(bob[..<Self.bobOffset].allSatisfy { $0 == 0 })

        // The mix: same length, the sum of the speakers where it does not need limiting, never past full scale.
        let (_, mix) = try WAVFile.readSamples(path: out.appendingPathComponent("mix.wav").path)
        #expect(mix.count == Self.roomSamples)
        let sum = (0..<Self.roomSamples).map { i in
            Int(decoded["alice"]![i]) + Int(decoded["bob"]![i]) + Int(decoded["carol"]![i])
        }
        let exact = zip(sum, mix).filter { $0 == Int($1) }.count
        #expect(Double(exact) / Double(sum.count) > 0.99, "mix equals the sum at only \(exact) samples")
        #expect(correlation(sum.map(Double.init), mix.map(Double.init)) > 0.999)

        // The summary table on stdout: one row per track, with the room's sample count.
        for name in ["alice", "bob", "carol", "mix"] {
            let row = outcome.stdout.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            #expect(row?.contains("\(Self.roomSamples)") == true, "no row for \(name) in:\n\(outcome.stdout)")
        }
    }

    @Test func roomJSONDescribesTheRoom() throws {
        let out = try temporaryDirectory()
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))", "--out", out.path, "--mix", "--quiet",
            ], expect: 0)
        let data = try Data(contentsOf: out.appendingPathComponent("room.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["durationSamples"] as? Int == Self.roomSamples)
        #expect(json["sampleRate"] as? Int == 48_000)
        #expect((json["startTime"] as? String)?.hasPrefix("20") == true)
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["name"] as? String } == ["alice", "bob", "carol", "mix"])
        #expect(tracks.map { $0["file"] as? String } == ["alice.wav", "bob.wav", "carol.wav", "mix.wav"])
        // Each track's role, as it was added (and the coarse kind older readers know).
        #expect(tracks.map { $0["role"] as? String } == ["speaker-file", "speaker-file", "speaker-file", "mix"])
        #expect(tracks.map { $0["kind"] as? String } == ["speaker", "speaker", "speaker", "mix"])
        for track in tracks { #expect(track["samples"] as? Int == Self.roomSamples) }
        let bob = try #require(tracks[1]["source"] as? [String: Any])
        #expect(bob["offsetSamples"] as? Int == Self.bobOffset)
        #expect(bob["durationSamples"] as? Int == 384_000)
        // carol stops at 4.5 s: 6 s of the 10.5 s room are silent frames for her.
        let carolSilentMs = try #require(tracks[2]["silentMs"] as? Int)
        #expect(carolSilentMs >= 6_000 && carolSilentMs <= 6_010)
        #expect(tracks[3]["inputs"] as? [String] == ["alice", "bob", "carol"])
    }

    @Test func offsetsAreExactToTheSample() throws {
        let out = try temporaryDirectory()
        // 0.0104 s = 499.2 samples -> 499.
        try roomtap(["record", "--file", "carol=\(sample("carol"))@0.0104", "--out", out.path, "--quiet"], expect: 0)
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("carol.wav").path)
        let reference = try referenceDecode(of: sample("carol"))
        #expect(samples.count == ((499 + reference.count + 479) / 480) * 480)
        #expect(samples[..<499].allSatisfy { $0 == 0 })
        #expect(Array(samples[499..<(499 + reference.count)]) == reference)
        #expect(samples[(499 + reference.count)...].allSatisfy { $0 == 0 })
    }

    @Test func stereoKeepsTwoChannels() throws {
        let out = try temporaryDirectory()
        try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--channels", "2", "--mix", "--quiet"],
            expect: 0)
        for name in ["alice", "mix"] {
            let (file, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path)
            #expect(file.channels == 2)
            #expect(samples.count == 432_000 * 2)
        }
        let (_, stereo) = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path)
        let reference = try referenceDecode(of: sample("alice"), channels: 2)
        #expect(stereo == reference)
    }

    @Test func bextCarriesTheRoomStartTime() throws {
        let out = try temporaryDirectory()
        let before = Date()
        try roomtap(["record", "--file", "carol=\(sample("carol"))", "--out", out.path, "--quiet"], expect: 0)
        let file = try WAVFile.inspect(path: out.appendingPathComponent("carol.wav").path)
        let reference = try #require(file.bextTimeReference)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let midnight = calendar.startOfDay(for: before)
        let expected = before.timeIntervalSince(midnight) * 48_000
        #expect(abs(Double(reference) - expected) < 48_000 * 5, "TimeReference \(reference), expected ~\(expected)")
        #expect(file.bextOriginationDate?.count == 10)
    }
}

/// Pearson correlation of two equally long signals.
func correlation(_ a: [Double], _ b: [Double]) -> Double {
    let n = Double(min(a.count, b.count))
    let ma = a.reduce(0, +) / n
    let mb = b.reduce(0, +) / n
    var sab = 0.0
    var saa = 0.0
    var sbb = 0.0
    for i in 0..<Int(n) {
        sab += (a[i] - ma) * (b[i] - mb)
        saa += (a[i] - ma) * (a[i] - ma)
        sbb += (b[i] - mb) * (b[i] - mb)
    }
    return sab / (saa * sbb).squareRoot()
}
