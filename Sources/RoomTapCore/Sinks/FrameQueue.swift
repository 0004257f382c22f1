import Synchronization

/// A bounded single-producer single-consumer ring of 10 ms frames with preallocated storage: the
/// one thread boundary between the room clock and a sink that does I/O (GStreamer's leaky
/// `queue`).
///
/// Thread: `push` from one producer thread (the room clock's), `peek`/`pop` from one consumer
/// thread. Neither side blocks or allocates; `count` is safe anywhere.
public final class FrameQueue: @unchecked Sendable {
    /// Slots in the ring.
    public let capacity: Int
    /// Channels of every frame in the queue.
    public let channels: Int

    private let samples: UnsafeMutableBufferPointer<Int16>
    private let roomSamples: UnsafeMutableBufferPointer<Int64>
    private let statuses: UnsafeMutableBufferPointer<FrameStatus>
    private let head = Atomic<Int>(0)  // next slot to write; written by the producer
    private let tail = Atomic<Int>(0)  // next slot to read; written by the consumer

    /// Allocates `capacity` frames of `channels` channels.
    public init(capacity: Int, channels: Int) {
        precondition(capacity > 0, "a queue holds at least one frame")
        self.capacity = capacity
        self.channels = channels
        samples = .allocate(capacity: capacity * AudioFrame.samplesPerChannel * channels)
        samples.initialize(repeating: 0)
        roomSamples = .allocate(capacity: capacity)
        roomSamples.initialize(repeating: 0)
        statuses = .allocate(capacity: capacity)
        statuses.initialize(repeating: .silence)
    }

    deinit {
        samples.deallocate()
        roomSamples.deallocate()
        statuses.deallocate()
    }

    /// Frames waiting.
    public var count: Int { head.load(ordering: .acquiring) - tail.load(ordering: .acquiring) }

    /// Copies `frame` into the ring (converting channels if needed). Returns false, copying
    /// nothing, when the ring is full. Producer only.
    @discardableResult
    public func push(_ frame: AudioFrame) -> Bool {
        let h = head.load(ordering: .relaxed)
        guard h - tail.load(ordering: .acquiring) < capacity else { return false }
        let slot = h % capacity
        let perFrame = AudioFrame.samplesPerChannel * channels
        frame.copy(into: samples.baseAddress! + slot * perFrame, channels: channels)
        roomSamples[slot] = frame.roomSample
        statuses[slot] = frame.status
        head.store(h + 1, ordering: .releasing)
        return true
    }

    /// Calls `body` with the oldest frame, without removing it; nil when empty. Consumer only.
    public func peek<R>(_ body: (AudioFrame) throws -> R) rethrows -> R? {
        let t = tail.load(ordering: .relaxed)
        guard head.load(ordering: .acquiring) > t else { return nil }
        let slot = t % capacity
        let perFrame = AudioFrame.samplesPerChannel * channels
        let view = UnsafeBufferPointer(rebasing: samples[(slot * perFrame)..<((slot + 1) * perFrame)])
        return try body(
            AudioFrame(samples: view, channels: channels, roomSample: roomSamples[slot], status: statuses[slot]))
    }

    /// Removes the oldest frame (after `peek`). Consumer only.
    public func pop() {
        let t = tail.load(ordering: .relaxed)
        precondition(head.load(ordering: .acquiring) > t, "pop on an empty queue")
        tail.store(t + 1, ordering: .releasing)
    }
}
