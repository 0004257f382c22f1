import Foundation
public import RoomTapCore
import RoomTapSync

/// A ``FrameConsumer`` for ``QueuedSink`` tests: records what it consumes, and can be slow
/// (sleeps `delay` per frame) or fail (throws ``Failure`` from the `failAt`-th frame on, 0-based).
///
/// Thread: the consume/drained/finish calls on the sink's thread; the readers from any thread.
public final class RecordingConsumer: FrameConsumer, @unchecked Sendable {
    /// The error thrown when asked to fail.
    public struct Failure: Error, Equatable {
        /// Index of the frame that failed.
        public let frame: Int
        public init(frame: Int) { self.frame = frame }
    }

    /// Sleep per consumed frame.
    public let delay: Duration
    /// Index of the first frame to fail on.
    public let failAt: Int?

    private struct Store {
        var roomSamples: [Int64] = []
        var samples: [Int16] = []
        var drainedCalls = 0
        var finishCalls = 0
    }

    private let store = Locked(Store())

    public init(delay: Duration = .zero, failAt: Int? = nil) {
        self.delay = delay
        self.failAt = failAt
    }

    public func consume(_ frame: AudioFrame) throws {
        let index = store.withLock { $0.roomSamples.count }
        if let failAt, index >= failAt { throw Failure(frame: index) }
        if delay > .zero {
            let (seconds, attoseconds) = delay.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) * 1e-18)  // a slow consumer, on purpose
        }
        store.withLock {
            $0.roomSamples.append(frame.roomSample)
            $0.samples.append(contentsOf: frame.samples)
        }
    }

    public func drained() throws { store.withLock { $0.drainedCalls += 1 } }

    public func finish() throws { store.withLock { $0.finishCalls += 1 } }

    /// Room samples of the frames consumed, in order.
    public var roomSamples: [Int64] { store.snapshot(\.roomSamples) }
    /// Samples consumed, interleaved, concatenated.
    public var samples: [Int16] { store.snapshot(\.samples) }
    /// Frames consumed.
    public var consumedCount: Int { store.withLock { $0.roomSamples.count } }
    /// Times `drained` was called.
    public var drainedCalls: Int { store.withLock { $0.drainedCalls } }
    /// Times `finish` was called.
    public var finishCalls: Int { store.withLock { $0.finishCalls } }
}
