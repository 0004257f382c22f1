import RoomTapJSON

/// What the agent asks of a Realtime session: the fields of a GA `session.update`
/// (`session.type` "realtime", audio in and out as `audio/pcm` at 24 kHz, server VAD, input
/// transcription). See ../shared/realtime-api.md and
/// https://platform.openai.com/docs/api-reference/realtime-client-events/session/update.
///
/// Thread: a value; use anywhere.
public struct RealtimeSessionSettings: Sendable, Equatable {
    /// The default model, the one place it is named (`--agent-model`'s default): a current one.
    /// `gpt-realtime` and `gpt-realtime-mini` are retired on 2027-01-19 (replaced by the 2.1
    /// models); a retired or unknown model ends the agent with one line naming it.
    public static let defaultModel = "gpt-realtime-2.1"

    /// The model (``defaultModel``). It is the URL's `model=` (``RealtimeAgentConfiguration`` puts
    /// it there) and never sent in `session.update`: the session's model is fixed when it opens.
    public var model: String?
    /// The system instructions; empty ones are not sent (an empty string would clear them).
    public var instructions: String
    /// The voice (alloy, ash, ballad, coral, echo, sage, shimmer, verse, marin, cedar), or a
    /// custom voice's id (`voice_...`, sent as `{"id": "voice_..."}`).
    public var voice: String
    /// Server VAD activation threshold, 0...1.
    public var vadThreshold: Double
    /// Audio kept before detected speech, in milliseconds.
    public var vadPrefixPaddingMs: Int
    /// Silence that ends a turn, in milliseconds.
    public var vadSilenceDurationMs: Int
    /// Input transcription model (`gpt-4o-mini-transcribe`); nil for no transcription.
    public var transcriptionModel: String?
    /// Input noise reduction (`far_field` for a room, `near_field`); nil for none.
    public var noiseReduction: String?
    /// Whether server VAD cancels the reply itself when someone starts talking (the service's
    /// default). When false the agent sends `response.cancel` on a barge-in.
    public var interruptResponse: Bool = true
    /// How the server finds the end of a turn: `server_vad` (level and silence: the threshold,
    /// padding and silence above) or `semantic_vad` (a model judges whether the speaker is done;
    /// `eagerness` low, medium, high or auto), which falls less for pauses and noise in a room.
    public var turnDetection: TurnDetection = .server
    /// With `server_vad`: after this much silence the server prompts a response itself (ms); nil:
    /// never.
    public var idleTimeoutMs: Int?
    /// The input transcription's language (ISO-639-1) and prompt; nil: none sent.
    public var transcriptionLanguage: String?
    public var transcriptionPrompt: String?

    /// The server's turn detection.
    ///
    /// Thread: a value.
    public enum TurnDetection: Sendable, Equatable {
        case server
        /// `eagerness`: low, medium, high or auto.
        case semantic(eagerness: String)
    }

    /// Function tools the model may call (`session.tools`, with `tool_choice` `auto`); none: no
    /// `tools` field.
    public var tools: [RealtimeTool] = []

    /// Settings with the documented defaults.
    public init(
        model: String? = Self.defaultModel, instructions: String = "", voice: String = "marin",
        vadThreshold: Double = 0.5,
        vadPrefixPaddingMs: Int = 300, vadSilenceDurationMs: Int = 500,
        transcriptionModel: String? = "gpt-4o-mini-transcribe", noiseReduction: String? = "far_field"
    ) {
        self.model = model
        self.instructions = instructions
        self.voice = voice
        self.vadThreshold = vadThreshold
        self.vadPrefixPaddingMs = vadPrefixPaddingMs
        self.vadSilenceDurationMs = vadSilenceDurationMs
        self.transcriptionModel = transcriptionModel
        self.noiseReduction = noiseReduction
    }

    /// The `session` object of a full `session.update`.
    func sessionObject() -> JSONValue {
        let format: JSONValue = ["type": "audio/pcm", "rate": 24_000]
        var turn: [String: JSONValue]
        switch turnDetection {
        case .server:
            turn = [
                "type": "server_vad", "threshold": .number(vadThreshold),
                "prefix_padding_ms": .number(Double(vadPrefixPaddingMs)),
                "silence_duration_ms": .number(Double(vadSilenceDurationMs)),
            ]
            if let idleTimeoutMs { turn["idle_timeout_ms"] = .number(Double(idleTimeoutMs)) }
        case .semantic(let eagerness):
            turn = ["type": "semantic_vad", "eagerness": .string(eagerness)]
        }
        turn["create_response"] = true
        turn["interrupt_response"] = .bool(interruptResponse)
        var input: [String: JSONValue] = ["format": format, "turn_detection": .object(turn)]
        if let transcriptionModel {
            var transcription: [String: JSONValue] = ["model": .string(transcriptionModel)]
            if let transcriptionLanguage { transcription["language"] = .string(transcriptionLanguage) }
            if let transcriptionPrompt, !transcriptionPrompt.isEmpty {
                transcription["prompt"] = .string(transcriptionPrompt)
            }
            input["transcription"] = .object(transcription)
        }
        if let noiseReduction { input["noise_reduction"] = ["type": .string(noiseReduction)] }
        let voice: JSONValue = voice.hasPrefix("voice_") ? ["id": .string(voice)] : .string(voice)
        var session: [String: JSONValue] = [
            "type": "realtime",
            "output_modalities": ["audio"],
            "audio": ["input": .object(input), "output": ["format": format, "voice": voice]],
        ]
        if !instructions.isEmpty { session["instructions"] = .string(instructions) }
        if !tools.isEmpty {
            session["tools"] = .array(tools.map { $0.object() })
            session["tool_choice"] = "auto"
        }
        return .object(session)
    }
}
