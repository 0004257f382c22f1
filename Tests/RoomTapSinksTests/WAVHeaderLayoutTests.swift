import Foundation
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// The bytes of the header match the layout drawn in WAVHeader.swift (RIFF, JUNK reserved for
/// ds64, fmt, bext, data), and a freshly created file is already a valid, empty WAV.
@Suite struct WAVHeaderLayoutTests {
    @Test(arguments: [1, 2])
    func aNewFileIsAValidEmptyWAVWithTheDocumentedLayout(channels: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("new.wav")
        let writer = try WAVWriter(path: path, channels: channels, options: testOptions())
        // Before any frame: the file exists, and readers accept it as 0 samples.
        let empty = try WAVFile.inspect(path: path)
        #expect(empty.frameCount == 0 && empty.dataSize == 0 && !empty.isTruncated && !empty.isRF64)

        let b = try WAVFixtures.bytes(path)
        let history = "A=PCM,F=48000,W=16,M=\(channels == 1 ? "mono" : "stereo"),T=roomtap\r\n"
        let bextSize = 602 + history.utf8.count + history.utf8.count % 2
        #expect(fourCC(b, 0) == "RIFF" && fourCC(b, 8) == "WAVE")
        #expect(fourCC(b, 12) == "JUNK" && le32(b, 16) == 28 && b[20..<48].allSatisfy { $0 == 0 })
        #expect(fourCC(b, 48) == "fmt " && le32(b, 52) == 16)
        #expect(b[56] == 1 && b[57] == 0, "format tag PCM")
        #expect(Int(b[58]) == channels && le32(b, 60) == 48_000 && le32(b, 64) == UInt32(96_000 * channels))
        #expect(Int(b[68]) == 2 * channels && b[70] == 16)
        #expect(fourCC(b, 72) == "bext" && Int(le32(b, 76)) == bextSize && bextSize % 2 == 0)
        let dataChunk = 80 + bextSize
        #expect(fourCC(b, dataChunk) == "data" && le32(b, dataChunk + 4) == 0)
        #expect(b.count == dataChunk + 8 && writer.dataOffset == dataChunk + 8 && empty.dataOffset == Int64(b.count))
        #expect(Int(le32(b, 4)) == b.count - 8, "RIFF size = file size - 8")
        #expect(empty.bextCodingHistory == history)
        try writer.finish()
    }

    @Test func bextFieldsRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("bext.wav")
        // 2024-03-05 13:14:15.5 UTC
        let start = Date(timeIntervalSince1970: 1_709_644_455.5)
        let options = testOptions {
            $0.roomStartTime = start
            $0.description = "roomtap track alice"
        }
        try WAVFixtures.write(fullScaleNoise(4800), channels: 1, to: path, options: options)
        let file = try WAVFile.inspect(path: path)
        #expect(file.bextOriginationDate == "2024-03-05")
        #expect(file.bextOriginationTime == "13:14:15")
        let secondsSinceMidnight: UInt64 = 13 * 3600 + 14 * 60 + 15
        #expect(file.bextTimeReference == secondsSinceMidnight * 48_000 + 24_000, "+ 0.5 s")
        #expect(file.bextDescription == "roomtap track alice")
        #expect(file.bextOriginator == "roomtap")
        #expect(file.bextVersion == 1)
        #expect(file.bextCodingHistory == "A=PCM,F=48000,W=16,M=mono,T=roomtap\r\n")
    }

    @Test func timeReferenceCountsTheTimelineOriginAndMidnightIsZero() throws {
        let dir = try TemporaryDirectory()
        let midnight = Date(timeIntervalSince1970: 1_709_596_800)  // 2024-03-05 00:00:00 UTC
        let late = dir.file("late.wav")
        try WAVFixtures.write(
            [], channels: 1, to: late,
            options: testOptions {
                $0.roomStartTime = midnight
                $0.timelineOrigin = 96_000
            })
        let file = try WAVFile.inspect(path: late)
        #expect(file.bextOriginationDate == "2024-03-05" && file.bextOriginationTime == "00:00:00")
        #expect(file.bextTimeReference == 96_000)

        let unknown = dir.file("unknown.wav")
        try WAVFixtures.write([], channels: 1, to: unknown, options: testOptions { $0.timelineOrigin = 480 })
        let noStart = try WAVFile.inspect(path: unknown)
        #expect(noStart.bextOriginationDate == "" && noStart.bextOriginationTime == "")
        #expect(noStart.bextTimeReference == 480)
    }

    @Test func aLongDescriptionIsCutTo256BytesOnACharacterBoundary() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("long.wav")
        let description = String(repeating: "é", count: 200)  // 400 bytes of UTF-8
        try WAVFixtures.write([], channels: 1, to: path, options: testOptions { $0.description = description })
        let read = try #require(try WAVFile.inspect(path: path).bextDescription)
        #expect(read == String(repeating: "é", count: 128))
        #expect(try WAVFile.inspect(path: path).frameCount == 0)
    }
}
