import Dispatch
public import RoomTapCore

/// Wraps a source and parks the room clock inside `render` of frame `gateFrame` until
/// ``release()``: a test can then change sinks or tracks at a known point of the timeline.
///
/// Thread: `render` on the room clock's thread (it blocks, on purpose); the rest from the test.
public final class GatedSource: FrameSource, @unchecked Sendable {
    /// The wrapped source.
    public let inner: any FrameSource
    /// The frame index the clock stops at.
    public let gateFrame: Int64
    private let reached = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    public init(_ inner: any FrameSource, gateFrame: Int64) {
        self.inner = inner
        self.gateFrame = gateFrame
    }

    public var channels: Int { inner.channels }
    public var isFinished: Bool { inner.isFinished }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        if roomSample == gateFrame * Int64(AudioFrame.samplesPerChannel) {
            reached.signal()
            opened.wait()
        }
        return inner.render(into: samples, at: roomSample)
    }

    /// Waits until the clock is parked at the gate; false on timeout (seconds).
    public func waitUntilReached(timeout: Double = 10) -> Bool {
        reached.wait(timeout: .now() + timeout) == .success
    }

    /// Lets the clock go on.
    public func release() { opened.signal() }
}
