import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

/// `record --file NAME=-`: an Ogg Opus stream on standard input, read as it arrives (its length
/// is not known up front), records exactly what the same file on disk records.
@Suite("CLI: --file NAME=- (standard input)")
struct StandardInputTests {
    /// Runs `roomtap ARGS` with `bytes` written to its standard input in chunks of `chunk` bytes
    /// from another thread (the pipe's back-pressure paces the writer), then closed.
    private func record(_ arguments: [String], feeding bytes: Data, chunk: Int = 3_001) throws -> CLIRunner.Outcome {
        let pipe = ChildProcesses.pipe()
        let running = try CLIRunner.start(arguments, standardInput: pipe)
        let writer = pipe.fileHandleForWriting
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                do { try writer.write(contentsOf: bytes[offset..<end]) } catch { break }
                offset = end
            }
            try? writer.close()
            done.signal()
        }
        let outcome = running.wait(timeout: 120)
        done.wait()
        return outcome
    }

    private func samples(_ directory: URL, _ name: String) throws -> [Int16] {
        try WAVFile.readSamples(path: directory.appendingPathComponent("\(name).wav").path).1
    }

    private func report(_ directory: URL) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: directory.appendingPathComponent("room.json")))
        return json as? [String: Any] ?? [:]
    }

    private func track(_ report: [String: Any], _ name: String) -> [String: Any]? {
        (report["tracks"] as? [[String: Any]])?.first { $0["name"] as? String == name }
    }

    @Test func aPipedFileRecordsSampleExactlyWhatTheFileOnDiskRecords() throws {
        let fromDisk = try temporaryDirectory()
        try roomtap(["record", "--file", "alice=\(sample("alice"))", "--out", fromDisk.path, "--quiet"], expect: 0)
        let piped = try temporaryDirectory()
        let outcome = try record(
            ["record", "--file", "alice=-", "--out", piped.path, "--quiet"],
            feeding: try Data(contentsOf: URL(fileURLWithPath: sample("alice"))))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let a = try samples(piped, "alice")
        let b = try samples(fromDisk, "alice")
        #expect(a.count == 432_000 && b.count == 432_000, "9.0 s each: \(a.count) \(b.count)")
        let same = a == b
        #expect(same, "sample-exact")
        let source = track(try report(piped), "alice")?["source"] as? [String: Any]
        #expect(source?["path"] as? String == "-")
        #expect(source?["durationSamples"] as? Int == 432_000, "its length, known once it ended")
        #expect(source?["truncated"] as? Bool == false)
    }

    /// The room runs to the longest input: a file longer than the stream, or the stream longer
    /// than the files (with an offset on the stream).
    @Test func theRoomIsAsLongAsTheLongestInputStreamIncluded() throws {
        let alice = try Data(contentsOf: URL(fileURLWithPath: sample("alice")))
        for (others, streamSpec, expectedSamples) in [
            (["--file", "bob=\(sample("bob"))@2.5"], "alice=-", 504_000),  // bob ends at 10.5 s
            (["--file", "carol=\(sample("carol"))"], "alice=-@1.5", 504_000),  // alice ends at 10.5 s
            // Ends inside a frame: 499 + 432 000 samples, rounded up to 902 frames.
            (["--file", "carol=\(sample("carol"))"], "alice=-@0.0104", 432_960),
        ] {
            let piped = try temporaryDirectory()
            let outcome = try record(
                ["record"] + others + ["--file", streamSpec, "--out", piped.path, "--quiet"], feeding: alice)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let fromDisk = try temporaryDirectory()
            let diskSpec = streamSpec.replacingOccurrences(of: "=-", with: "=\(sample("alice"))")
            try roomtap(["record"] + others + ["--file", diskSpec, "--out", fromDisk.path, "--quiet"], expect: 0)
            let other = String(others[1].split(separator: "=")[0])
            for name in ["alice", other] {
                let a = try samples(piped, name)
                #expect(a.count == expectedSamples, "\(name): \(a.count)")
                let same = a == (try samples(fromDisk, name))
                #expect(same, "\(name) as from the file on disk")
            }
            #expect(try report(piped)["durationSamples"] as? Int == expectedSamples)
        }
    }

    @Test func ffmpegPipedIntoRoomtapRecords() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { return }
        let out = try temporaryDirectory()
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            "ffmpeg -nostdin -loglevel error -i \"$1\" -c:a copy -f ogg - | \"$2\" record --file bob=- --out \"$3\" "
                + "--quiet",
            "sh", sample("bob"), CLIRunner.executable.path, out.path,
        ]
        var env = ProcessInfo.processInfo.environment
        env["ROOMTAP_CONTROL"] = uniqueControlPath()
        shell.environment = env
        let err = ChildProcesses.pipe()
        shell.standardError = err
        try ChildProcesses.run(shell)
        shell.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(shell.terminationStatus == 0, "\(stderr)")
        let bob = try samples(out, "bob")
        let raw = try referenceDecode(of: sample("bob"))
        #expect(abs(bob.count - 384_000) <= 960, "about 8.0 s: \(bob.count)")
        let n = min(bob.count, raw.count) - 960
        let same = Array(bob[..<n]) == Array(raw[..<n])
        #expect(same, "ffmpeg copied the packets: the decode is the same")
    }

    @Test func onlyOneInputMayBeStandardInputAndNeverATerminal() throws {
        let out = try temporaryDirectory()
        let two = try roomtap(
            ["record", "--file", "a=-", "--file", "b=-", "--out", out.path.appending("/x")], expect: 64)
        #expect(two.stderrLines.count == 1 && two.stderr.contains("only one --file may read standard input"))
        // `script` gives roomtap a terminal on standard input.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = [
            "-qfec", "\(CLIRunner.executable.path) record --file alice=- --out \(out.path)/y", "/dev/null",
        ]
        var env = ProcessInfo.processInfo.environment
        env["ROOMTAP_CONTROL"] = uniqueControlPath()
        process.environment = env
        let screen = ChildProcesses.pipe()
        process.standardInput = ChildProcesses.pipe()
        process.standardOutput = screen
        process.standardError = screen
        try ChildProcesses.run(process)
        process.waitUntilExit()
        let said = String(decoding: screen.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 64, "\(said)")
        #expect(said.contains("roomtap: error: --file alice=- reads Ogg Opus from standard input, which is a terminal"))
        #expect(!FileManager.default.fileExists(atPath: out.path + "/y"), "nothing created")
    }

    /// The room clock's thread never waits on a pipe: a room on the real-time clock refuses
    /// standard input with one line, before creating anything.
    @Test func aRoomOnTheRealTimeClockRefusesStandardInput() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        for extra in [["--realtime"], ["--listen", "127.0.0.1:\(port)"]] {
            let refused = try roomtap(
                ["record", "--file", "alice=-", "--out", out.path.appending("/z")] + extra, expect: 64)
            #expect(refused.stderrLines.count == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("--file alice=- (standard input) can only be recorded offline"))
            #expect(!FileManager.default.fileExists(atPath: out.path + "/z"), "nothing created")
        }
    }
}
