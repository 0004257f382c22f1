import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The repository root (for Samples/), found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The sample room's files.
func sample(_ name: String) -> String { repositoryRoot.appendingPathComponent("Samples/room/\(name).opus").path }

/// A fresh directory named after the test, removed when the test process ends
/// (``TestScratch``; `ROOMTAP_KEEP_TEST_FILES=1` keeps it).
func temporaryDirectory(_ label: String = #function) throws -> URL { try TestScratch.directory(label) }

/// Runs roomtap and fails the test with its output if it did not exit with `status`: in this
/// process (``InProcessCLI``: give absolute paths) unless it is to run in `directory`, which takes
/// the binary (relative paths are resolved against a process's own working directory), killed
/// after `timeout` seconds.
@discardableResult
func roomtap(
    _ arguments: [String], expect status: Int32, in directory: URL? = nil, environment: [String: String] = [:],
    timeout: Double = 120
) throws -> CLIRunner.Outcome {
    guard directory == nil else {
        return try roomtapBinary(arguments, expect: status, in: directory, environment: environment, timeout: timeout)
    }
    let outcome = InProcessCLI.run(arguments, environment: environment)
    #expect(
        outcome.status == status,
        "roomtap \(arguments.joined(separator: " ")) exited \(outcome.status), stderr: \(outcome.stderr)")
    return outcome
}

/// Runs the `roomtap` executable (``CLIRunner``) and fails the test with its output if it did
/// not exit with `status`: for what only a process shows (its exit status as such, the
/// executable's wiring, relative paths in `directory`).
@discardableResult
func roomtapBinary(
    _ arguments: [String], expect status: Int32, in directory: URL? = nil, environment: [String: String] = [:],
    timeout: Double = 120
) throws -> CLIRunner.Outcome {
    let outcome = try CLIRunner.run(arguments, in: directory, environment: environment, timeout: timeout)
    #expect(
        outcome.status == status,
        "roomtap \(arguments.joined(separator: " ")) exited \(outcome.status), stderr: \(outcome.stderr)")
    return outcome
}

/// The reference: libopus's own decode of a file's packets (pre-skip and end trim applied).
func referenceDecode(of path: String, channels: Int = 1) throws -> [Int16] {
    let dump = try #require(OggPacketDump(path: path))
    return referenceDecode(
        packets: dump.audioPackets, channels: channels, preSkip: dump.preSkip,
        totalSamples: Int(dump.lastGranule) - dump.preSkip, gainQ8: dump.outputGainQ8)
}

/// Files in `directory`, sorted.
func listing(_ directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}

/// `GET url` with curl: the HTTP status (0 when nothing answered) and the body.
func httpGet(_ url: String) -> (status: Int, body: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", url]
    let pipe = Pipe()
    p.standardOutput = pipe
    try? p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
}

/// `roomtap ARGS` on a pseudo-terminal (through `script`), its screen read as it comes and its
/// keyboard a pipe: how `watch`'s full-screen view is driven.
///
/// Thread: the test's.
final class TerminalSession {
    let process = Process()
    private let keys = ChildProcesses.pipe()
    private let screenSoFar = Locked(Data())
    private let reader: BackgroundReader

    /// Starts `roomtap arguments` (joined with spaces) with `environment` added to this process's.
    init(_ arguments: String, environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", "\(CLIRunner.executable.path) \(arguments)", "/dev/null"]
        var processEnv = ProcessInfo.processInfo.environment
        for (k, v) in environment { processEnv[k] = v }
        processEnv["TERM"] = "xterm"
        process.environment = processEnv
        let screen = ChildProcesses.pipe()
        process.standardInput = keys
        process.standardOutput = screen
        process.standardError = screen
        let drawn = screenSoFar
        reader = BackgroundReader(screen.fileHandleForReading) { chunk in drawn.withLock { $0.append(chunk) } }
        try ChildProcesses.run(process)
    }

    /// Everything drawn so far.
    var shown: String { String(decoding: screenSoFar.withLock { $0 }, as: UTF8.self) }

    /// Presses `key`.
    func press(_ key: String) { try? keys.fileHandleForWriting.write(contentsOf: Data(key.utf8)) }

    /// Waits for the program to end (terminated if it has not after `timeout`) and for the last
    /// of its screen; true when it ended by itself.
    @discardableResult
    func finish(timeout: Duration = .seconds(60)) -> Bool {
        let ended = waitUntil(timeout: timeout) { !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? keys.fileHandleForWriting.close()
        reader.wait()
        return ended
    }
}

/// Each case (arguments added to `base`, a piece of the message) is refused as a usage error:
/// exit 64, the message in at most two lines. In this process (``InProcessCLI``).
func expectUsageErrors(_ base: [String], _ cases: [([String], String)], environment: [String: String]) {
    for (extra, message) in cases {
        let outcome = InProcessCLI.run(base + extra, environment: environment)
        #expect(outcome.status == 64, "\(extra): \(outcome.stderr)")
        #expect(outcome.stderr.contains(message) && outcome.stderrLines.count <= 2, "\(extra): \(outcome.stderr)")
    }
}
