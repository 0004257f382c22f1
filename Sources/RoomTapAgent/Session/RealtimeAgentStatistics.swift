/// Counters of one agent, for `status --json` and `room.json`. Never holds the API key.
///
/// Thread: a value snapshot (``RealtimeAgent/statistics``).
public struct RealtimeAgentStatistics: Sendable, Codable, Equatable {
    /// Where the agent is.
    public var state: RealtimeAgentState
    /// Why the agent failed (one line), if it did.
    public var failure: String?
    /// The last error (a connection failure, an `error` event, a failed response), one line.
    public var lastError: String?
    /// Connection attempts after a failed attempt or a dropped session (not session rollovers).
    public var retries: Int
    /// The last `session.update` the server refused (the session kept its previous settings).
    public var sessionWarning: String?
    /// PCM bytes (24 kHz, 16-bit) sent in `input_audio_buffer.append` events.
    public var audioBytesSent: Int
    /// `input_audio_buffer.append` events sent.
    public var audioChunksSent: Int
    /// Responses the server created.
    public var responses: Int
    /// Responses the agent saw end (`response.done`: completed, cancelled, failed or incomplete).
    public var responsesDone: Int
    /// `say` texts waiting their turn (a response in progress, someone talking, no session yet).
    public var saysWaiting: Int
    /// Someone in the room is talking, as the server's voice detection last said
    /// (`speech_started` without its `speech_stopped` yet).
    public var humanTalking: Bool
    /// Times a human talked over the agent and its playback was cut.
    public var bargeIns: Int
    /// Connections made after the first because one dropped or failed (not rollovers).
    public var reconnects: Int
    /// Sessions opened: the first, and one per reconnect and rollover.
    public var sessions: Int = 0
    /// Sessions replaced by a new one before or at their maximum duration.
    public var rollovers: Int
    /// `error` events received (and connection failures), not counting the benign ones
    /// (`response_cancel_not_active`, a refused create that is queued again).
    public var errors: Int
    /// Human utterances whose transcription failed.
    public var transcriptionFailures: Int
    /// Replies that came as text instead of speech (logged, written to the transcript, not spoken).
    public var textReplies: Int
    /// Function calls the model made that were run (built-in room tools and user tools).
    public var toolCalls: Int
    /// Of those, the ones whose result was an error (unknown tool or track, bad arguments, a
    /// command that failed or timed out).
    public var toolErrors: Int
    /// Reply audio queued on the voice track, in 48 kHz samples.
    public var voiceSamples: Int64
    /// Reply audio dropped because the voice buffer was full, in 48 kHz samples.
    public var voiceOverflowSamples: Int64
    /// Frames of heard audio dropped because the listen queue was full.
    public var listenDroppedFrames: Int
}
