import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import Testing

/// Bad input: one clear line on stderr, exit status 1, and nothing on disk damaged or half-made.
@Suite("CLI: record refuses bad input without damage")
struct RecordErrorTests {
    /// Asserts a failed run: exit 1, exactly one stderr line containing every fragment.
    func expectFailure(_ arguments: [String], mentions fragments: [String]) throws {
        let outcome = try roomtap(arguments, expect: 1)
        #expect(outcome.stderrLines.count == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("roomtap: error: "))
        for fragment in fragments { #expect(outcome.stderr.contains(fragment), "stderr: \(outcome.stderr)") }
    }

    @Test func existingOutputIsNeverOverwritten() throws {
        let out = try temporaryDirectory()
        let precious = out.appendingPathComponent("bob.wav")
        let original = Data("an earlier recording, not a WAV at all".utf8)
        try original.write(to: precious)
        try expectFailure(
            ["record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))", "--out", out.path],
            mentions: ["bob.wav", "already exists", "--force"])
        #expect(try Data(contentsOf: precious) == original)
        #expect(try listing(out) == ["bob.wav"], "nothing else may be created")
    }

    @Test func forceOverwrites() throws {
        let out = try temporaryDirectory()
        try Data("old".utf8).write(to: out.appendingPathComponent("carol.wav"))
        try roomtap(
            ["record", "--file", "carol=\(sample("carol"))", "--out", out.path, "--force", "--quiet"], expect: 0)
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("carol.wav").path)
        #expect(samples.count == 216_000)
    }

    @Test func missingInput() throws {
        let out = try temporaryDirectory()
        try expectFailure(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "dave=/nonexistent/dave.opus", "--out",
                out.path,
            ],
            mentions: ["/nonexistent/dave.opus"])
        #expect(try listing(out).isEmpty)
    }

    @Test func notOgg() throws {
        let out = try temporaryDirectory()
        let text = out.appendingPathComponent("notes.opus")
        try Data("these are meeting notes, not audio\n".utf8).write(to: text)
        try expectFailure(
            ["record", "--file", "a=\(text.path)", "--out", out.appendingPathComponent("o").path],
            mentions: ["notes.opus", "not an Ogg"])
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("o/a.wav").path))
    }

    @Test func oggButNotOpus() throws {
        let out = try temporaryDirectory()
        let vorbis = out.appendingPathComponent("music.ogg")
        try Data(OggStreamBuilder.singleStream(packets: [Array("\u{01}vorbis junk header".utf8), [1, 2, 3]]))
            .write(to: vorbis)
        try expectFailure(
            ["record", "--file", "a=\(vorbis.path)", "--out", out.appendingPathComponent("o").path],
            mentions: ["music.ogg", "not Opus"])
    }

    @Test func truncatedFileIsRefusedUnlessAllowed() throws {
        let out = try temporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: sample("alice")))
        let cut = out.appendingPathComponent("cut.opus")
        try bytes.prefix(bytes.count * 2 / 3).write(to: cut)
        try expectFailure(
            ["record", "--file", "a=\(cut.path)", "--out", out.appendingPathComponent("o").path],
            mentions: ["cut.opus", "truncated", "--allow-truncated"])
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("o/a.wav").path))
        try roomtap(
            [
                "record", "--file", "a=\(cut.path)", "--out", out.appendingPathComponent("o").path, "--allow-truncated",
                "--quiet",
            ], expect: 0)
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("o/a.wav").path)
        let reference = try referenceDecode(of: sample("alice"))
        #expect(samples.count > 200_000 && samples.count < 432_000)
        // What was there is recorded exactly (the last packets before the cut may be missing).
        #expect(Array(samples[..<200_000]) == Array(reference[..<200_000]))
    }

    @Test func corruptStretchInTheMiddleIsConcealedAndCounted() throws {
        let out = try temporaryDirectory()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: sample("alice"))))
        for i in stride(from: bytes.count / 2, to: bytes.count / 2 + 40, by: 7) { bytes[i] ^= 0x5A }
        let damaged = out.appendingPathComponent("damaged.opus")
        try Data(bytes).write(to: damaged)
        let outcome = try roomtap(
            ["record", "--file", "alice=\(damaged.path)", "--out", out.appendingPathComponent("o").path], expect: 0)
        #expect(outcome.stderr.contains("concealed"), "stderr: \(outcome.stderr)")
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("o/alice.wav").path)
        #expect(samples.count == 432_000, "the timeline is kept: same length as the clean file")
        let reference = try referenceDecode(of: sample("alice"))
        // Before the damage: identical. After it (once PLC state has settled): close to the clean decode.
        #expect(Array(samples[..<100_000]) == Array(reference[..<100_000]))
        let tail = 380_000..<430_000
        #expect(correlation(samples[tail].map(Double.init), reference[tail].map(Double.init)) > 0.9)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("o/room.json")))
        let track = try #require(((json as? [String: Any])?["tracks"] as? [[String: Any]])?.first)
        #expect((track["concealedMs"] as? Int ?? 0) > 0)
    }

    @Test func outIsAFile() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("plain")
        try Data("x".utf8).write(to: file)
        try expectFailure(
            ["record", "--file", "a=\(sample("carol"))", "--out", file.path],
            mentions: ["plain", "not a directory"])
        try expectFailure(
            ["record", "--file", "a=\(sample("carol"))", "--out", file.appendingPathComponent("sub").path],
            mentions: ["cannot create output directory"])
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test func namesCannotEscapeTheOutputDirectory() throws {
        let root = try temporaryDirectory()
        let out = root.appendingPathComponent("out")
        // The one rule for names (TrackName): a '/' or a name . or .. is refused before anything is made.
        for name in ["../escape", "a/b", "..", "."] {
            let refused = try roomtap(
                ["record", "--file", "\(name)=\(sample("carol"))", "--out", out.path, "--quiet"], expect: 64)
            #expect(
                refused.stderrLines.count == 1 && refused.stderr.contains("--file name '\(name)' ")
                    && refused.stderr.contains("no '/' or control characters, not . or .."), "\(refused.stderr)")
        }
        #expect(try listing(root).isEmpty, "nothing made")
        let outcome = try roomtap(
            [
                "record", "--file", "a b=\(sample("carol"))", "--file", "a_b=\(sample("carol"))",
                "--file", ".hidden=\(sample("carol"))", "--out", out.path, "--mix", "--quiet",
            ], expect: 0)
        #expect(outcome.stderr.isEmpty, "stderr: \(outcome.stderr)")
        #expect(try listing(root) == ["out"], "nothing may land outside --out")
        #expect(
            try listing(out) == ["_.hidden.wav", "a_b-2.wav", "a_b.wav", "mix.wav", "room.json"].sorted())
    }

    @Test func outputThatIsAnInputIsRefused() throws {
        let dir = try temporaryDirectory()
        let input = dir.appendingPathComponent("a.wav")
        try FileManager.default.copyItem(atPath: sample("carol"), toPath: input.path)
        let before = try Data(contentsOf: input)
        try expectFailure(
            ["record", "--file", "a=\(input.path)", "--out", dir.path, "--force"],
            mentions: ["input"])
        #expect(try Data(contentsOf: input) == before)
    }
}
