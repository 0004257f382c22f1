/// Where a track's audio comes from: an Ogg Opus file, a jitter buffer, a mixer.
///
/// The room clock pulls one frame from every source per tick ("the clock pulls, the network
/// pushes"). Sources are handed to the room once, then used only by the room clock's thread.
///
/// Thread: after ``Room/addTrack(name:source:)`` every member is called only on the room clock's
/// thread. `render` must not block, allocate, log or await, and it reports trouble through the
/// returned status, never by throwing.
public protocol FrameSource: AnyObject, Sendable {
    /// Channels of the frames this source renders (1 or 2). Constant.
    var channels: Int { get }

    /// Fills `samples` (exactly `AudioFrame.samplesPerChannel * channels` of them) with the audio
    /// of the frame that starts at room sample `roomSample`, and says what it holds.
    ///
    /// Called once per tick with `roomSample` increasing by `AudioFrame.samplesPerChannel`.
    func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus

    /// True once the source will render nothing but silence from now on (a file that has ended).
    /// A live source that may still produce audio returns false. An offline room ends when every
    /// source track is finished.
    var isFinished: Bool { get }
}
