import RoomTapSync
import Synchronization

/// A sink that hands every frame straight to its ``FrameConsumer`` on the thread that renders the
/// track: no queue, no copy, no writer thread, no hand-over. For offline rooms on a
/// ``VirtualClock`` only, where the render threads may block on the disk (there is no deadline)
/// and a queue hop would only cost CPU: each render thread then writes the files of the tracks it
/// renders, as the smallest one-thread program for the job does.
///
/// Counters and failure as ``QueuedSink``: a consumer that throws stops the consumption (that
/// frame and every later one count as dropped, `finish` is not called) and its error comes back
/// from ``close()``; frames after `close` are dropped. `drained` is called every
/// ``drainInterval`` frames, for periodic work such as a header refresh.
///
/// Thread: `onFrame` on the thread rendering the track (one at a time, with a happens-before edge
/// whenever the track moves to another render thread, as the room guarantees); `close` once the
/// sink is detached and the room no longer renders the track, from any thread; the counters and
/// `failure` from any thread. Allocates nothing per frame unless the consumer does.
public final class InlineSink: AudioTrackSink, @unchecked Sendable {
    /// Frames between calls to the consumer's `drained`.
    public static let drainInterval = 32

    private let consumer: any FrameConsumer  // the rendering thread, then the closing one
    @exclusivity(unchecked) private var sinceDrained = 0  // the rendering thread
    private let dropped = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)  // mirrors failureBox != nil, for the per-frame check
    private let failureBox = Locked<(any Error)?>(nil)
    private let closing = Locked<Bool>(false)  // serialises close()

    /// Told ``RoomBus/Event/sinkFailed`` once, when the consumer first fails.
    private let failureBus: RoomBus?

    /// A sink calling `consumer` on the rendering thread; its first failure is posted to
    /// `failureBus` (a post allocates nothing, so the rendering thread may make it).
    public init(consumer: any FrameConsumer, failureBus: RoomBus? = nil) {
        self.consumer = consumer
        self.failureBus = failureBus
    }

    /// Frames dropped: the consumer failed, or they came after `close`.
    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }
    /// Frames the consumer has taken.
    public var consumedFrames: Int { consumed.load(ordering: .relaxed) }
    /// The consumer's first error, if it failed.
    public var failure: (any Error)? { failureBox.withLock { $0 } }

    /// Gives the frame to the consumer now. The rendering thread; blocks as long as the consumer.
    public func onFrame(_ frame: AudioFrame) {
        guard !closed.load(ordering: .relaxed), !failed.load(ordering: .relaxed) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        guard attempt({ try consumer.consume(frame) }) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        consumed.add(1, ordering: .relaxed)
        sinceDrained += 1
        if sinceDrained >= Self.drainInterval {
            sinceDrained = 0
            attempt { try consumer.drained() }
        }
    }

    /// Calls the consumer's `finish` (unless it failed) and returns its first error. Idempotent,
    /// also from several threads at once: every call returns the same outcome. Call it once the
    /// sink is detached and the room renders the track no more (e.g. in `onTrackRemoved`).
    public func close() throws {
        closing.withLock { done in
            guard !done else { return }
            closed.store(true, ordering: .sequentiallyConsistent)
            attempt { try consumer.finish() }
            done = true
        }
        if let error = failure { throw error }
    }

    @discardableResult
    private func attempt(_ body: () throws -> Void) -> Bool {
        guard !failed.load(ordering: .acquiring) else { return false }
        do { try body() } catch {
            let first = failureBox.withLock { box -> Bool in
                defer { if box == nil { box = error } }
                return box == nil
            }
            failed.store(true, ordering: .releasing)
            if first { failureBus?.post(.sinkFailed) }
            return false
        }
        return true
    }
}
