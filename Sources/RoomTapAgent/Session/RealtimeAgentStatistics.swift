/// Counters of one agent, for `room.json`. Never holds the API key.
///
/// Thread: a value snapshot (``RealtimeAgent/statistics``).
public struct RealtimeAgentStatistics: Sendable, Codable, Equatable {
    /// Where the agent is: `idle`, `connecting`, `connected`, `reconnecting`, `stopped`, `failed`.
    public var state: String
    /// Why the agent failed (one line), if it did.
    public var failure: String?
    /// PCM bytes (24 kHz, 16-bit) sent in `input_audio_buffer.append` events.
    public var audioBytesSent: Int
    /// `input_audio_buffer.append` events sent.
    public var audioChunksSent: Int
    /// Responses the server created.
    public var responses: Int
    /// Times a human talked over the agent and its playback was cut.
    public var bargeIns: Int
    /// Connections made after the first.
    public var reconnects: Int
    /// `error` events received (and connection failures).
    public var errors: Int
    /// Reply audio queued on the voice track, in 48 kHz samples.
    public var voiceSamples: Int64
    /// Reply audio dropped because the voice buffer was full, in 48 kHz samples.
    public var voiceOverflowSamples: Int64
    /// Frames of heard audio dropped because the listen queue was full.
    public var listenDroppedFrames: Int
}
