import Dispatch
import Foundation
import Glibc
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// Queued sinks on a shared pool of worker threads: every sink gets every frame in order on one
/// worker, a room of hundreds of sinks runs on a handful of threads, close drains, `.wait` holds,
/// a stalled consumer holds only its own worker.
@Suite struct SinkWorkerPoolTests {
    @Test func twoHundredPooledSinksGetEveryFrameInOrderOnAtMostPoolSizeThreads() throws {
        let pool = SinkWorkerPool.shared
        let room = Room(clock: VirtualClock())
        let frames = 300
        var sinks: [(QueuedSink, CheckingConsumer)] = []
        for k in 0..<200 {
            let source = RampSource(step: Int64(k + 1), length: Int64(frames * 480))
            let track = room.addTrack(name: "t\(k)", source: source)
            let consumer = CheckingConsumer(source: source)
            let sink = QueuedSink(consumer: consumer, channels: 1, capacity: 16, policy: .wait, pool: pool)
            track.addSink(sink)
            sinks.append((sink, consumer))
        }
        room.run()
        let writers = ThreadCensus.count(named: pool.threadName)
        #expect(writers >= 1 && writers <= pool.workerCount, "\(writers) writer threads for 200 sinks")
        #expect(pool.workerCount == min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)))
        for (sink, _) in sinks { try sink.close() }
        var threads = Set<UInt>()
        for (k, (sink, consumer)) in sinks.enumerated() {
            #expect(sink.droppedFrames == 0 && sink.consumedFrames == frames, "sink \(k)")
            #expect(consumer.report == .init(frames: frames, finishes: 1, faults: 0), "sink \(k)")
            threads.formUnion(consumer.threads)
            #expect(consumer.threads.count == 1, "sink \(k) was consumed on one thread")
        }
        #expect(threads.count <= pool.workerCount)
    }

    @Test func closeDrainsEverythingQueuedAndFinishesOnceAfterTheLastFrame() throws {
        let pool = SinkWorkerPool(workerCount: 1, threadName: "roomtap.tdrain")
        let source = RampSource(length: 10 * 480)
        var sinks: [(QueuedSink, CheckingConsumer)] = []
        for _ in 0..<20 {
            let consumer = CheckingConsumer(source: source)
            // 10 frames stay under the wake threshold (16): only close() gets them written.
            let sink = QueuedSink(consumer: consumer, channels: 1, capacity: 64, policy: .drop, pool: pool)
            sinks.append((sink, consumer))
        }
        let samples = source.expectedSamples(0..<(10 * 480))
        for (sink, _) in sinks { FrameFeeding.feed(samples, channels: 1, to: sink) }
        for (sink, consumer) in sinks {
            try sink.close()
            #expect(consumer.report == .init(frames: 10, finishes: 1, faults: 0))
            try sink.close()
            FrameFeeding.feed(samples, channels: 1, start: 4_800, to: sink)
            #expect(sink.droppedFrames == 10 && sink.consumedFrames == 10 && consumer.report.finishes == 1)
        }
    }

    @Test func theWaitPolicyLosesNothingWithSlowSinksSharingOneWorker() throws {
        let pool = SinkWorkerPool(workerCount: 1, threadName: "roomtap.twait")
        let room = Room(clock: VirtualClock())
        let sine = SineSource(frequency: 300, amplitude: 20_000, channels: 2, length: 300 * 480)
        let track = room.addTrack(name: "a", source: sine)
        var sinks: [(QueuedSink, RecordingConsumer)] = []
        for _ in 0..<3 {
            let consumer = RecordingConsumer(delay: .microseconds(300))
            let sink = QueuedSink(consumer: consumer, channels: 2, capacity: 4, policy: .wait, pool: pool)
            track.addSink(sink)
            sinks.append((sink, consumer))
        }
        room.run()
        for (sink, consumer) in sinks {
            try sink.close()
            #expect(sink.droppedFrames == 0 && sink.consumedFrames == 300)
            #expect(consumer.roomSamples == (0..<Int64(300)).map { $0 * 480 })
            #expect(consumer.samples == sine.expectedSamples(0..<(300 * 480)))
            #expect(consumer.finishCalls == 1)
        }
    }

