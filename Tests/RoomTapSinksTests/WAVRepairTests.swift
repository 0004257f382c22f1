import Foundation
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// Files cut short or killed mid-write are made readable to their last complete sample frame,
/// without touching the audio, idempotently.
@Suite struct WAVRepairTests {
    /// Cuts a finished file at `cut` bytes, repairs it, and checks the outcome against the original.
    private func checkCut(
        bytes: [UInt8], samples: [Int16], channels: Int, dataOffset: Int, cut: Int, dir: TemporaryDirectory
    ) throws {
        let path = dir.file("cut-\(cut).wav")
        try WAVFixtures.setBytes(Array(bytes.prefix(cut)), path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fmtEnd = 48 + 8 + 16
        guard cut >= fmtEnd else {
            // No complete fmt chunk: nothing to recover, and the file is left as it was.
            let error = #expect(throws: WAVError.self) { try WAVRepair.repair(path: path) }
            #expect(error?.kind == (cut < 12 ? .notAWAV : .damaged), "cut at \(cut)")
            #expect(try WAVFixtures.bytes(path) == Array(bytes.prefix(cut)))
            return
        }
        let report = try WAVRepair.repair(path: path)
        let blockAlign = 2 * channels
        let frames = max(0, cut - dataOffset) / blockAlign
        let (file, read) = try WAVFile.readSamples(path: path)
        #expect(read == Array(samples.prefix(frames * channels)), "cut at \(cut)")
        #expect(report.samplesAfter == Int64(frames) && file.frameCount == Int64(frames) && !file.isTruncated)
        #expect(file.riffSize == file.fileSize - 8 && file.fileSize == file.dataOffset + file.dataSize)
        #expect(report.changed)
        if cut >= dataOffset {
            #expect(report.bytesTrimmed == (cut - dataOffset) % blockAlign, "only the partial sample frame is cut")
            let after = try WAVFixtures.bytes(path)
            #expect(after[dataOffset...] == bytes[dataOffset..<(dataOffset + frames * blockAlign)], "audio untouched")
        }
        // Idempotent: a second repair changes nothing.
        let before = try WAVFixtures.bytes(path)
        let again = try WAVRepair.repair(path: path)
        #expect(!again.changed && again.samplesAfter == Int64(frames) && again.bytesTrimmed == 0)
        #expect(try WAVFixtures.bytes(path) == before)
    }

    @Test(arguments: [1, 2])
    func aFileCutAtAnyOffsetIsRepairedToEveryCompleteSampleFrame(channels: Int) throws {
        let dir = try TemporaryDirectory()
        let original = dir.file("original.wav")
        let samples = fullScaleNoise(480 * channels * 25, seed: 11)
        let writer = try WAVFixtures.write(samples, channels: channels, to: original, options: testOptions())
        let bytes = try WAVFixtures.bytes(original)
        let dataOffset = writer.dataOffset
        var cuts = Set<Int>()
        cuts.formUnion([0, 3, 11, 12, 13, 20, 47, 48, 56, 71, 72, 73, 79, 80, 400, 700])  // inside the header
        cuts.formUnion((dataOffset - 9)...(dataOffset + 9))  // around the data chunk header and data start
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<40 { cuts.insert(Int.random(in: dataOffset..<bytes.count, using: &rng)) }  // mid-data, mid-sample
        cuts.formUnion([bytes.count - 3, bytes.count - 2, bytes.count - 1])
        for cut in cuts.sorted() {
            try checkCut(
                bytes: bytes, samples: samples, channels: channels, dataOffset: dataOffset, cut: cut, dir: dir)
        }
    }

    @Test func aFinishedFileIsLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("fine.wav")
        try WAVFixtures.write(fullScaleNoise(48_000), channels: 1, to: path)
        let bytes = try WAVFixtures.bytes(path)
        let report = try WAVRepair.repair(path: path)
        #expect(!report.changed && report.samplesBefore == 48_000 && report.samplesAfter == 48_000)
        #expect(try WAVFixtures.bytes(path) == bytes)
    }

