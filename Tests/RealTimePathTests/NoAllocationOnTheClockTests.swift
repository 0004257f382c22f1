import CAllocationCounter
import Foundation
import RoomTapAll
import Synchronization
import Testing

extension AllocationCounting {
    /// "Nothing allocates per frame on the clock thread": count every malloc the room clock's thread
    /// makes while a room of real Ogg Opus sources, a mix and queued sinks runs.
    @Suite(
        "The 10 ms path does not allocate", .serialized)
    struct NoAllocationOnTheClockTests {
        /// A sink that switches allocation counting on for the clock thread at the first frame it
        /// sees and off at `lastFrame`, and otherwise only counts frames (no allocation of its own).
        final class CountingSwitch: AudioTrackSink, @unchecked Sendable {
            let lastFrame: Int64
            let frames = Atomic<Int>(0)
            init(lastFrame: Int64) { self.lastFrame = lastFrame }
            func onFrame(_ frame: AudioFrame) {
                if frame.index == 0 { roomtap_count_allocations_on_this_thread(1) }
                frames.add(1, ordering: .relaxed)
                if frame.index == lastFrame { roomtap_count_allocations_on_this_thread(0) }
            }
        }

        /// Consumes frames on the sink thread and throws them away.
        final class Discard: FrameConsumer {
            func consume(_ frame: AudioFrame) throws {}
            func drained() throws {}
            func finish() throws {}
        }

        /// As a file room; and as a network room's record follows its live audio (delay lines for
        /// the audio and the controls, live and record mixes); on the clock's thread alone, and
        /// with the render pool (three threads, one track each: every render thread is counted).
        @Test(arguments: [(false, 1), (true, 1), (false, 3), (true, 3)])
        func aRoomOfFilesAMixAndQueuedSinksMakesNoAllocationOnTheRenderThreads(
            delayedRecord: Bool, renderThreads: Int
        ) throws {
            let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Samples/room")
            let timing = delayedRecord ? RoomTiming(recordDelayFrames: 20, livePlayout: true) : RoomTiming()
            let room = Room(clock: VirtualClock(), renderThreads: renderThreads, parallelThreshold: 2, timing: timing)
            var tracks: [AudioTrack] = []
            var queued: [QueuedSink] = []
            for (name, offset) in [("alice", Int64(0)), ("bob", Int64(120_000)), ("carol", Int64(0))] {
                let source = try OggOpusFileSource(
                    path: samples.appendingPathComponent("\(name).opus").path, channels: 1, offset: offset)
                let track = room.addTrack(name: name, source: source)
                let sink = QueuedSink(consumer: Discard(), channels: 1, policy: .wait)
                track.addSink(sink)
                queued.append(sink)
                tracks.append(track)
            }
            let mix = room.addMix(name: "mix", inputs: tracks, channels: 2)
            let lastFrame: Int64 = 504_000 / 480 - 1
            // The first sink of every source track, so counting covers everything every render
            // thread does after it (the clock's thread renders track 0 first, then the mix).
            let counters = tracks.map { _ in CountingSwitch(lastFrame: lastFrame) }
            for (track, (counter, sink)) in zip(tracks, zip(counters, queued)) {
                track.removeSink(sink)
                track.addSink(counter)
                track.addSink(sink)
            }
            mix.addSink(QueuedSink(consumer: Discard(), channels: 2, policy: .wait))
            mix.addSink(QueuedSink(consumer: Discard(), channels: 2, policy: .wait), tap: .live)
            // Sinks on the shared writer pool (as WAV files are): waking a worker must not allocate either.
            let pooled = (0..<2).map { _ in
                QueuedSink(consumer: Discard(), channels: 1, capacity: 8, policy: .wait, pool: .shared)
            }
            for sink in pooled { tracks[2].addSink(sink) }
            // Controls in force and changing while the room runs: a heard-tap sink, a volume, a
            // record-scoped mute, a solo, and another thread moving them.
            let heard = QueuedSink(consumer: Discard(), channels: 1, policy: .wait)
            tracks[1].addSink(heard, tap: .heard)
            tracks[1].controls.setVolume(0.5)
            tracks[2].controls.setEnabled(false, scope: .record)
            room.solo([tracks[0], tracks[1]])
            let stop = Atomic<Bool>(false)
            let (bob, carol) = (tracks[1], tracks[2])
            let twiddler = Thread {
                var v: Float = 0.1
                while !stop.load(ordering: .relaxed) {
                    bob.controls.setVolume(v)
                    carol.controls.setEnabled(v > 1, scope: .record)
                    v = v > 5 ? 0.1 : v * 1.5
                    usleep(1_000)  // the test's own pacing of the changes
                }
            }
            twiddler.start()
            roomtap_reset_counted_allocations()
            room.run()
            stop.store(true, ordering: .relaxed)
            try heard.close()
            for sink in pooled { try sink.close() }
            for counter in counters { #expect(counter.frames.load(ordering: .relaxed) == Int(lastFrame + 1)) }
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "the render threads allocated \(roomtap_counted_allocations()) times in \(lastFrame + 1) ticks")
            for sink in queued { try sink.close() }
        }

        @Test func theCounterSeesAllocations() {
            roomtap_reset_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            let array = [Int](repeating: 1, count: Int.random(in: 100...200))
            roomtap_count_allocations_on_this_thread(0)
            #expect(array.count >= 100)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() >= 1,
                "the counter must be able to fail the test above")
        }
    }
}
