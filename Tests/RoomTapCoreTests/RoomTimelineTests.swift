import Foundation
import RoomTapCore
import RoomTapTestSupport
import Testing

/// One timeline for every track: same frames, sample-exact placement, and the room ends on the
/// frame in which the longest source finishes.
@Suite struct RoomTimelineTests {
    @Test func everyTrackGetsTheSameFramesAndEachSampleIsWhereItsSourcePutIt() {
        let room = Room(clock: VirtualClock())
        let sources: [SyntheticSource] = [
            RampSource(length: 10_000),
            SineSource(frequency: 997, amplitude: 30_000, channels: 2, offset: 30_017, length: 20_000),
            ConstantSource(7, offset: 1, length: 5),
            RampSource(step: 3, channels: 2, offset: 481, length: 2_000),
        ]
        var pairs: [(AudioTrack, CollectingSink, SyntheticSource)] = []
        for (i, source) in sources.enumerated() {
            let track = room.addTrack(name: "t\(i)", source: source)
            let sink = CollectingSink()
            track.addSink(sink)
            pairs.append((track, sink, source))
        }
        room.run()
        let frames = (30_017 + 20_000 + 479) / 480
        #expect(room.position == Int64(frames * 480))
        for (track, sink, source) in pairs {
            #expect(sink.roomSamples == (0..<Int64(frames)).map { $0 * 480 }, "\(track.name)")
            #expect(sink.samples == source.expectedSamples(0..<Int64(frames * 480)), "\(track.name) sample-exact")
            let expectedStatuses = (0..<Int64(frames)).map { f -> FrameStatus in
                let end = source.offset + source.length!
                return f * 480 + 480 > source.offset && f * 480 < end ? .normal : .silence
            }
            #expect(sink.statuses == expectedStatuses, "\(track.name)")
            #expect(sink.entries.allSatisfy { $0.channels == source.channels })
            #expect(track.statistics.totalFrames == frames)
            #expect(track.statistics.frames(.normal) == expectedStatuses.filter { $0 == .normal }.count)
            #expect(track.statistics.frames(.silence) == expectedStatuses.filter { $0 == .silence }.count)
        }
    }

    @Test(arguments: [
        (Int64(0), Int64(1)), (0, 479), (0, 480), (0, 481), (0, 48_000), (17, 48_000), (463, 17), (5_000, 1),
    ])
    func theRoomEndsOnTheFrameInWhichTheLongestSourceFinishes(offset: Int64, length: Int64) {
        let room = Room(clock: VirtualClock())
        let longest = RampSource(offset: offset, length: length)
        let shorter = ConstantSource(1, length: 1)
        let sink = CollectingSink()
        room.addTrack(name: "longest", source: longest).addSink(sink)
        room.addTrack(name: "shorter", source: shorter)
        room.run()
        let frames = Int((offset + length + 479) / 480)
        #expect(sink.frameCount == frames && longest.renderedFrames == frames && shorter.renderedFrames == frames)
        #expect(room.position == Int64(frames) * 480 && !room.isRunning)
        #expect(sink.statuses.last == .normal, "the last frame holds the last sample")
    }

    @Test func aMixHearsSourceTracksOfTheSameTickWhateverTheOrderTheyWereAdded() {
        let room = Room(clock: VirtualClock())
        let a = SineSource(frequency: 440, amplitude: 10_000, length: 9_600)
        let ta = room.addTrack(name: "a", source: a)
        let mixTrack = room.addMix(name: "mix", inputs: [ta])
        let b = ConstantSource(100, length: 9_600)
        let tb = room.addTrack(name: "b", source: b)  // added after the mix
        (mixTrack.source as! Mixer).addInput(tb)
        let mix = CollectingSink()
        mixTrack.addSink(mix)
        room.run()
        let expected = (0..<Int64(9_600)).map { n in
            a.expected(at: n) + b.expected(at: n)
        }
        #expect(mix.frameCount == 20)
        #expect(mix.samples == expected, "no frame of delay between a source and the mix")
    }
}
