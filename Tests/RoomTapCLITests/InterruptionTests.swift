import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// Starts a long room (carol placed 30 minutes in, so the virtual clock has a lot of silence to
/// write) and returns once carol.wav has passed `bytes`.
func startLongRoom(out: URL, untilFileHas bytes: Int) throws -> Process {
    let process = Process()
    process.executableURL = CLIRunner.executable
    process.arguments = [
        "record", "--file", "alice=\(sample("alice"))", "--file", "carol=\(sample("carol"))@1800",
        "--out", out.path, "--mix",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try ChildProcesses.run(process)
    let wav = out.appendingPathComponent("carol.wav").path
    _ = waitUntil(timeout: .seconds(60)) {
        let size = (try? FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int) ?? 0
        return size > bytes || !process.isRunning
    }
    #expect(process.isRunning, "the room ended before it could be stopped")
    return process
}

/// A recorder stopped in the middle: SIGINT finalises every file; SIGKILL leaves files that are
/// readable as they are and that `roomtap repair` restores completely.
@Suite("CLI: interrupted recordings", .serialized)
struct InterruptionTests {
    @Test func sigintFinalisesEveryFileAtTheSameLength() throws {
        let out = try temporaryDirectory()
        let process = try startLongRoom(out: out, untilFileHas: 8_000_000)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        var lengths: Set<Int> = []
        for name in ["alice", "carol", "mix"] {
            let path = out.appendingPathComponent("\(name).wav").path
            let (file, samples) = try WAVFile.readSamples(path: path)
            #expect(Int64(samples.count) * 2 == file.dataSize, "\(name).wav header and data agree")
            lengths.insert(samples.count)
        }
        #expect(lengths.count == 1, "all files of a room have the same length: \(lengths)")
        #expect((lengths.first ?? 0) > 4_000_000)
        #expect((lengths.first ?? 0) % 480 == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        #expect((json as? [String: Any])?["stoppedEarly"] as? Bool == true)
    }

    /// The terminal or pipe that reads a recorder's progress goes away (a closed ssh session,
    /// `roomtap record ... 2>&1 | tee log` with `tee` killed): the recorder must not die of
    /// SIGPIPE or trap on the failed write; it finishes the room and exits 0.
    @Test func aRecorderOutlivesTheReaderOfItsStderr() throws {
        let out = try temporaryDirectory()
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments = [
            "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@0.5", "--realtime",
            "--duration", "1.5", "--out", out.path, "--force",
        ]
        let stderr = ChildProcesses.pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try ChildProcesses.run(process)
        try stderr.fileHandleForReading.close()  // nobody reads it any more
        #expect(waitUntil(timeout: .seconds(60)) { !process.isRunning }, "the room ends")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "not killed by a signal (\(process.terminationStatus))")
        #expect(process.terminationStatus == 0)
        for name in ["alice", "bob"] {
            let (file, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path)
            #expect(Int64(samples.count) * 2 == file.dataSize, "\(name).wav header and data agree")
            #expect(samples.count == 72_000, "\(name).wav holds the 1.5 s room")
        }
    }

    @Test func sigkillLeavesReadableFilesThatRepairRestores() throws {
        let out = try temporaryDirectory()
        let process = try startLongRoom(out: out, untilFileHas: 20_000_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        // room.json is kept while recording: it is there, saying the recording was cut.
        let cut = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        #expect((cut as? [String: Any])?["state"] as? String == "recording")

        let path = out.appendingPathComponent("carol.wav").path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let asLeft = try WAVFile.inspect(path: path)
        let onDisk = (Int64(size) - asLeft.dataOffset) / 2
        let claimed = asLeft.dataSize / 2
        #expect(claimed <= onDisk, "the header never claims audio that is not there")
        // At most one second of audio (plus one write buffer) is missing from what the header says.
        #expect(onDisk - claimed <= 48_000 + 32_768, "header is \(onDisk - claimed) samples behind")

        let outcome = try roomtap(["repair", path, out.appendingPathComponent("alice.wav").path], expect: 0)
        #expect(outcome.stdout.contains("carol.wav"))
        let repaired = try WAVFile.inspect(path: path)
        #expect(repaired.dataSize / 2 == onDisk, "repair restores every complete sample")
        let again = try roomtap(["repair", path], expect: 0)
        #expect(again.stdout.contains("intact"), "repair is idempotent: \(again.stdout)")
    }

    @Test func repairRefusesWhatIsNotAWAV() throws {
        let dir = try temporaryDirectory()
        let text = dir.appendingPathComponent("notes.wav")
        try Data("not a wav".utf8).write(to: text)
        let outcome = try roomtap(["repair", text.path], expect: 1)
        #expect(outcome.stderrLines.count == 1)
        #expect(outcome.stderr.contains("notes.wav"))
        #expect(try Data(contentsOf: text) == Data("not a wav".utf8))
    }
}
