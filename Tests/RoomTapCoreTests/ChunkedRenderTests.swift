import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// A virtual-clock room without mixes rendering its tracks in chunks (`chunkTicks` above 1, each
/// track on whichever render thread is free) gives every track exactly the frames a room in step
/// gives: every frame of the room, in order, with its content, and the room ends on the same tick.
@Suite("Chunked rendering")
struct ChunkedRenderTests {
    /// Tracks that start late, end early, end on and off frame boundaries, one finished before the
    /// room starts, one stereo.
    static func sources() -> [SyntheticSource] {
        [
            RampSource(step: 3, length: 96_017),
            ConstantSource(700, offset: 30_001, length: 48_000),
            SineSource(frequency: 440, amplitude: 20_000, channels: 2, offset: 12_345, length: 96_000),
            RampSource(step: 5, offset: 480 * 7, length: 480 * 3),
            ConstantSource(-9, length: 0),
            RampSource(step: 1, offset: 48_000, length: 480 * 100),
            ConstantSource(1_234, offset: 1, length: 113_777),
        ]
    }

    @Test(arguments: [(1, 7), (2, 7), (2, 50), (3, 1), (3, 2), (4, 1_000)])
    func everyTrackGetsTheFramesOfARoomInStep(threads: Int, chunk: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: threads, parallelThreshold: 2, chunkTicks: chunk)
        let sources = Self.sources()
        let sinks = sources.enumerated().map { i, source in
            let sink = CollectingSink(reserveFrames: 300)
            room.addTrack(name: "t\(i)", source: source).addSink(sink)
            return sink
        }
        room.run()
        let end: Int64 = 1 + 96_017 + 17_760  // the longest source's end (offset 1, 48_000 * 2 + 17 + 480 * 37)
        let frames: Int64 = (end + 479) / 480
        #expect(room.position == frames * 480)
        for (i, sink) in sinks.enumerated() {
            #expect(sink.roomSamples == (0..<frames).map { $0 * 480 }, "track \(i) frames")
            #expect(sink.samples == sources[i].expectedSamples(0..<frames * 480), "track \(i) content")
        }
    }

    /// In step, a room whose sources are all finished before it starts still renders one tick
    /// (a tick renders, then the room looks at its sources); chunked, too.
    @Test(arguments: [1, 50])
    func aRoomOfFinishedSourcesRendersOneFrame(chunk: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2, chunkTicks: chunk)
        let sinks = (0..<3).map { i in
            let sink = CollectingSink()
            room.addTrack(name: "t\(i)", source: ConstantSource(5, length: 0)).addSink(sink)
            return sink
        }
        room.run()
        #expect(room.position == 480)
        #expect(sinks.allSatisfy { $0.roomSamples == [0] })
    }

    /// A stop position inside a chunk ends the room exactly there: the frame starting at or after it
    /// is not rendered, on any track.
    @Test func aStopPositionEndsEveryTrackOnTheSameFrame() {
        let room = Room(clock: VirtualClock(), renderThreads: 3, parallelThreshold: 2, chunkTicks: 64)
        let sinks = (0..<5).map { i in
            let sink = CollectingSink(reserveFrames: 210)
            room.addTrack(name: "t\(i)", source: RampSource(step: Int64(i + 1))).addSink(sink)
            return sink
        }
        room.stop(atSample: 48_000 * 2 + 100)
        room.run()
        #expect(room.position == 201 * 480)
        #expect(sinks.allSatisfy { $0.roomSamples == (0..<201).map { $0 * 480 } })
    }

    /// Endless tracks, stopped from another thread while their chunks run ahead of one another:
    /// every track ends on the same frame, with no frame missing.
    @Test func aStopLeavesEveryTrackTheSameLength() {
        let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2, chunkTicks: 50)
        let sources = (0..<6).map { i in RampSource(step: Int64(i + 1)) }
        let sinks = sources.enumerated().map { i, source in
            let sink = CollectingSink(reserveFrames: 1_000)
            room.addTrack(name: "t\(i)", source: source).addSink(sink)
            return sink
        }
        room.start()
        #expect(waitUntil(timeout: .seconds(60)) { room.position >= 480 * 200 })
        room.stop()
        room.waitUntilFinished()
        let frames = room.position / 480
        #expect(frames >= 200)
        for (i, sink) in sinks.enumerated() {
            #expect(sink.roomSamples == (0..<frames).map { $0 * 480 }, "track \(i) frames")
            #expect(sink.samples == sources[i].expectedSamples(0..<frames * 480), "track \(i) content")
        }
    }

    /// A track added while tracks run ahead of one another in chunks joins them all on one tick
    /// and renders every frame from there to the room's end, as the others do.
    @Test func aTrackAddedWhileTheRoomRunsJoinsOnOneTick() {
        let sinks = Locked<[String: CollectingSink]>([:])
        let room = Room(
            clock: VirtualClock(), endsWhenSourcesFinish: true,
            events: RoomEvents(onTrackAdded: { track in
                let sink = CollectingSink(reserveFrames: 1_000)
                track.addSink(sink)
                sinks.withLock { $0[track.name] = sink }
            }), renderThreads: 2, parallelThreshold: 2, chunkTicks: 50)
        for i in 0..<4 { room.addTrack(name: "t\(i)", source: RampSource(step: Int64(i + 1))) }
        room.start()
        #expect(waitUntil(timeout: .seconds(60)) { room.position >= 480 * 100 })
        room.addTrack(name: "late", source: ConstantSource(42))
        #expect(waitUntil(timeout: .seconds(60)) { sinks.withLock { $0["late"]!.frameCount } >= 60 })
        room.stop()
        room.waitUntilFinished()
        let all = sinks.withLock { $0 }
        let frames = room.position / 480
        for i in 0..<4 { #expect(all["t\(i)"]!.roomSamples == (0..<frames).map { $0 * 480 }, "t\(i)") }
        let late = all["late"]!.roomSamples
        let joined = late.first ?? -1
        #expect(joined > 0 && late == Array(stride(from: joined, to: frames * 480, by: 480)))
        #expect(all["late"]!.samples.allSatisfy { $0 == 42 })
    }

    /// A mix needs its inputs' frames of the same tick: a room with one renders in step, chunks or
    /// not, and the mix is the sum of its inputs frame by frame.
    @Test func aRoomWithAMixRendersInStep() {
        let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2, chunkTicks: 50)
        let sinks = (0..<4).map { i in
            let sink = CollectingSink(reserveFrames: 200)
            room.addTrack(
                name: "t\(i)", source: ConstantSource(Int16(100 * (i + 1)), offset: Int64(i * 997), length: 48_000)
            )
            .addSink(sink)
            return sink
        }
        let mixSink = CollectingSink(reserveFrames: 200)
        room.addMix(name: "mix", inputs: room.tracks).addSink(mixSink)
        room.run()
        let inputs = sinks.map(\.samples)
        let expected = (0..<inputs[0].count).map { n -> Int16 in
            var sum = 0
            for input in inputs { sum += Int(input[n]) }
            return Int16(sum)
        }
        #expect(mixSink.samples == expected && expected.contains(1_000))
    }
}
