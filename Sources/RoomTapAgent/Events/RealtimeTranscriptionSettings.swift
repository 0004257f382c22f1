import RoomTapJSON

/// What a transcription session asks for: the fields of a GA `session.update` with
/// `session.type` "transcription", on a connection opened with `?intent=transcription` (no
/// `model=` in the URL: that one opens a conversation session, which refuses this update). The
/// session only transcribes: input audio as `audio/pcm` at 24 kHz, server VAD commits each turn,
/// and `conversation.item.input_audio_transcription.delta/completed` carry the text. No voice, no
/// responses, no tools, no instructions. See ../shared/realtime-api.md and
/// https://platform.openai.com/docs/guides/realtime-transcription.
///
/// ```
/// {"type":"session.update","session":{"type":"transcription","audio":{"input":{
///   "format":{"type":"audio/pcm","rate":24000},"noise_reduction":{"type":"near_field"},
///   "transcription":{"model":"gpt-4o-mini-transcribe","language":"en","prompt":"…"},
///   "turn_detection":{"type":"server_vad","threshold":0.5,"prefix_padding_ms":300,
///                     "silence_duration_ms":500}}}}}
/// ```
///
/// Thread: a value; use anywhere.
public struct RealtimeTranscriptionSettings: Sendable, Equatable {
    /// The default transcription model, the one place it is named.
    public static let defaultModel = "gpt-4o-mini-transcribe"
    /// The transcription model (`gpt-4o-mini-transcribe`, `gpt-4o-transcribe`, `whisper-1`…).
    public var model: String
    /// The language of the speech, ISO-639-1 (`en`); nil lets the model find it.
    public var language: String?
    /// Words the model should expect (names, terms); empty: none sent.
    public var prompt: String
    /// Input noise reduction: `near_field` (one speaker's own track, a headset or a close
    /// microphone: the default) or `far_field`; nil for none.
    public var noiseReduction: String?
    /// Server VAD activation threshold, 0...1.
    public var vadThreshold: Double
    /// Audio kept before detected speech, in milliseconds.
    public var vadPrefixPaddingMs: Int
    /// Silence that ends a turn, in milliseconds.
    public var vadSilenceDurationMs: Int

    /// Settings with the documented defaults.
    public init(
        model: String = Self.defaultModel, language: String? = nil, prompt: String = "",
        noiseReduction: String? = "near_field", vadThreshold: Double = 0.5, vadPrefixPaddingMs: Int = 300,
        vadSilenceDurationMs: Int = 500
    ) {
        self.model = model
        self.language = language
        self.prompt = prompt
        self.noiseReduction = noiseReduction
        self.vadThreshold = vadThreshold
        self.vadPrefixPaddingMs = vadPrefixPaddingMs
        self.vadSilenceDurationMs = vadSilenceDurationMs
    }

    /// Transcription models that take no turn detection (the live ones): the client commits
    /// each turn itself (`input_audio_buffer.commit`), here when the ``VoiceGate`` closes.
    public static let commitOnlyModels: Set<String> = ["gpt-live-transcribe", "gpt-realtime-whisper"]

    /// Whether the server finds the turns (`server_vad`), or the client commits them
    /// (`turn_detection: null`, ``commitOnlyModels``).
    public var serverTurnDetection: Bool { !Self.commitOnlyModels.contains(model) }

    /// The `session` object of the `session.update`.
    func sessionObject() -> JSONValue {
        var transcription: [String: JSONValue] = ["model": .string(model)]
        if let language { transcription["language"] = .string(language) }
        if !prompt.isEmpty { transcription["prompt"] = .string(prompt) }
        var input: [String: JSONValue] = [
            "format": ["type": "audio/pcm", "rate": 24_000],
            "transcription": .object(transcription),
            "turn_detection": serverTurnDetection
                ? [
                    "type": "server_vad", "threshold": .number(vadThreshold),
                    "prefix_padding_ms": .number(Double(vadPrefixPaddingMs)),
                    "silence_duration_ms": .number(Double(vadSilenceDurationMs)),
                ] : .null,
        ]
        if let noiseReduction { input["noise_reduction"] = ["type": .string(noiseReduction)] }
        return ["type": "transcription", "audio": ["input": .object(input)]]
    }
}
