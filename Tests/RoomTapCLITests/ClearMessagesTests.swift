import Foundation
import RoomTap
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
}
