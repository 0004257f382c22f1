import Foundation
import RoomTapAll
import RoomTapTestSupport
import Testing

/// Issue 10, defects 7 and 10: each message is one line that says what was wrong and what to do,
/// and a refused run leaves nothing on disk.
@Suite("CLI: clear one-line messages")
struct ClearMessagesTests {
    /// Runs roomtap, expects `status` and exactly `line` on stderr (nothing else).
    func expectError(_ arguments: [String], status: Int32 = 1, line: String, timeout: Double = 60) throws {
        let outcome = try roomtap(arguments, expect: status, timeout: timeout)
        #expect(outcome.stderrLines == ["roomtap: error: " + line], "stderr: \(outcome.stderr)")
    }

    /// A mono 16-bit 48 kHz WAV whose header states `stated` sample frames but holds `present`.
    func overstatedWAV(at path: String, stated: Int, present: Int) throws {
        var bytes: [UInt8] = []
        func le32(_ v: Int) { bytes += (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func le16(_ v: Int) { bytes += (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        bytes += Array("RIFF".utf8)
        le32(36 + 2 * stated)
        bytes += Array("WAVEfmt ".utf8)
        le32(16)
        le16(1)
        le16(1)
        le32(48_000)
        le32(96_000)
        le16(2)
        le16(16)
        bytes += Array("data".utf8)
        le32(2 * stated)
        bytes += (0..<(2 * present)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func repairReportsTheHeadersCount() throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("cut.wav").path
        try overstatedWAV(at: path, stated: 1000, present: 600)
        let outcome = try roomtap(["repair", path], expect: 0)
        #expect(outcome.stdout == "\(path): repaired: 600 samples readable (header said 1000)\n")
        #expect(outcome.stderr.isEmpty, "stderr: \(outcome.stderr)")
        #expect(try WAVFile.inspect(path: path).frameCount == 600)
    }

    @Test func outUnderARegularFile() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("afile")
        try Data("x".utf8).write(to: file)
        let out = file.appendingPathComponent("sub").path
        try expectError(
            ["record", "--file", "a=\(sample("carol"))", "--out", out],
            line: "cannot create output directory \(out): \(file.path) is not a directory; choose another --out")
        #expect(try listing(dir) == ["afile"])
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test func outWhereNoDirectoryCanBeMade() throws {
        let parentReason =
            getuid() == 0
            ? "/proc does not accept new directories (No such file or directory)"
            : "/proc is not writable (Permission denied)"
        try expectError(
            ["record", "--file", "a=\(sample("carol"))", "--out", "/proc/nope", "--quiet"],
            line: "cannot create output directory /proc/nope: \(parentReason); choose another --out")
        #expect(!FileManager.default.fileExists(atPath: "/proc/nope"))
    }

    @Test func timelineOutIsADirectory() throws {
        let dir = try temporaryDirectory()
        let recording = dir.appendingPathComponent("rec")
        try roomtap(["record", "--file", "carol=\(sample("carol"))", "--out", recording.path, "--quiet"], expect: 0)
        let before = try listing(recording)
        let existing = dir.appendingPathComponent("existing")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
        try expectError(
            ["timeline", recording.path, "--out", existing.path, "--force"],
            line: "--out \(existing.path) is a directory; give a file path for the SVG, e.g. "
                + "\(existing.path)/timeline.svg")
        #expect(try listing(existing).isEmpty)
        #expect(try listing(recording) == before)
        #expect(try listing(dir) == ["existing", "rec"])
    }

    @Test func timelineOfAFile() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("room.json")
        try Data("{}".utf8).write(to: file)
        try expectError(
            ["timeline", file.path],
            line: "\(file.path) is a file, not a directory; give the directory roomtap record --out wrote "
                + "(the one holding room.json)")
        #expect(try listing(dir) == ["room.json"])
    }

    @Test func fifoInputIsNotARegularFile() throws {
        let dir = try temporaryDirectory()
        let fifo = dir.appendingPathComponent("stream").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let out = dir.appendingPathComponent("o").path
        // Today's code opens the FIFO and blocks: the timeout turns that into a failure, not a hang.
        try expectError(
            ["record", "--file", "a=\(fifo)", "--out", out],
            line: "--file a=\(fifo) is not a regular file; roomtap needs a seekable Ogg Opus file "
                + "(save the stream to a file first, or pipe it in: --file a=-)",
            timeout: 20)
        #expect(try listing(dir) == ["stream"])
    }

    @Test func deviceInputIsNotARegularFile() throws {
        let dir = try temporaryDirectory()
        let out = dir.appendingPathComponent("o").path
        try expectError(
            ["record", "--file", "a=/dev/null", "--out", out],
            line: "--file a=/dev/null is not a regular file; roomtap needs a seekable Ogg Opus file "
                + "(save the stream to a file first, or pipe it in: --file a=-)")
        #expect(try listing(dir).isEmpty)
    }
}
