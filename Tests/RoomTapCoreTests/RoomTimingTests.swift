import RoomTapCore
import RoomTapTestSupport
import Testing

/// A room whose record follows its live audio by `recordDelayFrames` (a network room's timing):
/// sources without a record playout of their own are recorded that much later, and so are the
/// controls, so the recorded mix is exactly the heard mix, later.
@Suite("Room timing: the record is the live audio, later")
struct RoomTimingTests {
    /// Sets a track's volume from the clock thread when frame `at` passes (deterministic timing).
    final class VolumeAt: AudioTrackSink, @unchecked Sendable {
        let track: () -> AudioTrack?
        let at: Int64
        let volume: Float
        init(at: Int64, volume: Float, track: @escaping () -> AudioTrack?) {
            self.at = at
            self.volume = volume
            self.track = track
        }
        func onFrame(_ frame: AudioFrame) {
            if frame.roomSample == at * 480 { track()?.controls.setVolume(volume) }
        }
    }

    @Test func audioAndControlsReachTheRecordDelayFramesLater() {
        let delay = 5
        let room = Room(clock: VirtualClock(), timing: RoomTiming(recordDelayFrames: delay, livePlayout: true))
        let track = room.addTrack(name: "a", source: RampSource(length: 60 * 480))
        let mix = room.addMix(name: "mix", inputs: [track])
        let (recorded, live, mixRecorded, mixLive) = (
            CollectingSink(), CollectingSink(), CollectingSink(), CollectingSink()
        )
        track.addSink(recorded)
        track.addSink(live, tap: .live)
        mix.addSink(mixRecorded)
        mix.addSink(mixLive, tap: .live)
        track.addSink(VolumeAt(at: 20, volume: 0.25) { track })
        room.run()
        let shift = delay * 480
        #expect(recorded.samples.count == live.samples.count && live.samples.count >= 60 * 480)
        #expect(recorded.samples[..<shift].allSatisfy { $0 == 0 }, "silence until the first live frame is due")
        let sameAudio = Array(recorded.samples[shift...]) == Array(live.samples.dropLast(shift))
        #expect(sameAudio, "the record is the live audio, \(delay) frames later")
        let sameMix = Array(mixRecorded.samples[shift...]) == Array(mixLive.samples.dropLast(shift))
        #expect(sameMix, "the recorded mix is the heard mix, volume change included, \(delay) frames later")
        // The change is really in both: heard from frame 21, in the record from frame 26.
        #expect(abs(Int(mixLive.samples[22 * 480 + 100])) < abs(Int(live.samples[22 * 480 + 100])))
        #expect(mixRecorded.samples[21 * 480 + 100] == recorded.samples[21 * 480 + 100], "not yet in the record")
        #expect(abs(Int(mixRecorded.samples[27 * 480 + 100])) < abs(Int(recorded.samples[27 * 480 + 100])))
    }

    @Test func withoutALiveListenerTheLiveViewOfAMixIsItsRecord() {
        let room = Room(clock: VirtualClock(), timing: RoomTiming(recordDelayFrames: 3, livePlayout: false))
        let track = room.addTrack(name: "a", source: RampSource(length: 20 * 480))
        let mix = room.addMix(name: "mix", inputs: [track])
        let (recorded, live) = (CollectingSink(), CollectingSink())
        mix.addSink(recorded)
        mix.addSink(live, tap: .live)
        room.run()
        let same = recorded.samples == live.samples
        #expect(same)
        #expect(recorded.samples[..<(3 * 480)].allSatisfy { $0 == 0 })
    }
}
