public import RoomTapCore

/// What the recorder needs of an agent, whichever kind it is: the Realtime agent (speech to
/// speech, hears the mix-minus) or the pipeline agent (per-speaker turns, a chat model, speech).
/// Both put a voice track and a mix-minus in the room and take the same controls.
///
/// Thread: as each implementation states; never the room clock's.
public protocol AgentEngine: AnyObject, Sendable {
    /// The agent's voice (the `agent` track's source).
    var voice: AgentVoiceSource { get }
    /// Adds the voice track and the mix-minus to `room`, hearing `humans`. Before ``start()``.
    @discardableResult
    func attach(to room: Room, hearing humans: [AudioTrack], voiceName: String, hearsName: String) -> AgentTracks
    /// A human joined: the agent hears them. Idempotent.
    func hear(_ track: AudioTrack)
    /// True for the tracks the agent added.
    func isOwn(_ track: AudioTrack) -> Bool
    func start()
    /// Ends the agent; idempotent; blocks until done.
    func stop()
    /// `roomtap agent say`: answer this now.
    func say(_ text: String)
    /// `roomtap agent instructions`.
    func setInstructions(_ text: String)
    /// `roomtap agent mute|unmute`.
    func setListening(_ on: Bool)
    var isListening: Bool { get }
}

extension RealtimeAgent: AgentEngine {}
extension PipelineAgent: AgentEngine {}
