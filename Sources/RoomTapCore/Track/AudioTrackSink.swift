/// Receives a track's audio, one 10 ms frame at a time (the Sora SDK's audio track sink).
///
/// Attach with ``AudioTrack/addSink(_:)``. One sink is meant for one track.
///
/// Thread: `onFrame` is called on the room clock's thread, every 10 ms of room time, in room-time
/// order. It must not block, allocate, log or await: a sink that does I/O copies the frame into its
/// own bounded queue and works on its own thread (see ``QueuedSink``).
public protocol AudioTrackSink: AnyObject, Sendable {
    /// Takes one frame. The frame's samples are valid only during this call.
    func onFrame(_ frame: AudioFrame)
}

/// Which view of a track's audio a sink receives (see ``AudioTrack/addSink(_:tap:)``).
public enum SinkTap: Sendable {
    /// The track's recording: the raw speaker, unless a control is scoped to the recording
    /// (``ControlScope/record``). Per-speaker files use this.
    case recorded
    /// What is heard now: the live playout after mute, volume and solo. Playback of one track
    /// uses this.
    case heard
    /// The live playout before any control (what a mix-minus for an agent is made of; the same
    /// as `.raw` in a room whose record is its live audio, see ``RoomTiming``).
    case live
    /// The record's audio, before any control.
    case raw
}
