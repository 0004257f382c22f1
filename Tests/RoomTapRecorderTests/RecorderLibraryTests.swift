import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import RoomTapRecorder
import RoomTapTestSupport
import Testing

/// The recorder as a library, in the test's own process (no `roomtap` child): a command line
/// planned, the room recorded, the outcome and the files checked against libopus's own decode;
/// bad input refused with the CLI's one line, nothing created and nothing overwritten.
@Suite struct RecorderLibraryTests {
    /// An Ogg Opus file of a tone of `frequency` for `seconds`, and libopus's decode of it.
    private func speaker(_ dir: TemporaryDirectory, _ name: String, frequency: Double, seconds: Double) throws
        -> (path: String, decoded: [Int16])
    {
        let pcm = (0..<Int(seconds * 48_000)).map { n in
            Int16((9_000 * sin(2 * Double.pi * frequency * Double(n) / 48_000)).rounded())
        }
        let file = OggOpusWriter().encode(pcm)
        let path = dir.file("\(name).opus")
        try file.write(to: path)
        let decoded = referenceDecode(
            packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: file.totalSamples)
        return (path, decoded)
    }

    @Test func twoSpeakersAreRecordedInProcessBitExact() throws {
        let dir = try TemporaryDirectory()
        let alice = try speaker(dir, "alice", frequency: 330, seconds: 1.5)
        let bob = try speaker(dir, "bob", frequency: 550, seconds: 0.7)
        let out = dir.file("room")
        let recorder = try Recorder.plan(arguments: [
            "--file", "alice=\(alice.path)", "--file", "bob=\(bob.path)", "--out", out, "--quiet",
        ])
        let outcome = try recorder.run()
        #expect(outcome.failure == nil)
        #expect(outcome.roomSamples == 72_000, "the room is as long as its longest speaker")
        #expect(outcome.files.map(\.track) == ["alice", "bob"])
        #expect(outcome.files.allSatisfy { $0.droppedFrames == 0 })
        for (file, expected) in zip(outcome.files, [alice.decoded, bob.decoded]) {
            let (_, samples) = try WAVFile.readSamples(path: file.path)
            #expect(file.samples == Int64(samples.count))
            // Every file spans the room; the speaker's audio is libopus's decode, sample for sample.
            #expect(samples.count == 72_000, "\(file.track)")
            #expect(Array(samples.prefix(expected.count)) == expected, "\(file.track) is bit-exact")
            #expect(samples.dropFirst(expected.count).allSatisfy { $0 == 0 }, "\(file.track): silence after")
        }
        let report = try String(contentsOfFile: outcome.roomJSONPath, encoding: .utf8)
        #expect(report.contains("\"state\" : \"complete\""))
    }

    @Test func usageErrorsAreTypedAndCreateNothing() throws {
        let dir = try TemporaryDirectory()
        let out = dir.file("room")
        #expect(throws: RecorderError.usage("unknown option '--fil' for 'roomtap record'")) {
            try Recorder.plan(arguments: ["--fil", "a=x.opus", "--out", out])
        }
        do {
            _ = try Recorder.plan(arguments: ["--file", "alice=\(dir.file("missing.opus"))", "--out", out])
            Issue.record("a missing input was planned")
        } catch {
            guard case .failure(let line) = error else { throw error }
            #expect(line.contains("missing.opus"), "the line names the file: \(line)")
        }
        #expect(!FileManager.default.fileExists(atPath: out), "nothing created")
    }

    @Test func anExistingFileIsRefusedAndLeftIntactUnlessForced() throws {
        let dir = try TemporaryDirectory()
        let alice = try speaker(dir, "alice", frequency: 440, seconds: 0.5)
        let out = dir.file("room")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let earlier = Array("an earlier take".utf8)
        try Data(earlier).write(to: URL(fileURLWithPath: out + "/alice.wav"))
        let arguments = ["--file", "alice=\(alice.path)", "--out", out, "--quiet"]
        do {
            _ = try Recorder.plan(arguments: arguments).run()
            Issue.record("an existing file was overwritten")
        } catch {
            guard case .failure(let line) = error else { throw error }
            #expect(line.contains("alice.wav") && line.contains("--force"), "\(line)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/alice.wav")) == Data(earlier))
        let outcome = try Recorder.plan(arguments: arguments + ["--force"]).run()
        let (_, samples) = try WAVFile.readSamples(path: try #require(outcome.files.first).path)
        #expect(samples == alice.decoded)
    }
}
