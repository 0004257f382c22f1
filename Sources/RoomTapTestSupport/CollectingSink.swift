public import RoomTapCore
import RoomTapSync

/// A sink that keeps everything it is given: every frame's room sample, status, channel count and
/// samples, in arrival order. For tests (it allocates and locks on the clock's thread).
///
/// Thread: `onFrame` on the room clock's thread; the readers from any thread.
public final class CollectingSink: AudioTrackSink, @unchecked Sendable {
    /// One received frame, without its samples.
    public struct Entry: Sendable, Equatable {
        public let roomSample: Int64
        public let status: FrameStatus
        public let channels: Int
    }

    private struct Store {
        var entries: [Entry] = []
        var samples: [Int16] = []
    }

    private let store = Locked(Store())

    /// An empty sink; `reserveFrames` preallocates room for that many mono frames.
    public init(reserveFrames: Int = 0) {
        store.withLock {
            $0.entries.reserveCapacity(reserveFrames)
            $0.samples.reserveCapacity(reserveFrames * AudioFrame.samplesPerChannel)
        }
    }

    public func onFrame(_ frame: AudioFrame) {
        store.withLock {
            $0.entries.append(Entry(roomSample: frame.roomSample, status: frame.status, channels: frame.channels))
            $0.samples.append(contentsOf: frame.samples)
        }
    }

    /// Every frame received, in order.
    public var entries: [Entry] { store.snapshot(\.entries) }
    /// Frames received.
    public var frameCount: Int { store.withLock { $0.entries.count } }
    /// Every frame's room sample, in order.
    public var roomSamples: [Int64] { entries.map(\.roomSample) }
    /// Every frame's status, in order.
    public var statuses: [FrameStatus] { entries.map(\.status) }
    /// All samples received, interleaved, concatenated.
    public var samples: [Int16] { store.snapshot(\.samples) }
}
