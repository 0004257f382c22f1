import Foundation
import Glibc
import RoomTapCore
import RoomTapSinks
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The sink as the room uses it: one file per track, all on one timeline; a full disk stops the
/// writing cleanly.
@Suite struct WAVFileSinkTests {
    /// Behind the writer pool's queues, in step; and written on the render threads (no queue) by
    /// a room of two threads rendering chunks.
    @Test(arguments: [false, true])
    func aRoomRecordsEveryTrackToAlignedFilesOfTheSameLength(onRenderThreads: Bool) throws {
        let dir = try TemporaryDirectory()
        let sinks = Locked<[String: WAVFileSink]>([:])
        let closed = Locked<[String: Int64]>([:])
        let room = Room(
            clock: VirtualClock(),
            events: RoomEvents(
                onTrackAdded: { track in
                    let sink = try! WAVFileSink(
                        path: dir.file("\(track.name).wav"), channels: track.channels,
                        options: testOptions { $0.description = "roomtap track \(track.name)" }, policy: .wait,
                        delivery: onRenderThreads ? .renderThread : .pool(.shared))
                    track.addSink(sink)
                    sinks.withLock { $0[track.name] = sink }
                },
                onTrackRemoved: { track in
                    guard let sink = sinks.withLock({ $0.removeValue(forKey: track.name) }) else { return }
                    try! sink.close()
                    closed.withLock { $0[track.name] = sink.samplesWritten }
                }), renderThreads: onRenderThreads ? 2 : 1, parallelThreshold: 2, chunkTicks: onRenderThreads ? 50 : 1)
        let ramp = RampSource(length: 48_000 * 3 + 17)
        let late = SineSource(frequency: 440, amplitude: 20_000, channels: 2, offset: 60_000, length: 48_000)
        let short = ConstantSource(1234, length: 4_800)
        room.addTrack(name: "ramp", source: ramp)
        room.addTrack(name: "late", source: late)
        room.addTrack(name: "short", source: short)
        room.run()

        let frames = (48_000 * 3 + 17 + 479) / 480  // the room ends on the frame the longest source ends in
        let length = Int64(frames * 480)
        #expect(closed.withLock { $0 } == ["ramp": length, "late": length, "short": length])
        for (name, source) in [("ramp", ramp as SyntheticSource), ("late", late), ("short", short)] {
            let (file, samples) = try WAVFile.readSamples(path: dir.file("\(name).wav"))
            #expect(file.frameCount == length, "\(name)")
            #expect(samples == source.expectedSamples(0..<length), "\(name) matches its source, sample for sample")
            #expect(file.bextDescription == "roomtap track \(name)")
        }
    }

    @Test func manyFilesShareTheWriterPoolsFewThreads() throws {
        let dir = try TemporaryDirectory()
        let input = fullScaleNoise(480 * 40, seed: 11)
        let sinks = try (0..<60).map { k in
            try WAVFileSink(path: dir.file("\(k).wav"), channels: 1, options: testOptions(), policy: .wait)
        }
        for sink in sinks { FrameFeeding.feed(input, channels: 1, to: sink) }
        let writers = ThreadCensus.count(named: "roomtap.writer")
        #expect(writers >= 1 && writers <= SinkWorkerPool.shared.workerCount, "\(writers) writer threads for 60 files")
        for sink in sinks { try sink.close() }
        for k in 0..<60 { #expect(try WAVFile.readSamples(path: dir.file("\(k).wav")).samples == input) }
    }

    @Test(arguments: [false, true])
    func closeIsIdempotentAndFramesAfterItAreDropped(onRenderThread: Bool) throws {
        let dir = try TemporaryDirectory()
        let sink = try WAVFileSink(
            path: dir.file("a.wav"), channels: 1, options: testOptions(), policy: .wait,
            delivery: onRenderThread ? .renderThread : .pool(.shared))
        let input = fullScaleNoise(480 * 50)
        FrameFeeding.feed(input, channels: 1, to: sink)
        try sink.close()
        try sink.close()
        FrameFeeding.feed(fullScaleNoise(480), channels: 1, start: 24_000, to: sink)
        #expect(sink.droppedFrames == 1 && sink.consumedFrames == 50 && sink.samplesWritten == 24_000)
        #expect(try WAVFile.readSamples(path: dir.file("a.wav")).samples == input)
    }

    @Test func framesTheQueueDropsBecomeSilenceSoTheFileKeepsTheTimeline() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("drops.wav")
        // A one-frame queue fed as fast as the test thread can: the writer cannot keep up.
        let sink = try WAVFileSink(path: path, channels: 1, options: testOptions(), policy: .drop, capacity: 1)
        let frames = 3_000
        let input = fullScaleNoise(480 * frames, seed: 8)
        FrameFeeding.feed(input, channels: 1, to: sink)
        try sink.close()
        #expect(sink.droppedFrames > 0, "the test needs drops to mean anything")
        #expect(sink.droppedFrames + sink.consumedFrames == frames)
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(file.frameCount == Int64(480 * frames) && sink.samplesWritten == Int64(480 * frames))
        var silent = 0
        var wrong = 0
        for f in 0..<frames {
            let got = samples[(f * 480)..<((f + 1) * 480)]
            if got.allSatisfy({ $0 == 0 }) {
                silent += 1
            } else if got != input[(f * 480)..<((f + 1) * 480)] {
                wrong += 1
            }
        }
        #expect(wrong == 0, "every frame that was written is in its place")
        #expect(silent == sink.droppedFrames, "every dropped frame is silence, the last ones included")
    }

