/// Fixed storage for one 10 ms frame, allocated once (when a track or queue is created) and reused
/// for every frame after, so the 10 ms path never allocates.
///
/// Thread: confined to one thread at a time (for a track's render buffer, the room clock's thread).
package final class FrameBuffer {
    /// Storage for `AudioFrame.samplesPerChannel * channels` samples.
    public let samples: UnsafeMutableBufferPointer<Int16>
    /// 1 or 2.
    public let channels: Int
    // Confined to one thread at a time, written every frame: exclusivity is not checked at run
    // time (`@exclusivity(unchecked)`, see docs/notes/offline-path.md).
    /// Room-timeline index of the first sample of the frame now held.
    @exclusivity(unchecked) public var roomSample: Int64 = 0
    /// Status of the frame now held.
    @exclusivity(unchecked) public var status: FrameStatus = .silence

    /// Allocates zeroed storage for one frame of `channels` channels.
    public init(channels: Int) {
        precondition(channels == 1 || channels == 2, "a frame has 1 or 2 channels")
        self.channels = channels
        samples = .allocate(capacity: AudioFrame.samplesPerChannel * channels)
        samples.initialize(repeating: 0)
    }

    deinit { samples.deallocate() }

    /// The frame now held, as a borrowed view valid until this buffer is next written.
    public var frame: AudioFrame {
        AudioFrame(samples: UnsafeBufferPointer(samples), channels: channels, roomSample: roomSample, status: status)
    }

    /// Zeroes the samples.
    public func clear() { samples.update(repeating: 0) }
}
