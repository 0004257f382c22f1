import Dispatch
import Foundation
import RoomTapCore
import RoomTapTestSupport
import Testing

/// A sink doing slow work on its own thread never delays the room clock or the other sinks
/// (policy .drop), loses nothing under .wait, and closes cleanly.
@Suite struct QueuedSinkTests {
    @Test func aSlowSinkDelaysNeitherTheClockNorAFastSinkOnTheSameTrack() throws {
        let room = Room(clock: VirtualClock())
        let ramp = RampSource(length: 2_000 * 480)
        let track = room.addTrack(name: "a", source: ramp)
        let (slow, consumer) = SlowSink.slow(delay: .milliseconds(5), capacity: 8, policy: .drop)
        let fast = CollectingSink(reserveFrames: 2_000)
        track.addSink(slow)
        track.addSink(fast)
        let started = ContinuousClock.now
        room.run()
        let elapsed = ContinuousClock.now - started
        try slow.close()
        // Waiting on the slow sink would take 2000 × 5 ms = 10 s at the least, on any machine.
        #expect(elapsed < .seconds(10), "the room took \(elapsed)")
        #expect(fast.roomSamples == (0..<Int64(2_000)).map { $0 * 480 }, "the fast sink got every frame")
        #expect(slow.droppedFrames > 0)
        #expect(slow.consumedFrames + slow.droppedFrames == 2_000)
        #expect(consumer.consumedCount == slow.consumedFrames)
        // What the slow sink did get is intact and in order.
        let rooms = consumer.roomSamples
        #expect(zip(rooms, rooms.dropFirst()).allSatisfy { $0 < $1 })
        let samples = consumer.samples
        for (k, roomSample) in rooms.enumerated().prefix(50) {
            let got = Array(samples[(k * 480)..<((k + 1) * 480)])
            #expect(got == ramp.expectedSamples(roomSample..<(roomSample + 480)))
        }
    }

    @Test func theWaitPolicyLosesNothing() throws {
        let room = Room(clock: VirtualClock())
        let sine = SineSource(frequency: 300, amplitude: 20_000, channels: 2, length: 300 * 480)
        let track = room.addTrack(name: "a", source: sine)
        let (sink, consumer) = SlowSink.slow(delay: .microseconds(300), channels: 2, capacity: 4, policy: .wait)
        track.addSink(sink)
        room.run()
        try sink.close()
        #expect(sink.droppedFrames == 0 && sink.consumedFrames == 300)
        #expect(consumer.roomSamples == (0..<Int64(300)).map { $0 * 480 })
        #expect(consumer.samples == sine.expectedSamples(0..<(300 * 480)))
    }

    @Test func closeDrainsFinishesOnceIsIdempotentAndLaterFramesAreDropped() throws {
        let consumer = RecordingConsumer()
        let sink = QueuedSink(consumer: consumer, channels: 1, capacity: 32, policy: .drop)
        FrameFeeding.feed(TestSignal.noise(samples: 4_800), channels: 1, to: sink)
        try sink.close()
        #expect(consumer.consumedCount == 10 && consumer.finishCalls == 1 && consumer.drainedCalls >= 1)
        try sink.close()
        #expect(consumer.finishCalls == 1)
        FrameFeeding.feed(TestSignal.noise(samples: 480), channels: 1, start: 4_800, to: sink)
        #expect(sink.droppedFrames == 1 && consumer.consumedCount == 10)
    }

    @Test func drainedIsCalledWhileIdle() throws {
        let consumer = RecordingConsumer()
        let sink = QueuedSink(consumer: consumer, channels: 1)
        #expect(waitUntil(timeout: .seconds(30)) { consumer.drainedCalls >= 3 }, "called again and again while idle")
        try sink.close()
    }

    @Test func aFailingConsumerStopsConsumingAndCloseThrowsItsError() throws {
        let consumer = RecordingConsumer(failAt: 5)
        let sink = QueuedSink(consumer: consumer, channels: 1, capacity: 64, policy: .wait)
        FrameFeeding.feed(TestSignal.noise(samples: 480 * 20), channels: 1, to: sink)
        #expect(throws: RecordingConsumer.Failure(frame: 5)) { try sink.close() }
        #expect(throws: RecordingConsumer.Failure(frame: 5)) { try sink.close() }
        #expect(consumer.consumedCount == 5 && sink.consumedFrames == 5 && sink.droppedFrames == 15)
        #expect((sink.failure as? RecordingConsumer.Failure) == RecordingConsumer.Failure(frame: 5))
    }

    @Test func twoThreadsClosingAtOnceBothReturn() throws {
        let (sink, consumer) = SlowSink.slow(delay: .milliseconds(20), capacity: 16, policy: .wait)
        FrameFeeding.feed(TestSignal.noise(samples: 480 * 8), channels: 1, to: sink)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                try? sink.close()
                done.signal()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(done.wait(timeout: .now() + 10) == .success, "the second close() never returned")
        #expect(consumer.consumedCount == 8 && consumer.finishCalls == 1)
    }
}
