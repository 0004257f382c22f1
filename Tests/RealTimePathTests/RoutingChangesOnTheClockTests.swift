import CAllocationCounter
import Foundation
import RoomTapAll
import RoomTapTestSupport
import Synchronization
import Testing

extension AllocationCounting {
    /// "The clock thread must not free": while a room runs on two render threads, another thread
    /// keeps changing its routing (sinks added and removed, then closed and dropped; tracks added
    /// to the room and to a mix and removed again; the mix's inputs replaced). The replaced
    /// snapshots (a track's sink list, the room's render plan, a mixer's inputs) hold the last
    /// references to what was removed; they are released on the control side, so the render
    /// threads make no allocation and no free.
    @Suite("Routing changes free nothing on the render threads", .serialized)
    struct RoutingChangesOnTheClockTests {
        /// Counts allocations and frees on the thread rendering its track from frame 0 to
        /// `lastFrame`, where it notes the count; paces the room by `pauseMicroseconds` a frame
        /// (usleep allocates nothing), so the routing changes land while it runs.
        final class CountingPacer: AudioTrackSink, @unchecked Sendable {
            let lastFrame: Int64
            let pauseMicroseconds: UInt32
            let frames = Atomic<Int>(0)
            let countAtEnd = Atomic<UInt64>(0)
            init(lastFrame: Int64, pauseMicroseconds: UInt32) {
                self.lastFrame = lastFrame
                self.pauseMicroseconds = pauseMicroseconds
            }
            func onFrame(_ frame: AudioFrame) {
                if frame.index == 0 { roomtap_count_allocations_on_this_thread(1) }
                frames.add(1, ordering: .relaxed)
                if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
                if frame.index == lastFrame {
                    countAtEnd.store(roomtap_counted_allocations(), ordering: .relaxed)
                    roomtap_count_allocations_on_this_thread(0)
                }
            }
        }

        final class Discard: FrameConsumer {
            func consume(_ frame: AudioFrame) throws {}
            func drained() throws {}
            func finish() throws {}
        }

        @Test func sinksTracksAndMixInputsChangingWhileTwoRenderThreadsRun() throws {
            let frames: Int64 = 4_000
            let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2)
            let speakers = (0..<2).map { k in
                room.addTrack(
                    name: "speaker\(k)", source: SineSource(frequency: 300 + 100 * Double(k), length: frames * 480))
            }
            let mix = room.addMix(name: "mix", inputs: speakers)
            let mixer = try #require(mix.source as? Mixer)
            let pacers = speakers.map { _ in CountingPacer(lastFrame: frames - 1, pauseMicroseconds: 150) }
            for (speaker, pacer) in zip(speakers, pacers) { speaker.addSink(pacer) }
            mix.addSink(QueuedSink(consumer: Discard(), channels: 1, capacity: 16, policy: .drop))

            let rounds = Atomic<Int>(0)
            let changer = Thread {
                _ = waitUntil(every: .microseconds(100)) { room.position > 0 }
                while room.isRunning {
                    // A sink with a 16-frame ring on its own thread, attached and dropped.
                    let sink = QueuedSink(consumer: Discard(), channels: 1, capacity: 16, policy: .drop)
                    speakers[rounds.load(ordering: .relaxed) % 2].addSink(sink)
                    let guest = room.addTrack(name: "guest", source: SineSource(frequency: 900, length: 96_000))
                    guest.addSink(QueuedSink(consumer: Discard(), channels: 1, capacity: 16, policy: .drop))
                    mixer.addInput(guest)
                    usleep(2_000)  // the test's own pacing: the guest renders a few frames
                    for s in speakers { s.removeSink(sink) }
                    try? sink.close()
                    for s in guest.sinks { try? (s as? QueuedSink)?.close() }
                    room.removeTrack(guest)
                    mixer.setInputs(speakers)
                    rounds.add(1, ordering: .relaxed)
                }
            }
            roomtap_reset_counted_allocations()
            changer.start()
            room.run()
            #expect(waitUntil { !changer.isExecuting }, "the changer ends with the room")
            for pacer in pacers { #expect(pacer.frames.load(ordering: .relaxed) == Int(frames)) }
            #expect(rounds.load(ordering: .relaxed) >= 10, "the routing changed while the room ran")
            let counted = pacers.map { $0.countAtEnd.load(ordering: .relaxed) }.max() ?? 0
            #expect(
                !allocationCountsAsserted || counted == 0,
                "the render threads allocated or freed \(counted) times in \(frames) ticks")
        }

        @Test func theCounterSeesFrees() {
            var array: [Int]? = [Int](repeating: 1, count: Int.random(in: 100...200))
            #expect(array?.count ?? 0 >= 100)
            roomtap_reset_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            array = nil
            roomtap_count_allocations_on_this_thread(0)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() >= 1,
                "the counter must be able to fail the test above")
        }
    }
}
