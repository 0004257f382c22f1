import Foundation
import RoomTapAll
import RoomTapTestSupport
import Testing

/// `roomtap record --threads N`: the speakers decode on N threads, and the files do not depend on N.
@Suite("CLI: record --threads")
struct RenderThreadsCLITests {
    static let speakers = [
        "alice=\(sample("alice"))", "bob=\(sample("bob"))@2.5", "carol=\(sample("carol"))",
        "alice2=\(sample("alice"))@0.0104", "bob2=\(sample("bob"))@1.337", "carol2=\(sample("carol"))@0.5",
    ]

    /// Records the six speakers (with `--mix` or not) on `threads` threads; every WAV's data chunk
    /// by file name (the header's bext holds the wall-clock start, which may differ).
    func record(threads: Int, mix: Bool) throws -> [String: Data] {
        let out = try temporaryDirectory("threads\(threads)\(mix ? "-mix" : "")")
        var arguments = ["record", "--out", out.path, "--quiet", "--threads", "\(threads)"]
        if mix { arguments.append("--mix") }
        for speaker in Self.speakers { arguments += ["--file", speaker] }
        try roomtap(arguments, expect: 0)
        var files: [String: Data] = [:]
        for name in try listing(out) where name.hasSuffix(".wav") {
            let path = out.appendingPathComponent(name).path
            let wav = try WAVFile.inspect(path: path)
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path)).dropFirst(Int(wav.dataOffset))
        }
        return files
    }

    /// Six speakers at offsets that are not whole frames (two of them join late, one leaves early)
    /// and a mix: recorded on 1, 2 and 4 threads, every WAV's data is the same, byte for byte.
    @Test func theFilesAreTheSameOnOneTwoAndFourThreads() throws {
        var recordings: [Int: [String: Data]] = [:]
        for threads in [1, 2, 4] { recordings[threads] = try record(threads: threads, mix: true) }
        let one = try #require(recordings[1])
        #expect(
            one.keys.sorted() == [
                "alice.wav", "alice2.wav", "bob.wav", "bob2.wav", "carol.wav", "carol2.wav", "mix.wav",
            ])
        // bob (8 s from 2.5 s) ends last: 10.5 s of room, 2 bytes a sample.
        let roomBytes = 504_000 * 2
        #expect(one.values.allSatisfy { $0.count == roomBytes }, "\(one.mapValues(\.count)) vs \(roomBytes)")
        #expect(one["mix.wav"]!.contains { $0 != 0 })
        for threads in [2, 4] {
            for (name, data) in one {
                #expect(recordings[threads]?[name] == data, "\(name) on \(threads) threads differs from 1 thread")
            }
        }
    }

    /// Without a mix the speakers render in chunks, each on whichever thread is free, and write
    /// their files on that thread: the same bytes as the room with a mix, which renders in step.
    @Test func speakersRenderedInChunksWriteTheFilesOfARoomInStep() throws {
        let inStep = try record(threads: 1, mix: true)
        #expect(inStep.count == 7)
        for threads in [1, 2, 4] {
            let chunked = try record(threads: threads, mix: false)
            #expect(chunked.keys.sorted() == inStep.keys.filter { $0 != "mix.wav" }.sorted())
            for (name, data) in chunked {
                #expect(inStep[name] == data, "\(name), chunked on \(threads) threads, differs from in step")
            }
        }
    }

    @Test(arguments: ["0", "65", "two"])
    func aThreadCountOutsideOneToSixtyFourIsAUsageError(value: String) throws {
        let out = try temporaryDirectory()
        let outcome = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--threads", value], expect: 64)
        #expect(outcome.stderrLines.count == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("roomtap: error: --threads must be a whole number from 1 to 64"))
        #expect(try listing(out).isEmpty, "nothing is written on a usage error")
    }
}
