import Foundation
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// Past the threshold the file becomes RF64 (EBU Tech 3306): RF64 form, 0xFFFFFFFF in the 32-bit
/// size fields, the JUNK chunk turned into ds64 with the real sizes. Tested with a small injected
/// threshold; the real one (4 GiB) only differs in the number.
@Suite struct RF64Tests {
    /// Checks the raw RF64 header of `path` against `dataBytes` and `channels`.
    private func expectRF64Header(_ path: String, dataBytes: Int, channels: Int, dataOffset: Int) throws {
        let b = try WAVFixtures.bytes(path)
        #expect(fourCC(b, 0) == "RF64" && le32(b, 4) == 0xFFFF_FFFF && fourCC(b, 8) == "WAVE")
        #expect(fourCC(b, 12) == "ds64" && le32(b, 16) == 28)
        #expect(le64(b, 20) == UInt64(b.count - 8), "ds64 RIFF size")
        #expect(le64(b, 28) == UInt64(dataBytes), "ds64 data size")
        #expect(le64(b, 36) == UInt64(dataBytes / (2 * channels)), "ds64 sample count")
        #expect(le32(b, 44) == 0, "no table")
        #expect(fourCC(b, dataOffset - 8) == "data" && le32(b, dataOffset - 4) == 0xFFFF_FFFF)
    }

    @Test(arguments: [1, 2])
    func aFilePastTheThresholdIsRF64AndReadsBack(channels: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("big.wav")
        let input = fullScaleNoise(480 * channels * 120, seed: 5)  // 1.2 s, well past 10 000 bytes
        let writer = try WAVFixtures.write(
            input, channels: channels, to: path, options: testOptions { $0.rf64Threshold = 10_000 })
        #expect(writer.isRF64)
        try expectRF64Header(path, dataBytes: input.count * 2, channels: channels, dataOffset: writer.dataOffset)
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(file.isRF64 && file.dataSize == Int64(input.count * 2) && file.riffSize == file.fileSize - 8)
        #expect(file.ds64SampleCount == UInt64(480 * 120) && samples == input)
    }

    @Test func belowTheThresholdTheFileStaysRIFF() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("small.wav")
        let writer = try WAVFixtures.write(
            fullScaleNoise(4800), channels: 1, to: path, options: testOptions { $0.rf64Threshold = 100_000 })
        let b = try WAVFixtures.bytes(path)
        #expect(!writer.isRF64 && fourCC(b, 0) == "RIFF" && fourCC(b, 12) == "JUNK")
        #expect(b.count <= 100_000)
    }

    @Test func ds64IsKeptCurrentOnEveryRefreshAfterTheSwitch() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("growing.wav")
        let writer = try WAVWriter(
            path: path, channels: 1,
            options: testOptions {
                $0.rf64Threshold = 10_000
                $0.headerRefreshInterval = 0
            })
        let input = fullScaleNoise(480 * 40)
        var switchedAt: Int?
        for frame in 0..<40 {
            try FrameFeeding.feed(
                Array(input[(frame * 480)..<((frame + 1) * 480)]), channels: 1, start: Int64(frame * 480), to: writer)
            let total = writer.dataOffset + (frame + 1) * 960
            #expect(writer.isRF64 == (total > 10_000), "frame \(frame)")
            if writer.isRF64 {
                switchedAt = switchedAt ?? frame
                try expectRF64Header(path, dataBytes: (frame + 1) * 960, channels: 1, dataOffset: writer.dataOffset)
            } else {
                let b = try WAVFixtures.bytes(path)
                #expect(fourCC(b, 0) == "RIFF" && Int(le32(b, 4)) == b.count - 8)
            }
            #expect(try WAVFile.readSamples(path: path).samples == Array(input.prefix((frame + 1) * 480)))
        }
        #expect(switchedAt != nil)
        try writer.finish()
    }

    @Test func aCutRF64FileIsRepairedAndStaysRF64() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("rf64.wav")
        let input = fullScaleNoise(480 * 2 * 60, seed: 3)
        let writer = try WAVFixtures.write(
            input, channels: 2, to: path, options: testOptions { $0.rf64Threshold = 10_000 })
        let full = try WAVFixtures.bytes(path)
        for cut in [writer.dataOffset, writer.dataOffset + 1, writer.dataOffset + 20_003, full.count - 2] {
            let cutPath = dir.file("cut-\(cut).wav")
            try WAVFixtures.setBytes(Array(full.prefix(cut)), cutPath)
            let stated = try WAVFile.inspect(path: cutPath)
            #expect(stated.isTruncated && stated.isRF64 && stated.frameCount == Int64((cut - writer.dataOffset) / 4))
            let report = try WAVRepair.repair(path: cutPath)
            let frames = (cut - writer.dataOffset) / 4
            #expect(report.samplesAfter == Int64(frames) && report.bytesTrimmed == (cut - writer.dataOffset) % 4)
            try expectRF64Header(cutPath, dataBytes: frames * 4, channels: 2, dataOffset: writer.dataOffset)
            #expect(try WAVFile.readSamples(path: cutPath).samples == Array(input.prefix(frames * 2)))
            #expect(!(try WAVRepair.repair(path: cutPath)).changed)
        }
    }

    /// A RIFF file whose data grew past 4 GiB (here: a sparse file, no disk used) is turned into
    /// RF64 by repair, using the JUNK chunk reserved for ds64.
    @Test func repairTurnsARIFFFilePast4GiBIntoRF64ThroughTheJunkChunk() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("huge.wav")
        let input = fullScaleNoise(4800)
        let writer = try WAVFixtures.write(input, channels: 1, to: path)
        let size: Int64 = 0x1_0000_2000 + Int64(writer.dataOffset)  // past 4 GiB, whole sample frames
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        let report = try WAVRepair.repair(path: path)
        #expect(report.changed && report.samplesBefore == 4800 && report.samplesAfter == 0x1_0000_2000 / 2)
        let file = try WAVFile.inspect(path: path)
        #expect(file.isRF64 && file.dataSize == 0x1_0000_2000 && file.riffSize == size - 8)
        #expect(file.ds64SampleCount == 0x1_0000_2000 / 2 && file.fileSize == size)
        let head = try FileHandle(forReadingAtPath: path).map { try $0.read(upToCount: writer.dataOffset + 9_600) }
        let bytes = [UInt8](try #require(head ?? nil))
        let samples = (0..<4800).map { (i: Int) -> Int16 in
            let at = writer.dataOffset + 2 * i
            return Int16(bitPattern: UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8)
        }
        #expect(samples == input, "the audio is untouched")
    }
}
