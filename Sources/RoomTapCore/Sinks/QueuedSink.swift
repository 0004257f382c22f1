import Foundation
import RoomTapSync
import Synchronization

/// Work a ``QueuedSink`` does with frames off the room clock (write a file, send to a socket).
///
/// Thread: every method is called on the sink's consumer thread (its dedicated thread, or the one
/// ``SinkWorkerPool`` worker it was given to), never on the room clock's, so it may block,
/// allocate and do I/O; the calls are never concurrent and come in order. Throwing stops further
/// consumption: later frames are counted as dropped and the error comes back from
/// ``QueuedSink/close()``.
public protocol FrameConsumer: AnyObject {
    /// Takes one frame, in room-time order. The samples are valid only during the call.
    func consume(_ frame: AudioFrame) throws
    /// Called whenever the queue has been drained, and at least every 50 ms while idle: a place
    /// for periodic work such as refreshing a file header.
    func drained() throws
    /// Called once, after the last frame, when the sink is closed.
    func finish() throws
}

/// What a ``QueuedSink`` does with a frame when its queue is full.
public enum OverflowPolicy: Sendable {
    /// Drop the frame and count it (live rooms: the clock never waits).
    case drop
    /// Wait for room in the queue (offline rooms on a ``VirtualClock`` only, where losing audio
    /// to a slow disk would be wrong and no deadline exists).
    case wait
}

/// A sink that copies every frame into a bounded ``FrameQueue`` on the room clock's thread and
/// hands it to a ``FrameConsumer`` on a consumer thread: a dedicated thread of its own (the
/// default: devices, the network, latency-sensitive work), or one worker of a ``SinkWorkerPool``
/// shared with other sinks (file writers).
///
/// The consumer thread is woken when `wakeThreshold` frames are queued and at least every 50 ms;
/// it consumes the queued frames in order and then calls `drained`. A pooled sink's consumer is
/// only ever called by the one worker it was given to; a slow consumer delays the other sinks of
/// that worker, never the clock (under `.drop`).
///
/// Thread: `onFrame` on the room clock's thread (never blocks under `.drop`, never allocates);
/// `close`, the counters and `failure` from any other thread but the consumer thread.
///
/// Not generic on purpose: the consumer is called once per frame on the consumer thread, where
/// an existential call costs nothing that matters.
public final class QueuedSink: AudioTrackSink, @unchecked Sendable {
    /// The queue between the clock and the consumer thread.
    public let queue: FrameQueue
    /// What happens when the queue is full.
    public let policy: OverflowPolicy