    /// A process killed before the first header refresh leaves a header that claims no data.
    @Test func aFileWhoseHeaderClaimsNoDataIsRepairedToFullLength() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("killed.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        let input = fullScaleNoise(480 * 80)  // 0.8 s: one 64 KiB buffer went out, no refresh yet
        try FrameFeeding.feed(input, channels: 1, to: writer)
        let killed = dir.file("killed-copy.wav")
        try FileManager.default.copyItem(atPath: path, toPath: killed)
        try writer.finish()

        let before = try WAVFile.inspect(path: killed)
        #expect(before.dataSize == 0 && before.frameCount == 0)
        let onDisk = Int(before.fileSize - before.dataOffset) / 2
        #expect(onDisk > 0, "the first buffer was written before the kill")
        let report = try WAVRepair.repair(path: killed)
        #expect(report.samplesBefore == 0 && report.samplesAfter == Int64(onDisk) && report.changed)
        #expect(try WAVFile.readSamples(path: killed).samples == Array(input.prefix(onDisk)))
    }

    @Test(arguments: [UInt32(0), 0xFFFF_FFFF, 0x7FFF_0000])
    func aDataSizeOfZeroAllOnesOrPastTheFileIsRepaired(statedSize: UInt32) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("stated.wav")
        let input = fullScaleNoise(480 * 30)
        let writer = try WAVFixtures.write(input, channels: 1, to: path)
        var bytes = try WAVFixtures.bytes(path)
        setLE32(&bytes, writer.dataOffset - 4, statedSize)
        setLE32(&bytes, 4, statedSize == 0 ? UInt32(writer.dataOffset - 8) : statedSize)
        bytes.append(0x55)  // and half a sample at the end
        try WAVFixtures.setBytes(bytes, path)
        let report = try WAVRepair.repair(path: path)
        #expect(report.changed && report.samplesAfter == 480 * 30 && report.bytesTrimmed == 1)
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(samples == input && file.dataSize == Int64(input.count * 2) && file.riffSize == file.fileSize - 8)
    }

    @Test func chunksAfterTheDataAreKept() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("list.wav")
        let input = fullScaleNoise(4800)
        let writer = try WAVFixtures.write(input, channels: 1, to: path)
        var bytes = try WAVFixtures.bytes(path)
        let list = Array("LIST".utf8) + [5, 0, 0, 0] + Array("INFOx".utf8) + [0]  // odd size, padded
        bytes += list
        try WAVFixtures.setBytes(bytes, path)  // RIFF size now 14 bytes short
        let report = try WAVRepair.repair(path: path)
        #expect(report.changed && report.bytesTrimmed == 0 && report.samplesAfter == 4800)
        let repaired = try WAVFixtures.bytes(path)
        #expect(repaired.count == bytes.count && Int(le32(repaired, 4)) == repaired.count - 8)
        #expect(Array(repaired[(writer.dataOffset + 9600)...]) == list)
        #expect(try WAVFile.readSamples(path: path).samples == input)
        #expect(!(try WAVRepair.repair(path: path)).changed)
    }

    @Test func somethingThatIsNotAWAVIsRefusedAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        for (name, content) in [("text.wav", Array("hello, this is not audio\n".utf8)), ("empty.wav", [])] {
            let path = dir.file(name)
            try WAVFixtures.setBytes(content, path)
            let error = #expect(throws: WAVError.self) { try WAVRepair.repair(path: path) }
            #expect(error?.kind == .notAWAV && error?.description.hasPrefix("\(path): not a WAV file") == true)
            #expect(try WAVFixtures.bytes(path) == content)
        }
        let missing = #expect(throws: WAVError.self) { try WAVRepair.repair(path: dir.file("missing.wav")) }
        #expect(missing?.kind == .cannotOpen)
    }

    @Test func aCutInsideTheHeaderAfterFmtGivesAnEmptyButValidFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("header.wav")
        try WAVFixtures.write(fullScaleNoise(4800), channels: 1, to: path)
        let bytes = try WAVFixtures.bytes(path)
        try WAVFixtures.setBytes(Array(bytes.prefix(300)), path)  // inside bext
        let report = try WAVRepair.repair(path: path)
        #expect(report.changed && report.samplesAfter == 0 && report.bytesTrimmed == 300 - 72)
        let file = try WAVFile.inspect(path: path)
        #expect(file.frameCount == 0 && file.fileSize == 80 && file.dataOffset == 80 && file.bextDescription == nil)
    }
}
