import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Mute, volume, scope and solo (the Sora semantics) through a real room: what the mix hears, what
/// the speaker's recording keeps, and the ramp across the frame where a change lands.
@Suite struct TrackControlsTests {
    /// Runs `body` on the clock thread when frame `index` has rendered on the track it is attached to.
    final class FrameHook: AudioTrackSink, @unchecked Sendable {
        private let actions: [Int64: () -> Void]
        init(_ actions: [Int64: () -> Void]) { self.actions = actions }
        func onFrame(_ frame: AudioFrame) { actions[frame.index]?() }
    }

    struct Run {
        var tracks: [AudioTrack]
        var mix: CollectingSink
        var recorded: [CollectingSink]
        var heard: [CollectingSink]
    }

    /// A room of constant sources (value 10 000 each, 1 s), a mix of all, and per track a recorded and
    /// a heard sink. `actions` run on the clock after the given frame of track 0 rendered, so each
    /// change lands on the next frame.
    private func run(values: [Int16] = [10_000], actions: [Int64: (Room, [AudioTrack]) -> Void]) -> Run {
        let room = Room(clock: VirtualClock())
        let tracks = values.enumerated().map { i, v in
            room.addTrack(name: "t\(i)", source: ConstantSource(v, length: 48_000))
        }
        let mix = CollectingSink()
        room.addMix(name: "mix", inputs: tracks).addSink(mix)
        let recorded = tracks.map { _ in CollectingSink() }
        let heard = tracks.map { _ in CollectingSink() }
        for (i, track) in tracks.enumerated() {
            track.addSink(recorded[i])
            track.addSink(heard[i], tap: .heard)
        }
        tracks[0].addSink(FrameHook(actions.mapValues { action in { action(room, tracks) } }))
        room.run()
        return Run(tracks: tracks, mix: mix, recorded: recorded, heard: heard)
    }

    private func frame(_ sink: CollectingSink, _ index: Int) -> ArraySlice<Int16> {
        let all = sink.samples
        return all[(index * 480)..<((index + 1) * 480)]
    }