    @Test func manyThreadsClosingManySinksAtOnceAllReturn() throws {
        let pool = SinkWorkerPool(workerCount: 2, threadName: "roomtap.tclose")
        var sinks: [(QueuedSink, RecordingConsumer)] = []
        for _ in 0..<40 {
            let consumer = RecordingConsumer(delay: .milliseconds(1))
            sinks.append(
                (QueuedSink(consumer: consumer, channels: 1, capacity: 16, policy: .wait, pool: pool), consumer))
        }
        for (sink, _) in sinks { FrameFeeding.feed(TestSignal.noise(samples: 480 * 8), channels: 1, to: sink) }
        let queued = sinks.map(\.0)
        let done = DispatchSemaphore(value: 0)
        let closers = 8
        for c in 0..<closers {
            Thread {
                var order = queued
                if c % 2 == 1 { order.reverse() }
                for sink in order { try? sink.close() }
                done.signal()
            }.start()
        }
        for c in 0..<closers {
            #expect(done.wait(timeout: .now() + 20) == .success, "closer \(c) never returned")
        }
        for (sink, consumer) in sinks {
            #expect(consumer.consumedCount == 8 && consumer.finishCalls == 1 && sink.droppedFrames == 0)
        }
    }

    @Test func aStalledConsumerHoldsNeitherTheClockNorASinkOnAnotherWorker() throws {
        let pool = SinkWorkerPool(workerCount: 2, threadName: "roomtap.tstall")
        let gate = DispatchSemaphore(value: 0)
        let stalled = GatedConsumer(gate: gate)
        let stalledSink = QueuedSink(consumer: stalled, channels: 1, capacity: 16, policy: .drop, pool: pool)
        let free = RecordingConsumer()
        // The second sink of a fresh pool goes to the other, empty worker.
        let freeSink = QueuedSink(consumer: free, channels: 1, capacity: 256, policy: .drop, pool: pool)
        let frames = 100
        let started = ContinuousClock.now
        FrameFeeding.frames(of: TestSignal.noise(samples: 480 * frames), channels: 1) { frame in
            stalledSink.onFrame(frame)
            freeSink.onFrame(frame)
        }
        // The stalled consumer holds its worker until the gate opens below: feeding that waited
        // for it would never end, so any bound tells the two apart.
        #expect(ContinuousClock.now - started < .seconds(10), "feeding (the clock's side) never waits")
        #expect(waitUntil { freeSink.consumedFrames == frames }, "the other worker kept writing")
        #expect(stalledSink.droppedFrames >= frames - 17, "the stalled sink's queue filled and dropped")
        gate.signal()
        try freeSink.close()
        try stalledSink.close()
        #expect(stalledSink.consumedFrames + stalledSink.droppedFrames == frames)
        #expect(free.roomSamples == (0..<Int64(frames)).map { $0 * 480 })
    }

    @Test func aFailingConsumerDoesNotStopItsNeighboursOnTheSameWorker() throws {
        let pool = SinkWorkerPool(workerCount: 1, threadName: "roomtap.tfail")
        let failing = RecordingConsumer(failAt: 5)
        let failingSink = QueuedSink(consumer: failing, channels: 1, capacity: 64, policy: .wait, pool: pool)
        let fine = RecordingConsumer()
        let fineSink = QueuedSink(consumer: fine, channels: 1, capacity: 64, policy: .wait, pool: pool)
        let input = TestSignal.noise(samples: 480 * 20)
        FrameFeeding.feed(input, channels: 1, to: failingSink)
        FrameFeeding.feed(input, channels: 1, to: fineSink)
        #expect(throws: RecordingConsumer.Failure(frame: 5)) { try failingSink.close() }
        #expect(throws: RecordingConsumer.Failure(frame: 5)) { try failingSink.close() }
        try fineSink.close()
        #expect(failingSink.consumedFrames == 5 && failingSink.droppedFrames == 15)
        #expect(fine.samples == input && fine.finishCalls == 1)
    }