    private let consumer: any FrameConsumer  // the consumer thread only
    private let worker: SinkWorkerPool.Worker?  // nil: a dedicated thread
    private let wakeThreshold: Int
    private let dropped = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)
    private let closing = Atomic<Bool>(false)
    private let consumerSleeping = Atomic<Bool>(false)
    private let producerWaiting = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)  // mirrors failureBox != nil, for the per-frame check
    private let dataReady = DispatchSemaphore(value: 0)
    private let spaceReady = DispatchSemaphore(value: 0)
    private let threadDone = DispatchSemaphore(value: 0)  // the consumer has finished
    private let result = Locked<(closed: Bool, error: (any Error)?)>((false, nil))
    private let failureBox = Locked<(any Error)?>(nil)
    /// Told ``RoomBus/Event/sinkFailed`` once, when the consumer first fails.
    private let failureBus: RoomBus?

    /// A sink with a dedicated thread named `threadName` (its first 15 bytes, as Linux keeps it),
    /// started here. `capacity` is in frames (256 = 2.56 s of audio); the thread is woken when
    /// `wakeThreshold` frames are waiting (default a quarter of the capacity) and every 50 ms. The
    /// thread runs under `SCHED_OTHER` (it does I/O), or under SCHED_FIFO at `realtimePriority`
    /// for a consumer that keeps a device's pace and touches no disk (a sound card). The
    /// consumer's first failure is posted to `failureBus` as ``RoomBus/Event/sinkFailed``.
    public convenience init(
        consumer: any FrameConsumer, channels: Int, capacity: Int = 256, wakeThreshold: Int? = nil,
        policy: OverflowPolicy = .drop, threadName: String = "roomtap.sink", realtimePriority: Int32? = nil,
        failureBus: RoomBus? = nil
    ) {
        self.init(
            consumer: consumer, channels: channels, capacity: capacity, wakeThreshold: wakeThreshold, policy: policy,
            pool: nil, threadName: threadName, realtimePriority: realtimePriority, failureBus: failureBus)
    }

    /// A sink serviced by one worker of `pool` (the one with the fewest sinks), which it keeps
    /// until ``close()``. `capacity` is in frames (256 = 2.56 s of audio); the worker is woken when
    /// `wakeThreshold` frames are waiting (default a quarter of the capacity) and every 50 ms.
    /// Call it on the control side, not on the room clock's thread. The consumer's first failure
    /// is posted to `failureBus` as ``RoomBus/Event/sinkFailed``.
    public convenience init(
        consumer: any FrameConsumer, channels: Int, capacity: Int = 256, wakeThreshold: Int? = nil,
        policy: OverflowPolicy = .drop, pool: SinkWorkerPool, failureBus: RoomBus? = nil
    ) {
        self.init(
            consumer: consumer, channels: channels, capacity: capacity, wakeThreshold: wakeThreshold, policy: policy,
            pool: pool, threadName: pool.threadName, failureBus: failureBus)
    }

    private init(
        consumer: any FrameConsumer, channels: Int, capacity: Int, wakeThreshold: Int?, policy: OverflowPolicy,
        pool: SinkWorkerPool?, threadName: String, realtimePriority: Int32? = nil, failureBus: RoomBus?
    ) {
        self.failureBus = failureBus
        self.consumer = consumer
        self.queue = FrameQueue(capacity: capacity, channels: channels)
        self.policy = policy
        self.wakeThreshold = max(1, min(capacity, wakeThreshold ?? capacity / 4))
        if let pool {
            let worker = pool.chooseWorker()
            self.worker = worker
            worker.register(self)
        } else {
            worker = nil
            // I/O under the normal policy, never the creator's SCHED_FIFO.
            RoomThread.start(threadName, policy: .realtime(orNormal: realtimePriority)) { [self] in drainLoop() }
        }
    }

    /// Frames dropped: queue full, sink failed, or frames arriving after `close`.
    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }
    /// Frames the consumer has taken.
    public var consumedFrames: Int { consumed.load(ordering: .relaxed) }
    /// The consumer's first error, if it failed.
    public var failure: (any Error)? { failureBox.withLock { $0 } }

    public func onFrame(_ frame: AudioFrame) {
        guard !closing.load(ordering: .relaxed) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        while !queue.push(frame) {
            guard policy == .wait else {
                dropped.add(1, ordering: .relaxed)
                return
            }
            producerWaiting.store(true, ordering: .sequentiallyConsistent)
            wakeConsumer()
            if queue.count < queue.capacity { continue }
            _ = spaceReady.wait(timeout: .now() + .milliseconds(10))
        }
        if queue.count >= wakeThreshold { wakeConsumer() }
    }

    /// Waits until what is queued is consumed and `finish` was called on the consumer, ends the
    /// dedicated thread (or leaves the pool worker), and returns the consumer's first error.
    /// Idempotent, and safe from several threads at once: every call returns the same outcome once
    /// the consumer has finished. Call it after the sink was detached (e.g. in `onTrackRemoved`),
    /// from any thread but the room clock's and the consumer thread (a pool worker, for a pooled
    /// sink).
    public func close() throws {
        let outcome = result.withLock { r -> (closed: Bool, error: (any Error)?) in r }
        if !outcome.closed {
            closing.store(true, ordering: .sequentiallyConsistent)
            if let worker { worker.wake() } else { dataReady.signal() }
            threadDone.wait()
            threadDone.signal()  // let a concurrent close() through as well
            let error = failure
            result.withLock { $0 = (true, error) }
            if let error { throw error }
            return
        }
        if let error = outcome.error { throw error }
    }

    private func wakeConsumer() {
        if let worker {
            worker.wake()
        } else if consumerSleeping.exchange(false, ordering: .sequentiallyConsistent) {
            dataReady.signal()
        }
    }

    // MARK: - On a pool worker

    /// Whether the worker should make a pass now rather than sleep: enough frames to wake for, or
    /// closing. Any thread.
    var needsPass: Bool {
        queue.count >= wakeThreshold || closing.load(ordering: .sequentiallyConsistent)
    }

    /// One pass of the sink's worker: consumes the frames queued when it starts (so a sink the
    /// clock keeps filling cannot hold the worker), calls `drained`, and once the sink is closing
    /// and its queue is empty calls `finish`. Returns true when the sink is finished; the worker
    /// then drops it and calls ``passFinished()``. The worker's thread only.
    func servicePass() -> Bool {
        var remaining = queue.count
        while remaining > 0, queue.peek({ frame in deliver(frame) }) != nil {
            queue.pop()
            remaining -= 1
            if producerWaiting.exchange(false, ordering: .sequentiallyConsistent) { spaceReady.signal() }
        }
        attempt { try consumer.drained() }
        guard closing.load(ordering: .sequentiallyConsistent) && queue.count == 0 else { return false }
        attempt { try consumer.finish() }
        return true
    }

    /// Called by the worker after it dropped the finished sink: lets ``close()`` return.
    func passFinished() { threadDone.signal() }

    // MARK: - The dedicated thread

    private func drainLoop() {
        while true {
            while queue.peek({ frame in deliver(frame) }) != nil {
                queue.pop()
                if producerWaiting.exchange(false, ordering: .sequentiallyConsistent) { spaceReady.signal() }
            }
            attempt { try consumer.drained() }
            if closing.load(ordering: .sequentiallyConsistent) && queue.count == 0 { break }
            consumerSleeping.store(true, ordering: .sequentiallyConsistent)
            if queue.count > 0 || closing.load(ordering: .sequentiallyConsistent) {
                consumerSleeping.store(false, ordering: .sequentiallyConsistent)
                continue
            }
            _ = dataReady.wait(timeout: .now() + .milliseconds(50))
            consumerSleeping.store(false, ordering: .sequentiallyConsistent)
        }
        attempt { try consumer.finish() }
        threadDone.signal()
    }

    private func deliver(_ frame: AudioFrame) {
        guard !failed.load(ordering: .acquiring) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        attempt { try consumer.consume(frame) }
        if failed.load(ordering: .acquiring) {
            dropped.add(1, ordering: .relaxed)
        } else {
            consumed.add(1, ordering: .relaxed)
        }
    }

    private func attempt(_ body: () throws -> Void) {
        guard !failed.load(ordering: .acquiring) else { return }
        do { try body() } catch {
            let first = failureBox.withLock { box -> Bool in
                defer { if box == nil { box = error } }
                return box == nil
            }
            failed.store(true, ordering: .releasing)
            if first { failureBus?.post(.sinkFailed) }
        }
    }
}
