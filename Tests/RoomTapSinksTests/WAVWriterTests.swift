import Foundation
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// What the writer puts in the file: the input, sample for sample, on the room timeline, with a
/// header that is correct after every refresh.
@Suite struct WAVWriterTests {
    @Test(arguments: [1, 2])
    func theFinishedFileEqualsTheInputSampleForSample(channels: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("out.wav")
        let input = fullScaleNoise(480 * channels * 317, seed: UInt64(channels))  // 3.17 s
        let writer = try WAVFixtures.write(input, channels: channels, to: path, options: testOptions())
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(samples == input)
        #expect(file.channels == channels && file.sampleRate == 48_000 && file.bitsPerSample == 16)
        #expect(file.frameCount == 480 * 317 && writer.samplesWritten == 480 * 317)
        #expect(file.dataSize == Int64(input.count * 2) && file.fileSize == file.dataOffset + file.dataSize)
        #expect(file.riffSize == file.fileSize - 8 && file.warnings.isEmpty && !file.isRF64)
    }

    @Test(arguments: [1, 2])
    func theHeaderIsValidAfterEveryRefresh(channels: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("refresh.wav")
        let input = fullScaleNoise(480 * channels * 200, seed: 7)
        let writer = try WAVWriter(
            path: path, channels: channels, options: testOptions { $0.headerRefreshInterval = 0 })
        var fed = 0
        for batch in [1, 2, 3, 50, 7, 100, 37] {
            let part = Array(input[(fed * 480 * channels)..<((fed + batch) * 480 * channels)])
            try FrameFeeding.feed(part, channels: channels, start: Int64(fed * 480), to: writer)
            fed += batch
            try writer.drained()
            let (file, samples) = try WAVFile.readSamples(path: path)
            #expect(file.dataSize == Int64(fed * 480 * 2 * channels), "after \(fed) frames")
            #expect(file.fileSize == file.dataOffset + file.dataSize && file.riffSize == file.fileSize - 8)
            #expect(writer.samplesWritten == Int64(fed * 480))
            #expect(samples == Array(input.prefix(fed * 480 * channels)))
        }
        try writer.finish()
    }

    @Test func anExplicitRefreshWritesTheBufferAndTheSizes() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("explicit.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        let input = fullScaleNoise(480 * 10)
        try FrameFeeding.feed(input, channels: 1, to: writer)
        // 0.1 s of audio, just now: still in the buffer, the header says 0.
        #expect(try WAVFile.inspect(path: path).dataSize == 0)
        try writer.refreshHeader()
        #expect(try WAVFile.readSamples(path: path).samples == input)
        try writer.finish()
    }

    @Test func theHeaderIsRefreshedAtLeastOncePerSecondOfAudio() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("audio-paced.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())  // interval 1 s
        let input = fullScaleNoise(480 * 350)
        for frame in 0..<350 {
            try FrameFeeding.feed(
                Array(input[(frame * 480)..<((frame + 1) * 480)]), channels: 1, start: Int64(frame * 480), to: writer)
            // No drained(), and the loop is far faster than real time: only the audio criterion applies.
            let stated = try WAVFile.inspect(path: path).frameCount
            #expect(Int64(frame + 1) * 480 - stated <= 48_000, "frame \(frame): header \(stated) samples behind")
        }
        try writer.finish()
    }