    @Test func volumeRampsAcrossOneFrameThenHoldsAndTheRecordingStaysRaw() {
        let r = run(actions: [9: { _, t in t[0].controls.setVolume(0.5) }])
        #expect(frame(r.mix, 9).allSatisfy { $0 == 10_000 }, "before the change: unity")
        let ramp = frame(r.mix, 10)
        #expect(ramp.first! < 10_000 && ramp.first! > 9_900, "the ramp starts from the old gain")
        #expect(ramp.last! == 5_000, "and reaches the new one on the frame's last sample")
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { abs(Int($0) - Int($1)) <= 12 }, "no step: a linear ramp")
        #expect(frame(r.mix, 11).allSatisfy { $0 == 5_000 })
        #expect(frame(r.heard[0], 50).allSatisfy { $0 == 5_000 }, "heard tap follows the volume")
        #expect(r.recorded[0].samples.allSatisfy { $0 == 10_000 }, "the speaker's file keeps the raw speaker")
    }

    @Test func muteSilencesWhatIsHeardNotTheRecordingAndUnmuteRestores() {
        let r = run(actions: [
            19: { _, t in t[0].controls.setEnabled(false) },
            49: { _, t in t[0].controls.setEnabled(true) },
        ])
        #expect(frame(r.mix, 20).last == 0 && frame(r.mix, 20).first! > 9_000, "ramped down across frame 20")
        for i in 21..<50 { #expect(frame(r.mix, i).allSatisfy { $0 == 0 }) }
        #expect(r.heard[0].entries[30].status == .muted)
        #expect(frame(r.mix, 50).last == 10_000, "ramped up across frame 50")
        #expect(frame(r.mix, 60).allSatisfy { $0 == 10_000 })
        #expect(r.recorded[0].samples.allSatisfy { $0 == 10_000 })
        #expect(r.recorded[0].entries.allSatisfy { $0.status == .normal })
    }

    @Test func recordScopeSilencesTheSpeakersOwnFileWithTheTimelineKept() {
        let r = run(actions: [
            19: { _, t in t[0].controls.setEnabled(false, scope: .record) },
            49: { _, t in t[0].controls.setEnabled(true, scope: .record) },
        ])
        #expect(r.recorded[0].frameCount == 100, "the file keeps room length")
        for i in 21..<50 {
            #expect(frame(r.recorded[0], i).allSatisfy { $0 == 0 })
            #expect(r.recorded[0].entries[i].status == .muted)
        }
        #expect(frame(r.recorded[0], 10).allSatisfy { $0 == 10_000 })
        #expect(frame(r.recorded[0], 60).allSatisfy { $0 == 10_000 })
        #expect(frame(r.mix, 30).allSatisfy { $0 == 0 }, "off the record: not in the recorded mix either")
        #expect(frame(r.heard[0], 30).allSatisfy { $0 == 10_000 }, "record scope leaves what is heard alone")
        #expect(r.tracks[0].statistics.frames(.muted) == 29, "frames 21-49 counted as muted (room.json)")
    }

    @Test func soloHearsOnlyTheSoloedTracksAndUnsoloRestores() {
        let r = run(
            values: [1_000, 2_000, 4_000],
            actions: [
                19: { room, t in room.solo([t[1]]) },
                49: { room, _ in room.unsolo() },
            ])
        #expect(frame(r.mix, 10).allSatisfy { $0 == 7_000 })
        #expect(frame(r.mix, 30).allSatisfy { $0 == 2_000 }, "only the soloed track")
        #expect(frame(r.mix, 60).allSatisfy { $0 == 7_000 })
        for sink in r.recorded { #expect(sink.entries.allSatisfy { $0.status == .normal }, "files untouched") }
    }

    @Test func severalSpeakersAtVolumeTenNeverClipHarshly() {
        let r = run(
            values: [20_000, 20_000, 20_000, -5_000],
            actions: [4: { _, t in for track in t { track.controls.setVolume(10) } }])
        let samples = r.mix.samples
        #expect(samples.allSatisfy { $0 > 0 }, "no wrap-around to negative")
        #expect(samples.allSatisfy { $0 <= 32_767 })
        // The limiter has no look-ahead across frames: its attack may step at a frame boundary,
        // but inside a frame the gain moves in 1 ms interpolated blocks.
        let insideFrames = zip(samples, samples.dropFirst()).enumerated().filter { ($0.offset + 1) % 480 != 0 }
        #expect(
            insideFrames.allSatisfy { abs(Int($0.element.0) - Int($0.element.1)) < 2_000 }, "no jump inside a frame")
        #expect(samples.suffix(48_000 - 4_800).allSatisfy { $0 >= 32_000 }, "held near full scale, not wrapped")
    }

    @Test func volumeIsClampedAndDecibelFreeRangeHolds() {
        let room = Room(clock: VirtualClock())
        let track = room.addTrack(name: "a", source: ConstantSource(1, length: 480))
        track.controls.setVolume(42)
        #expect(track.controls.volume == 10)
        track.controls.setVolume(-1)
        #expect(track.controls.volume == 0)
        track.controls.setVolume(.nan)
        #expect(track.controls.volume == 0, "NaN is ignored")
        track.controls.setEnabled(false, scope: .record)
        #expect(track.controls.state == TrackControlState(isEnabled: true, volume: 0, isRecordEnabled: false))
        track.controls.setVolume(7.25, scope: .all)
        track.controls.setEnabled(false, scope: .all)
        #expect(
            track.controls.state
                == TrackControlState(isEnabled: false, volume: 7.25, isRecordEnabled: false, recordVolume: 7.25))
        track.controls.setVolume(0.5011872, scope: .record)
        #expect(track.controls.state.recordVolume == 0.5011872, "both volumes are kept exactly")
        #expect(track.controls.state.volume == 7.25)
    }

    /// Issue 10, 9: a speaker who asked to be off the record stays off it through volume changes
    /// of any scope and a heard unmute; only an unmute covering the record brings them back.
    @Test func offTheRecordStaysOffThroughVolumeChangesUntilAnUnmuteCoversTheRecord() {
        let r = run(actions: [
            9: { _, t in t[0].controls.setEnabled(false, scope: .record) },
            19: { _, t in t[0].controls.setVolume(0.5) },
            29: { _, t in t[0].controls.setVolume(0.5, scope: .heard) },
            39: { _, t in t[0].controls.setVolume(0.25, scope: .record) },
            49: { _, t in t[0].controls.setEnabled(true, scope: .heard) },
            59: { _, t in t[0].controls.setEnabled(true, scope: .all) },
        ])
        for i in 11..<60 { #expect(frame(r.recorded[0], i).allSatisfy { $0 == 0 }, "frame \(i) off the record") }
        #expect(frame(r.recorded[0], 70).allSatisfy { $0 == 2_500 }, "back on, at the record volume")
        #expect(frame(r.heard[0], 15).allSatisfy { $0 == 10_000 }, "heard all along")
        #expect(frame(r.heard[0], 35).allSatisfy { $0 == 5_000 }, "heard at the heard volume")
        #expect(frame(r.mix, 35).allSatisfy { $0 == 0 }, "the recorded mix leaves her out while off the record")
        #expect(frame(r.mix, 70).allSatisfy { $0 == 1_250 }, "recorded mix: heard times record gain")
    }

    @Test func aHeardMuteNeverReachesTheSpeakersFileAndARecordUnmuteKeepsItHeardMuted() {
        let r = run(actions: [
            9: { _, t in t[0].controls.setEnabled(false, scope: .all) },
            29: { _, t in t[0].controls.setEnabled(true, scope: .record) },
        ])
        #expect(frame(r.recorded[0], 20).allSatisfy { $0 == 0 })
        #expect(frame(r.recorded[0], 40).allSatisfy { $0 == 10_000 }, "back on the record")
        #expect(frame(r.heard[0], 40).allSatisfy { $0 == 0 }, "still muted for what is heard")
        #expect(r.tracks[0].controls.state == TrackControlState(isEnabled: false))
    }

    @Test func meterReadsTheLevelAndTalkingWithHangover() {
        let room = Room(clock: VirtualClock())
        // 0.5 s of a -20 dBFS sine (RMS -23 dBFS), then silence.
        let sine = SineSource(frequency: 440, amplitude: 3_277, length: 24_000)
        let track = room.addTrack(name: "a", source: sine)
        let seen = Locked<[(Float?, Bool)]>([])
        track.addSink(
            FrameHook(
                Dictionary(
                    uniqueKeysWithValues: [Int64(40), 52, 60, 95].map { i in
                        (i, { seen.withLock { $0.append((track.meter.levelDBFS, track.meter.isTalking)) } })
                    })))
        room.addTrack(name: "keep", source: ConstantSource(0, length: 48_000))
        room.run()
        let s = seen.withLock { $0 }
        #expect(s.count == 4)
        #expect(abs((s[0].0 ?? -100) + 23) < 0.5, "RMS of a -20 dBFS sine is -23 dBFS")
        #expect(s[0].1 && s[1].1, "talking, and still within the 300 ms hangover")
        #expect(!s[3].1, "not talking 450 ms after the speech ended")
        #expect((s[2].0 ?? -100) < -23 - 1.5, "the held level falls")
    }
}

extension TrackControlsTests {
    @Test func aTrackMutedBeforeItPlaysIsSilentFromItsFirstSample() {
        let room = Room(clock: VirtualClock())
        let track = room.addTrack(name: "a", source: ConstantSource(10_000, length: 4_800))
        let heard = CollectingSink()
        track.addSink(heard, tap: .heard)
        track.controls.setEnabled(false)
        room.run()
        #expect(heard.frameCount == 10)
        #expect(heard.samples.allSatisfy { $0 == 0 }, "no fade-out on the first frame")
        #expect(heard.entries.allSatisfy { $0.status == .muted })
    }
}
