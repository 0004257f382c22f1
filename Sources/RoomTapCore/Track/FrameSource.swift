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

/// A source whose live playout differs from its recording: a network stream (the record waits
/// longer for late packets, see the RTP jitter buffer) or a mix (of its inputs' live frames).
///
/// In a room with ``RoomTiming/livePlayout`` the track renders both every tick: `render` for the
/// record (files, `.recorded` and `.raw` taps, record mixes) and ``renderLive(into:at:)`` for what
/// is heard now (`.heard` and `.live` taps, live mixes, the meter). Elsewhere only `render` runs
/// and the live view is the record.
///
/// Thread: as ``FrameSource``: the room clock's thread only; `renderLive` after `render` in the
/// same tick.
public protocol LivePlayoutSource: FrameSource {
    /// False when this source has no separate live playout (then only `render` is called).
    var hasLivePlayout: Bool { get }

    /// Fills `samples` with the live playout of the frame at room sample `roomSample`.
    func renderLive(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus
}

/// A source that decodes in steps of two frames (20 ms Opus packets) and can take each step one
/// frame early without changing what it renders (a network stream's record playout).
///
/// Streams sent together decode on the same ticks; the room asks every other track a render thread
/// owns to decode ahead (see ``RenderPlan``), so that each thread's decodes fall half on even and
/// half on odd ticks, halving its busiest tick.
///
/// Thread: `decodeAhead` is called on the room clock's thread whenever the room's tracks change,
/// before the track's next render (which may be on another render thread of the room).
public protocol StaggeredSource: FrameSource {
    /// Decode one frame ahead (true) or just in time (false) from the next render on.
    func decodeAhead(_ ahead: Bool)
}

/// A source whose amount of work is known before it renders (a file: its playable length). A room
/// rendering on several threads gives them equal shares of this work (see ``RenderPlan``) rather
/// than equal numbers of tracks.
///
/// Thread: `renderWork` is read on the control side (any thread) when tracks are added or
/// removed; it must not change.
public protocol SizedSource: FrameSource {
    /// The work of the whole source, in samples (per channel) it decodes; nil when not known
    /// before it renders (a stream).
    var renderWork: Int64? { get }
}