    @Test(arguments: [false, true])
    func stereoFramesToAMonoSinkAreDownmixed(onRenderThread: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("mono.wav")
        let sink = try WAVFileSink(
            path: path, channels: 1, options: testOptions(), policy: .wait,
            delivery: onRenderThread ? .renderThread : .pool(.shared))
        let stereo = fullScaleNoise(960 * 20, seed: 12)
        FrameFeeding.feed(stereo, channels: 2, to: sink)
        try sink.close()
        let expected = (0..<(480 * 20)).map { (i: Int) -> Int16 in
            let sum = Int32(stereo[2 * i]) + Int32(stereo[2 * i + 1])
            return Int16(sum / 2)
        }
        #expect(try WAVFile.readSamples(path: path).samples == expected)
    }

    @Test(arguments: [false, true])
    func aFullDiskStopsWritingLeavesAValidFileAndCloseThrows(onRenderThread: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("full.wav")
        let capacity: Int64 = 100_001  // odd: the last write is cut inside a sample
        let sink = try WAVFileSink(
            path: path, channels: 1, options: testOptions { $0.simulatedDiskCapacity = capacity }, policy: .wait,
            capacity: 16, delivery: onRenderThread ? .renderThread : .pool(.shared))
        let input = fullScaleNoise(480 * 300)
        FrameFeeding.feed(input, channels: 1, to: sink)
        let error = #expect(throws: WAVError.self) { try sink.close() }
        #expect(error?.kind == .writeFailed && error?.errno == ENOSPC)
        #expect(error?.message.contains("No space left on device") == true)
        #expect(error?.description.contains("\n") == false)
        #expect(sink.failure != nil)
        #expect(sink.droppedFrames > 0 && sink.droppedFrames + sink.consumedFrames == 300)
        // The file holds every complete sample that fit, and says so.
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(file.fileSize <= capacity && !file.isTruncated && file.fileSize == file.dataOffset + file.dataSize)
        #expect(file.riffSize == file.fileSize - 8 && file.frameCount == sink.samplesWritten)
        #expect(samples.count > 40_000 && samples == Array(input.prefix(samples.count)))
        #expect(throws: WAVError.self) { try sink.close() }  // the same outcome again
    }

    @Test func aWriterThatFailedKeepsFailing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("fail.wav")
        let writer = try WAVWriter(path: path, channels: 2, options: testOptions { $0.simulatedDiskCapacity = 20_000 })
        let error = #expect(throws: WAVError.self) {
            try FrameFeeding.feed(fullScaleNoise(960 * 100), channels: 2, to: writer)
        }
        #expect(error?.kind == .writeFailed)
        #expect(throws: WAVError.self) { try writer.finish() }
        #expect(throws: WAVError.self) { try writer.drained() }
        let file = try WAVFile.inspect(path: path)
        #expect(file.frameCount == writer.samplesWritten && file.fileSize <= 20_000 && file.dataSize % 4 == 0)
    }

    @Test func aHeaderThatDoesNotFitIsReportedAndTheFileRemoved() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("tiny.wav")
        let error = #expect(throws: WAVError.self) {
            try WAVWriter(path: path, channels: 1, options: testOptions { $0.simulatedDiskCapacity = 100 })
        }
        #expect(error?.kind == .writeFailed && error?.message.hasPrefix("cannot write the header") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
