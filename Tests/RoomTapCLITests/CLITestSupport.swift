import Foundation
import RoomTap
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

/// Runs roomtap and fails the test with its output if it did not exit with `status`.
@discardableResult
func roomtap(_ arguments: [String], expect status: Int32, in directory: URL? = nil, timeout: Double = 120) throws
    -> CLIRunner.Outcome
{
    let outcome = try CLIRunner.run(arguments, in: directory, timeout: timeout)
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