    @Test func theHeaderIsRefreshedByWallTimeWhenAudioIsSlow() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("wall-paced.wav")
        let sink = try WAVFileSink(path: path, channels: 1, options: testOptions { $0.headerRefreshInterval = 0.2 })
        let input = fullScaleNoise(480 * 5)  // 50 ms of audio: far below the audio criterion
        FrameFeeding.feed(input, channels: 1, to: sink)
        var stated: Int64 = 0
        _ = waitUntil(timeout: .seconds(30)) {
            stated = (try? WAVFile.inspect(path: path).frameCount) ?? 0
            return stated == 5 * 480
        }
        #expect(stated == 5 * 480, "the sink's idle drained() calls must refresh the header within the interval")
        #expect(try WAVFile.readSamples(path: path).samples == input)
        try sink.close()
    }

    /// SIGKILL loses the process's memory (the write buffer), not what write(2) handed the kernel.
    /// So a copy of the file taken between two frames is what a kill at that moment would leave.
    @Test func aSnapshotTakenMidWriteIsReadableAndMissesLessThanOneSecond() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("live.wav")
        let snapshot = dir.file("snapshot.wav")
        let input = fullScaleNoise(480 * 2 * 620, seed: 99)  // stereo, 6.2 s
        let writer = try WAVWriter(path: path, channels: 2, options: testOptions())
        var checked = 0
        for frame in 0..<620 {
            let range = (frame * 960)..<((frame + 1) * 960)
            try FrameFeeding.feed(Array(input[range]), channels: 2, start: Int64(frame * 480), to: writer)
            guard frame % 23 == 5 else { continue }
            try FileManager.default.copyItem(atPath: path, toPath: snapshot)
            defer { try? FileManager.default.removeItem(atPath: snapshot) }
            let written = (frame + 1) * 480
            let (file, samples) = try WAVFile.readSamples(path: snapshot)
            #expect(!file.isTruncated, "the header never claims bytes that are not there")
            #expect(written - Int(file.frameCount) < 48_000, "frame \(frame): lost \(written - Int(file.frameCount))")
            #expect(samples == Array(input.prefix(samples.count)))
            // Repair then recovers everything but the unwritten buffer.
            let report = try WAVRepair.repair(path: snapshot)
            let (_, repaired) = try WAVFile.readSamples(path: snapshot)
            #expect(report.samplesAfter == Int64(repaired.count / 2))
            #expect(repaired == Array(input.prefix(repaired.count)))
            #expect((written * 4) - repaired.count * 2 <= WAVWriter.bufferSize)
            checked += 1
        }
        #expect(checked == 27)
        try writer.finish()
    }

    @Test func stereoFramesWrittenToAMonoFileAreDownmixedAndMonoToStereoDuplicated() throws {
        let dir = try TemporaryDirectory()
        let stereo: [Int16] = (0..<960).map { (i: Int) -> Int16 in i % 2 == 0 ? Int16(1000 + i) : Int16(-3 - i) }
        let monoPath = dir.file("down.wav")
        let writer = try WAVWriter(path: monoPath, channels: 1, options: testOptions())
        try FrameFeeding.withFrame(stereo[...], channels: 2, roomSample: 0) { try writer.consume($0) }
        try writer.finish()
        let expected: [Int16] = (0..<480).map { (i: Int) -> Int16 in
            let sum = Int32(stereo[2 * i]) + Int32(stereo[2 * i + 1])
            return Int16(sum / 2)
        }
        #expect(try WAVFile.readSamples(path: monoPath).samples == expected)

        let mono = fullScaleNoise(480)
        let stereoPath = dir.file("up.wav")
        let up = try WAVWriter(path: stereoPath, channels: 2, options: testOptions())
        try FrameFeeding.withFrame(mono[...], channels: 1, roomSample: 0) { try up.consume($0) }
        try up.finish()
        #expect(try WAVFile.readSamples(path: stereoPath).samples == mono.flatMap { [$0, $0] })
    }

    @Test func roomTimeWithoutFramesBecomesSilenceSoFilesStayAligned() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("gaps.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        let a = fullScaleNoise(480, seed: 1)
        let b = fullScaleNoise(480, seed: 2)
        let c = fullScaleNoise(480, seed: 3)
        // The first frame arrives 1 s in (a late track), then 9 frames are missing (a full queue),
        // then 3 s are missing (longer than the write buffer: a hole in the file).
        try FrameFeeding.withFrame(a[...], channels: 1, roomSample: 48_000) { try writer.consume($0) }
        try FrameFeeding.withFrame(b[...], channels: 1, roomSample: 48_000 + 4_800) { try writer.consume($0) }
        try FrameFeeding.withFrame(c[...], channels: 1, roomSample: 48_000 + 5_280 + 144_000) {
            try writer.consume($0)
        }
        // A frame from the past is ignored.
        try FrameFeeding.withFrame(a[...], channels: 1, roomSample: 0) { try writer.consume($0) }
        try writer.finish()
        let expected =
            [Int16](repeating: 0, count: 48_000) + a + [Int16](repeating: 0, count: 4_320) + b
            + [Int16](repeating: 0, count: 144_000) + c
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(samples.count == expected.count && samples == expected)
        #expect(writer.samplesWritten == Int64(expected.count) && file.frameCount == Int64(expected.count))
    }

    @Test func aTimelineOriginStartsTheFileThereAndSkipsEarlierFrames() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("origin.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions { $0.timelineOrigin = 960 })
        let input = fullScaleNoise(480 * 4)
        try FrameFeeding.feed(input, channels: 1, to: writer)  // room samples 0..<1920
        try writer.finish()
        #expect(try WAVFile.readSamples(path: path).samples == Array(input[960...]))
    }

    @Test func finishIsIdempotentAndLaterFramesAreRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("done.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        try FrameFeeding.feed(fullScaleNoise(4800), channels: 1, to: writer)
        try writer.finish()
        let bytes = try WAVFixtures.bytes(path)
        try writer.finish()
        try writer.drained()
        #expect(throws: WAVError.self) {
            try FrameFeeding.feed(fullScaleNoise(480), channels: 1, start: 4800, to: writer)
        }
        #expect(try WAVFixtures.bytes(path) == bytes)
    }

    @Test func muteAndSilenceFramesAreWrittenAsZeros() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("muted.wav")
        let writer = try WAVWriter(path: path, channels: 1, options: testOptions())
        let zeros = [Int16](repeating: 0, count: 480)
        try FrameFeeding.withFrame(zeros[...], channels: 1, roomSample: 0, status: .muted) { try writer.consume($0) }
        try FrameFeeding.withFrame(zeros[...], channels: 1, roomSample: 480, status: .silence) {
            try writer.consume($0)
        }
        try writer.finish()
        #expect(try WAVFile.readSamples(path: path).samples == zeros + zeros)
    }
}