    @Test func drainedIsCalledWhileIdle() throws {
        let pool = SinkWorkerPool(workerCount: 1, threadName: "roomtap.tidle")
        let consumer = RecordingConsumer()
        let sink = QueuedSink(consumer: consumer, channels: 1, pool: pool)
        // No frame ever arrives: only the worker's 50 ms wake-ups can call drained().
        #expect(waitUntil { consumer.drainedCalls >= 3 }, "drained() is called again and again while idle")
        try sink.close()
    }

    @Test func threadsStartWithTheFirstSinkAndEndWhenAReleasedPoolHasNoSinks() throws {
        let name = "roomtap.tlifecycle"  // Linux keeps the first 15 bytes
        var pool: SinkWorkerPool? = SinkWorkerPool(workerCount: 3, threadName: name)
        #expect(ThreadCensus.count(named: name) == 0, "no thread before a sink")
        let sinks = (0..<2).map { _ in
            QueuedSink(consumer: RecordingConsumer(), channels: 1, wakeThreshold: 1, pool: pool!)
        }
        // Both workers are running once each sink has consumed a frame.
        for sink in sinks { FrameFeeding.feed(TestSignal.noise(samples: 480), channels: 1, to: sink) }
        #expect(waitUntil { sinks.allSatisfy { $0.consumedFrames > 0 } })
        #expect(ThreadCensus.waitFor(named: name, count: 2), "one thread per busy worker")
        pool = nil
        #expect(ThreadCensus.count(named: name) == 2, "sinks still open keep their workers")
        for sink in sinks { try sink.close() }
        #expect(ThreadCensus.waitFor(named: name, count: 0), "a released pool ends its idle threads")
    }
}

/// Checks every frame against its source as it comes (no storage), and that the calls of its
/// sink never overlap, come in order, and end with one `finish`.
final class CheckingConsumer: FrameConsumer, @unchecked Sendable {
    struct Report: Equatable {
        var frames: Int
        var finishes: Int
        var faults: Int
    }

    private let source: SyntheticSource
    private let inside = Atomic<Bool>(false)
    private let state = Locked<(report: Report, threads: Set<UInt>)>((Report(frames: 0, finishes: 0, faults: 0), []))

    init(source: SyntheticSource) { self.source = source }

    var report: Report { state.withLock { $0.report } }
    /// The threads that called the consumer.
    var threads: Set<UInt> { state.withLock { $0.threads } }

    func consume(_ frame: AudioFrame) throws {
        enter()
        defer { leave() }
        var good = frame.status == .normal
        state.withLock { good = good && $0.report.finishes == 0 && frame.roomSample == Int64($0.report.frames * 480) }
        for i in 0..<AudioFrame.samplesPerChannel
        where frame.samples[i] != source.expected(at: frame.roomSample + Int64(i)) {
            good = false
        }
        state.withLock {
            $0.report.frames += 1
            if !good { $0.report.faults += 1 }
        }
    }

    func drained() throws {
        enter()
        leave()
    }

    func finish() throws {
        enter()
        state.withLock { $0.report.finishes += 1 }
        leave()
    }

    private func enter() {
        let overlapping = inside.exchange(true, ordering: .acquiringAndReleasing)
        state.withLock {
            $0.threads.insert(UInt(pthread_self()))
            if overlapping { $0.report.faults += 1 }
        }
    }

    private func leave() { inside.store(false, ordering: .releasing) }
}

/// A consumer that blocks in its first `consume` until `gate` is signalled.
final class GatedConsumer: FrameConsumer, @unchecked Sendable {
    private let gate: DispatchSemaphore
    private let opened = Atomic<Bool>(false)

    init(gate: DispatchSemaphore) { self.gate = gate }

    func consume(_ frame: AudioFrame) throws {
        if !opened.exchange(true, ordering: .relaxed) { gate.wait() }
    }

    func drained() throws {}
    func finish() throws {}
}
