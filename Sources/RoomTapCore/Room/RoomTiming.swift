/// How a room's recording relates to its live playout (see docs/ARCHITECTURE.md, "Two playout
/// points").
///
/// A room with network streams records them at a fixed record delay, later than anything is
/// heard, so late packets still make it into the files. Everything else of the room must then be
/// recorded equally late to stay in line with them: the audio of other sources (a microphone, the
/// agent's voice, files played at real time) and every control change reach the record
/// ``recordDelayFrames`` ticks after they were live. So the record is the live audio, later: a
/// change lands in a file on the same audio it landed on when it was heard.
///
/// Thread: a value; immutable once the room is created.
public struct RoomTiming: Sendable, Equatable {
    /// Ticks (10 ms) between a live frame and its place in the record, for sources without a
    /// record playout of their own and for controls. 0: the record is the live audio.
    public var recordDelayFrames: Int
    /// True when something consumes live audio (playback, an agent): sources with a separate live
    /// playout (``LivePlayoutSource``) render it; otherwise the live view is the record.
    public var livePlayout: Bool

    /// The record is the live audio (offline rooms, rooms without network streams).
    public init(recordDelayFrames: Int = 0, livePlayout: Bool = false) {
        precondition(recordDelayFrames >= 0, "a record delay is not negative")
        self.recordDelayFrames = recordDelayFrames
        self.livePlayout = livePlayout
    }
}
