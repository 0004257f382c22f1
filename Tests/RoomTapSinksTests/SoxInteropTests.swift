import Foundation
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// Another reader agrees: SoX (sox 14.4, Debian) opens roomtap's RIFF and RF64 files, snapshots
/// taken mid-write, and repaired files, and decodes the same samples.
@Suite(.enabled(if: WAVFixtures.tool("sox") != nil, "sox is not installed"))
struct SoxInteropTests {
    /// The samples sox decodes from `path`, as raw 16-bit little endian.
    private func soxSamples(_ path: String, dir: TemporaryDirectory) throws -> [Int16] {
        let raw = dir.file(UUID().uuidString + ".raw")
        let (status, output) = try WAVFixtures.run(
            WAVFixtures.tool("sox")!, ["-V1", path, "-t", "raw", "-e", "signed", "-b", "16", "-L", raw])
        #expect(status == 0, "sox: \(output)")
        let bytes = try WAVFixtures.bytes(raw)
        return (0..<(bytes.count / 2)).map { Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8) }
    }

    private func soxi(_ option: String, _ path: String) throws -> String {
        let (status, output) = try WAVFixtures.run(WAVFixtures.tool("soxi")!, [option, path])
        #expect(status == 0, "soxi \(option): \(output)")
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [(1, UInt64(0xFFFF_FFFF)), (2, 0xFFFF_FFFF), (1, 10_000), (2, 10_000)])
    func soxReadsRIFFAndRF64Files(channels: Int, threshold: UInt64) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.wav")
        let input = fullScaleNoise(480 * channels * 111, seed: 42)
        let writer = try WAVFixtures.write(
            input, channels: channels, to: path, options: testOptions { $0.rf64Threshold = threshold })
        #expect(writer.isRF64 == (threshold == 10_000))
        #expect(try soxSamples(path, dir: dir) == input)
        #expect(try soxi("-c", path) == "\(channels)")
        #expect(try soxi("-r", path) == "48000")
        #expect(try soxi("-s", path) == "\(480 * 111)")
    }

    @Test func soxReadsASnapshotTakenMidWriteAndItsRepair() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("live.wav")
        let input = fullScaleNoise(480 * 250)
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        try FrameFeeding.feed(input, channels: 1, to: writer)
        let snapshot = dir.file("snapshot.wav")
        try FileManager.default.copyItem(atPath: path, toPath: snapshot)
        let stated = try WAVFile.inspect(path: snapshot).frameCount
        let read = try soxSamples(snapshot, dir: dir)
        #expect(read.count == Int(stated) && read == Array(input.prefix(read.count)))
        #expect(read.count >= 480 * 250 - 48_000)
        _ = try WAVRepair.repair(path: snapshot)
        let repaired = try soxSamples(snapshot, dir: dir)
        #expect(repaired.count >= read.count && repaired == Array(input.prefix(repaired.count)))
        try writer.finish()
    }
}
