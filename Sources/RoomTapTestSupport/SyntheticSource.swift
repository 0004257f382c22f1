public import RoomTapCore
import Synchronization

/// Base of the deterministic test sources (``SineSource``, ``ConstantSource``, ``RampSource``): a
/// signal that starts `offset` samples into the room, lasts `length` samples (nil: forever), and is
/// silence elsewhere. Subclasses give the signal by overriding ``value(at:channel:)``.
///
/// A frame holding any signal sample is `.normal`, others `.silence`; ``isFinished`` turns true
/// after the frame holding the last sample was rendered, so a room of such sources ends exactly on
/// the frame in which the longest one finishes. ``expected(at:channel:)`` says what any room
/// sample should hold, for comparisons.
///
/// Thread: `render` on the room clock's thread; it does not allocate. The counters are atomic.
public class SyntheticSource: FrameSource, @unchecked Sendable {
    public let channels: Int
    /// Room sample of the signal's first sample.
    public let offset: Int64
    /// Signal length in samples per channel; nil for an endless source.
    public let length: Int64?
    private let nextRoomSample = Atomic<Int64>(0)
    private let rendered = Atomic<Int>(0)

    /// A source of `channels` channels whose signal covers `offset ..< offset + length`.
    public init(channels: Int = 1, offset: Int64 = 0, length: Int64? = nil) {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        self.channels = channels
        self.offset = offset
        self.length = length
    }

    /// The signal's sample `n` (0 = its first) of `channel`. Override.
    public func value(at n: Int64, channel: Int) -> Int16 { 0 }

    /// What the source renders at absolute room sample `roomSample`.
    public final func expected(at roomSample: Int64, channel: Int = 0) -> Int16 {
        guard roomSample >= offset, length.map({ roomSample < offset + $0 }) ?? true else { return 0 }
        return value(at: roomSample - offset, channel: channel)
    }

    /// Room samples `range`, interleaved, as this source renders them.
    public final func expectedSamples(_ range: Range<Int64>) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(range.count * channels)
        for n in range { for c in 0..<channels { out.append(expected(at: n, channel: c)) } }
        return out
    }

    /// Frames rendered so far.
    public var renderedFrames: Int { rendered.load(ordering: .relaxed) }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        var any = false
        let end = length.map { offset + $0 } ?? .max
        for i in 0..<AudioFrame.samplesPerChannel {
            let n = roomSample + Int64(i)
            let inside = n >= offset && n < end
            any = any || inside
            for c in 0..<channels { samples[i * channels + c] = inside ? value(at: n - offset, channel: c) : 0 }
        }
        nextRoomSample.store(roomSample + Int64(AudioFrame.samplesPerChannel), ordering: .relaxed)
        rendered.add(1, ordering: .relaxed)
        return any ? .normal : .silence
    }

    public var isFinished: Bool {
        guard let length else { return false }
        return nextRoomSample.load(ordering: .relaxed) >= offset + length
    }
}
