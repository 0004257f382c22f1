import Foundation
import RoomTapALSA
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

extension ALSADeviceTests {
    /// Playback through the `file` plugin: what the room renders is what lands in the file.
    @Suite struct Playback {
        /// Plays `source` through a fresh playback device of `channels` channels in an offline room;
        /// returns what the device wrote, the frames the room rendered, and the sink.
        private func play(_ source: SyntheticSource, channels: Int) throws -> ([Int16], Int, ALSAPlayback) {
            let config = try ALSATestConfig()
            config.activate()
            let playback = try ALSAPlayback(device: config.playbackDevice, channels: channels, overflow: .wait)
            let room = Room(clock: VirtualClock())
            room.addTrack(name: "alice", source: source).addSink(playback)
            room.run()
            try playback.close()
            return (try config.playedSamples(), Int(room.position / 480), playback)
        }

        @Test func aMonoTrackLandsInTheFileSampleForSample() throws {
            let source = SineSource(frequency: 997, amplitude: 20_000, length: 48_000 + 123)
            let (played, frames, playback) = try play(source, channels: 1)
            #expect(frames == 101)
            #expect(played.count == frames * 480, "whole frames, no leading or trailing silence added")
            #expect(played == source.expectedSamples(0..<Int64(frames * 480)))
            #expect(playback.played == frames && playback.dropped == 0 && playback.underruns == 0)
            #expect(playback.periodFrames == 480 && playback.bufferFrames == 2_880)
        }

        @Test func aStereoTrackIsInterleavedLeftRight() throws {
            let source = SineSource(frequency: 440, amplitude: 12_000, stereoPhase: 1.3, channels: 2, length: 9_600)
            let (played, frames, _) = try play(source, channels: 2)
            #expect(frames == 20)
            #expect(played == source.expectedSamples(0..<9_600))
            #expect(played[0] != played[1], "the channels differ, so their order is checked")
        }

        @Test func aMonoTrackOnAStereoDeviceIsDuplicated() throws {
            let source = RampSource(step: 5, length: 4_800)
            let (played, _, _) = try play(source, channels: 2)
            let mono = source.expectedSamples(0..<4_800)
            #expect(played == mono.flatMap { [$0, $0] })
        }

        @Test func theDefaultDeviceOfTheConfigurationPlaysToo() throws {
            let config = try ALSATestConfig()
            config.activate()
            let playback = try ALSAPlayback(channels: 1, overflow: .wait)
            let source = ConstantSource(1234, length: 960)
            let room = Room(clock: VirtualClock())
            room.addTrack(name: "mix", source: source).addSink(playback)
            room.run()
            try playback.close()
            try playback.close()  // idempotent
            #expect(try config.playedSamples() == [Int16](repeating: 1234, count: 960))
        }

        @Test func framesTheQueueCannotTakeAreDroppedAndCountedNeverPlayed() throws {
            let config = try ALSATestConfig()
            config.activate()
            let playback = try ALSAPlayback(device: config.playbackDevice, channels: 1, queueFrames: 2)
            let source = RampSource(length: 480 * 2_000)
            let room = Room(clock: VirtualClock())
            room.addTrack(name: "alice", source: source).addSink(playback)
            room.run()
            try playback.close()
            let played = try config.playedSamples()
            #expect(playback.played + playback.dropped == 2_000)
            #expect(played.count == playback.played * 480)
            // Every played frame is a whole frame of the source, in order (drops only skip frames).
            let all = source.expectedSamples(0..<Int64(480 * 2_000))
            var next = 0
            for chunk in stride(from: 0, to: played.count, by: 480) {
                let frame = played[chunk..<chunk + 480]
                while next < 2_000 && all[next * 480..<next * 480 + 480] != frame { next += 1 }
                #expect(next < 2_000, "played frame \(chunk / 480) is a source frame, later than the one before")
                next += 1
            }
        }

        @Test func aBadDeviceNameIsOneClearLine() {
            #expect {
                _ = try ALSAPlayback(device: "no-such-device", channels: 2)
            } throws: { error in
                "\(error)" == "cannot open ALSA playback device \"no-such-device\": No such file or directory"
            }
        }
    }
}
