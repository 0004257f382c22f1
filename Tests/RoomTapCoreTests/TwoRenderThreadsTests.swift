import RoomTapCore
import RoomTapTestSupport
import Testing

/// A room rendering on two threads (the live setting for large rooms) produces exactly what one
/// thread does: every frame of every track, in order, with its content, and mixes that hear every
/// input of the same tick.
@Suite("Two render threads")
struct TwoRenderThreadsTests {
    @Test(arguments: [1, 2])
    func everyTrackGetsEveryFrameWithItsContent(renderThreads: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: renderThreads)
        var sources: [SyntheticSource] = []
        var sinks: [CollectingSink] = []
        var tracks: [AudioTrack] = []
        for i in 0..<17 {
            let offset = Int64(i * 373)
            let length = Int64(48_000 + i * 1_111)
            // The first two are small constants, so their mix is a plain sum (no limiting).
            let source: SyntheticSource =
                i < 2
                ? ConstantSource(Int16(100 * (i + 1)), offset: offset, length: length)
                : RampSource(step: Int64(i + 1), offset: offset, length: length)
            let track = room.addTrack(name: "t\(i)", source: source)
            let sink = CollectingSink(reserveFrames: 200)
            track.addSink(sink)
            sources.append(source)
            sinks.append(sink)
            tracks.append(track)
        }
        let mix = room.addMix(name: "mix", inputs: Array(tracks.prefix(2)))
        let mixSink = CollectingSink(reserveFrames: 200)
        mix.addSink(mixSink)
        room.run()
        let end = Int64(16 * 373 + 48_000 + 16 * 1_111)
        let frames = Int((end + 479) / 480)
        #expect(room.position == Int64(frames) * 480)
        for (i, sink) in sinks.enumerated() {
            #expect(sink.roomSamples == (0..<Int64(frames)).map { $0 * 480 }, "track \(i) frames")
            #expect(sink.samples == sources[i].expectedSamples(0..<Int64(frames) * 480), "track \(i) content")
        }
        // The mix of t0 and t1 in the same tick: their sum (small values, no limiting).
        let expectedMix = zip(sinks[0].samples, sinks[1].samples).map { Int16(Int($0) + Int($1)) }
        #expect(mixSink.samples == expectedMix)
    }
}
