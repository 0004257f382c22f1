import Foundation

/// What the stand-in keeps of one connection's Realtime session, and how it judges a
/// `session.update` the way the service does: `session.type` is required, formats and voices must
/// be ones the service has, the voice is locked once the model has spoken, the model cannot change,
/// and a rejected update leaves the session unchanged.
///
/// Thread: a value, kept under the server's lock.
struct FakeRealtimeSession {
    static let voices: Set<String> = [
        "alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar",
    ]
    static let formats: Set<String> = ["audio/pcm", "audio/pcmu", "audio/pcma"]

    /// The model of the connection (the URL's `model=`).
    var model: String
    /// Opened with `?intent=transcription`: a transcription session (``updateTranscription(_:)``).
    var isTranscription = false
    /// A transcription session's model, language, prompt (what `session.update` set).
    var transcriptionModel = "gpt-4o-mini-transcribe"
    var language: String?
    var prompt: String?
    /// A transcription session's input buffer and server VAD (`detects` false: turn detection
    /// off, the client commits).
    var vad = FakeServerVAD()
    var instructions = ""
    var voice = "marin"
    var outputModalities = ["audio"]
    /// Server VAD cancels the active response when speech starts.
    var interruptResponse = true
    /// Server VAD creates a response when speech stops.
    var createResponse = true
    /// The model has spoken: the voice is locked.
    var audioProduced = false
    /// The response in progress, if any.
    var active: FakeRealtimeResponse?
    /// Assistant items by id: audio produced, in ms (what `conversation.item.truncate` may cut).
    var assistantAudioMs: [String: Int] = [:]
    /// Every item id the session knows (user, system and assistant).
    var items: Set<String> = []
    /// The function tools the session has (`session.tools`), by name.
    var tools: [String] = []
    /// The `call_id`s of the function calls the model made, and those answered.
    var calls: Set<String> = []
    var answeredCalls: Set<String> = []
    var nextItem = 0
    /// Server event ids.
    var nextEvent = 0

    init(model: String, transcription: Bool = false) {
        self.model = model
        isTranscription = transcription
    }

    mutating func eventID() -> String {
        nextEvent += 1
        return "event_\(nextEvent)"
    }

    /// The server's answer to an item the client created: `conversation.item.added`, then
    /// `conversation.item.done`, each with `item`.
    mutating func itemAddedAndDone(_ item: [String: Any]) -> [[String: Any]] {
        [
            ["type": "conversation.item.added", "event_id": eventID(), "previous_item_id": NSNull(), "item": item],
            ["type": "conversation.item.done", "event_id": eventID(), "previous_item_id": NSNull(), "item": item],
        ]
    }

    mutating func itemID() -> String {
        nextItem += 1
        return "item_\(nextItem)"
    }

    /// Applies `session` (the `session` field of a `session.update`) if the service would accept
    /// it; the error otherwise, with the session unchanged.
    mutating func update(_ session: Any?) -> FakeRealtimeError? {
        guard let session = session as? [String: Any] else { return .missing("session") }
        guard let type = session["type"] as? String else { return .missing("session.type") }
        if isTranscription {
            guard type == "transcription" else {
                return .invalid(
                    "session.type",
                    "Invalid value: '\(type)'. This connection was opened with intent=transcription: the session "
                        + "is a 'transcription' session.")
            }
            return updateTranscription(session)
        }
        if type == "transcription" {
            return .invalid(
                "session.type",
                "Invalid value: 'transcription'. A conversation session (opened with model=) cannot become a "
                    + "transcription session; connect with ?intent=transcription.")
        }
        guard type == "realtime" else {
            return .invalid(
                "session.type", "Invalid value: '\(type)'. Supported values are: 'realtime' and 'transcription'.")
        }
        // A GA session takes these fields; the beta ones (`voice` at the top, `modalities`,
        // `input_audio_format`, `turn_detection`...) are unknown parameters to it.
        for key in session.keys.sorted() where !Self.sessionFields.contains(key) {
            return FakeRealtimeError(
                code: "unknown_parameter", message: "Unknown parameter: 'session.\(key)'.", param: "session.\(key)")
        }
        var next = self
        if let tools = session["tools"] {
            guard let list = tools as? [[String: Any]] else {
                return .invalid("session.tools", "Invalid type for 'session.tools': expected an array of objects.")
            }
            var names: [String] = []
            for (k, tool) in list.enumerated() {
                guard tool["type"] as? String == "function" else {
                    return .invalid(
                        "session.tools[\(k)].type", "Invalid value: supported values are: 'function' and 'mcp'.")
                }
                guard let name = tool["name"] as? String, Self.isToolName(name) else {
                    return .invalid(
                        "session.tools[\(k)].name",
                        "Invalid 'session.tools[\(k)].name': must match '^[a-zA-Z0-9_-]{1,64}$'.")
                }
                guard !names.contains(name) else {
                    return .invalid("session.tools", "Duplicate tool name: '\(name)'.")
                }
                if let description = tool["description"], !(description is String) {
                    return .invalid("session.tools[\(k)].description", "Expected a string.")
                }
                if let parameters = tool["parameters"] {
                    guard let schema = parameters as? [String: Any], schema["type"] as? String == "object" else {
                        return .invalid(
                            "session.tools[\(k)].parameters",
                            "Invalid schema for function '\(name)': schema must be a JSON Schema of 'type: \"object\"'."
                        )
                    }
                    if let properties = schema["properties"], !(properties is [String: Any]) {
                        return .invalid("session.tools[\(k)].parameters.properties", "Expected an object.")
                    }
                }
                names.append(name)
            }
            next.tools = names
        }
        if let choice = session["tool_choice"] {
            let valid: Bool
            if let c = choice as? String {
                valid = ["auto", "none", "required"].contains(c)
            } else if let c = choice as? [String: Any], c["type"] as? String == "function", let n = c["name"] as? String
            {
                valid = next.tools.contains(n)
            } else {
                valid = false
            }
            guard valid else {
                return .invalid(
                    "session.tool_choice", "Invalid value: expected 'auto', 'none', 'required' or a function.")
            }
        }
        if let model = session["model"] {
            guard let model = model as? String, model == self.model else {
                return .invalid("session.model", "The session's model cannot be changed (it is '\(self.model)').")
            }
        }
        if let instructions = session["instructions"] {
            guard let text = instructions as? String else {
                return .invalid("session.instructions", "Expected a string.")
            }
            next.instructions = text
        }
        if let modalities = session["output_modalities"] {
            guard let list = modalities as? [String], list == ["audio"] || list == ["text"] else {
                return .invalid("session.output_modalities", "Supported combinations are: ['text'] and ['audio'].")
            }
            next.outputModalities = list
        }
        let audio = session["audio"] as? [String: Any] ?? [:]
        let input = audio["input"] as? [String: Any] ?? [:]
        let output = audio["output"] as? [String: Any] ?? [:]
        for (param, format) in [
            ("session.audio.input.format", input["format"]), ("session.audio.output.format", output["format"]),
        ] {
            guard let format else { continue }
            guard let f = format as? [String: Any], let t = f["type"] as? String, Self.formats.contains(t) else {
                return .invalid(
                    param, "Invalid format: supported types are 'audio/pcm', 'audio/pcmu' and 'audio/pcma'.")
            }
            if t == "audio/pcm", let rate = f["rate"], (rate as? Int) != 24_000 {
                return .invalid(param + ".rate", "Invalid rate: 'audio/pcm' is 24000 Hz only.")
            }
        }
        if let voice = output["voice"] {
            // A custom voice is an object with the voice's id.
            let custom = (voice as? [String: Any]).flatMap { o in
                o.count == 1 ? (o["id"] as? String).flatMap { $0.hasPrefix("voice_") ? $0 : nil } : nil
            }
            guard let v = custom ?? (voice as? String), custom != nil || Self.voices.contains(v) else {
                return .invalid(
                    "session.audio.output.voice",
                    "Invalid value: '\(voice)'. Supported values are: "
                        + Self.voices.sorted().joined(separator: ", ") + ".")
            }
            if v != self.voice && audioProduced { return .voiceLocked }
            next.voice = v
        }
        if let turn = input["turn_detection"] {
            if turn is NSNull {
                next.interruptResponse = false
                next.createResponse = false
            } else {
                guard let t = turn as? [String: Any], let kind = t["type"] as? String,
                    kind == "server_vad" || kind == "semantic_vad"
                else {
                    return .invalid(
                        "session.audio.input.turn_detection.type",
                        "Supported values are: 'server_vad' and 'semantic_vad'.")
                }
                // Each kind takes its own fields: semantic VAD has no level or silence to set.
                let fields: Set<String> =
                    kind == "server_vad"
                    ? [
                        "type", "threshold", "prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms",
                        "create_response", "interrupt_response",
                    ] : ["type", "eagerness", "create_response", "interrupt_response"]
                for key in t.keys.sorted() where !fields.contains(key) {
                    return FakeRealtimeError(
                        code: "unknown_parameter",
                        message: "Unknown parameter: 'session.audio.input.turn_detection.\(key)' (\(kind)).",
                        param: "session.audio.input.turn_detection.\(key)")
                }
                if let eagerness = t["eagerness"] {
                    guard let e = eagerness as? String, ["low", "medium", "high", "auto"].contains(e) else {
                        return .invalid(
                            "session.audio.input.turn_detection.eagerness",
                            "Invalid value: '\(eagerness)'. Supported values are: 'low', 'medium', 'high' and 'auto'.")
                    }
                }
                if let idle = t["idle_timeout_ms"] {
                    guard let ms = idle as? Int, ms > 0 else {
                        return .invalid(
                            "session.audio.input.turn_detection.idle_timeout_ms",
                            "Invalid 'idle_timeout_ms': expected a positive integer.")
                    }
                }
                next.interruptResponse = t["interrupt_response"] as? Bool ?? true
                next.createResponse = t["create_response"] as? Bool ?? true
            }
        }
        self = next
        return nil
    }

    /// Applies a transcription session's `session` (GA: `type`, `audio.input` and `include`; no
    /// instructions, voice, output or tools), or the error the service gives, unchanged.
    mutating func updateTranscription(_ session: [String: Any]) -> FakeRealtimeError? {
        func unknown(_ param: String) -> FakeRealtimeError {
            FakeRealtimeError(code: "unknown_parameter", message: "Unknown parameter: '\(param)'.", param: param)
        }
        for key in session.keys.sorted() where !Self.transcriptionSessionFields.contains(key) {
            return unknown("session.\(key)")
        }
        var next = self
        if let include = session["include"] {
            guard let list = include as? [String],
                list.allSatisfy({ $0 == "item.input_audio_transcription.logprobs" })
            else {
                return .invalid(
                    "session.include", "Invalid value: supported values are: 'item.input_audio_transcription.logprobs'."
                )
            }
        }
        let audio = session["audio"] as? [String: Any] ?? [:]
        for key in audio.keys.sorted() where key != "input" { return unknown("session.audio.\(key)") }
        let input = audio["input"] as? [String: Any] ?? [:]
        for key in input.keys.sorted()
        where !["format", "noise_reduction", "transcription", "turn_detection"].contains(key) {
            return unknown("session.audio.input.\(key)")
        }
        if let format = input["format"] {
            guard let f = format as? [String: Any], let t = f["type"] as? String, Self.formats.contains(t) else {
                return .invalid(
                    "session.audio.input.format",
                    "Invalid format: supported types are 'audio/pcm', 'audio/pcmu' and 'audio/pcma'.")
            }
            if t == "audio/pcm", let rate = f["rate"], (rate as? Int) != 24_000 {
                return .invalid("session.audio.input.format.rate", "Invalid rate: 'audio/pcm' is 24000 Hz only.")
            }
        }
        if let noise = input["noise_reduction"], !(noise is NSNull) {
            guard let n = noise as? [String: Any], let t = n["type"] as? String,
                ["near_field", "far_field"].contains(t)
            else {
                return .invalid(
                    "session.audio.input.noise_reduction.type", "Supported values are: 'near_field' and 'far_field'.")
            }
        }
        if let transcription = input["transcription"] {
            guard let t = transcription as? [String: Any] else {
                return .invalid("session.audio.input.transcription", "Expected an object.")
            }
            for key in t.keys.sorted() where !["model", "language", "prompt"].contains(key) {
                return unknown("session.audio.input.transcription.\(key)")
            }
            if let model = t["model"] {
                guard let m = model as? String, Self.transcriptionModels.contains(m) else {
                    return .invalid(
                        "session.audio.input.transcription.model",
                        "Invalid value: '\(model)'. Supported values are: "
                            + Self.transcriptionModels.sorted().joined(separator: ", ") + ".")
                }
                next.transcriptionModel = m
            }
            if let language = t["language"] {
                guard let l = language as? String, l.count == 2, l.allSatisfy({ ("a"..."z").contains($0) }) else {
                    return .invalid(
                        "session.audio.input.transcription.language",
                        "Invalid language '\(language)': give it in ISO-639-1 format (e.g. 'en').")
                }
                next.language = l
            }
            if let prompt = t["prompt"] {
                guard let p = prompt as? String else {
                    return .invalid("session.audio.input.transcription.prompt", "Expected a string.")
                }
                next.prompt = p
            }
        }
        if let turn = input["turn_detection"] {
            if turn is NSNull {
                next.vad.detects = false
            } else {
                guard let t = turn as? [String: Any], let kind = t["type"] as? String,
                    kind == "server_vad" || kind == "semantic_vad"
                else {
                    return .invalid(
                        "session.audio.input.turn_detection.type",
                        "Supported values are: 'server_vad' and 'semantic_vad'.")
                }
                if let threshold = t["threshold"] {
                    guard let x = threshold as? Double, (0...1).contains(x) else {
                        return .invalid(
                            "session.audio.input.turn_detection.threshold", "Expected a number between 0 and 1.")
                    }
                }
                next.vad.detects = true
                if let ms = t["prefix_padding_ms"] as? Int { next.vad.prefixPaddingMs = ms }
                if let ms = t["silence_duration_ms"] as? Int { next.vad.silenceDurationMs = ms }
            }
        }
        // The live transcription models take no turn detection: the client commits each turn.
        if Self.commitOnlyModels.contains(next.transcriptionModel) && next.vad.detects {
            // Omitted, it is off for these models; asked for, it is an error.
            guard input["turn_detection"] != nil else {
                next.vad.detects = false
                self = next
                return nil
            }
            return .invalid(
                "session.audio.input.turn_detection",
                "Turn detection is not supported with '\(next.transcriptionModel)': set it to null and commit each "
                    + "turn with input_audio_buffer.commit.")
        }
        self = next
        return nil
    }

    /// Transcription models that take no turn detection (the client commits each turn).
    static let commitOnlyModels: Set<String> = ["gpt-live-transcribe", "gpt-realtime-whisper"]

    /// The fields of a GA transcription `session` object.
    static let transcriptionSessionFields: Set<String> = ["type", "audio", "include", "object", "id", "expires_at"]

    /// Transcription models the service takes.
    static let transcriptionModels: Set<String> = [
        "whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "gpt-4o-transcribe-latest",
        "gpt-4o-mini-transcribe-2025-12-15", "gpt-transcribe", "gpt-live-transcribe", "gpt-realtime-whisper",
    ]

    /// The fields of a GA `session` object.
    static let sessionFields: Set<String> = [
        "type", "model", "instructions", "output_modalities", "audio", "tools", "tool_choice", "temperature",
        "max_output_tokens", "tracing", "truncation", "prompt", "include", "object", "id", "expires_at",
    ]

    static func isToolName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-"
            }
    }

    /// The effective session, as `session.created` and `session.updated` carry it.
    func object(expiresAt: Int?) -> [String: Any] {
        if isTranscription {
            var transcription: [String: Any] = ["model": transcriptionModel]
            if let language { transcription["language"] = language }
            if let prompt { transcription["prompt"] = prompt }
            var o: [String: Any] = [
                "type": "transcription", "object": "realtime.transcription_session",
                "audio": [
                    "input": [
                        "format": ["type": "audio/pcm", "rate": 24_000], "transcription": transcription,
                        "turn_detection": vad.detects
                            ? [
                                "type": "server_vad", "threshold": 0.5, "prefix_padding_ms": vad.prefixPaddingMs,
                                "silence_duration_ms": vad.silenceDurationMs,
                            ] as [String: Any] : NSNull() as Any,
                    ] as [String: Any]
                ] as [String: Any],
            ]
            if let expiresAt { o["expires_at"] = expiresAt }
            return o
        }
        var o: [String: Any] = [
            "type": "realtime", "object": "realtime.session", "model": model, "instructions": instructions,
            "output_modalities": outputModalities,
            "audio": [
                "input": [
                    "format": ["type": "audio/pcm", "rate": 24_000],
                    "turn_detection": [
                        "type": "server_vad", "interrupt_response": interruptResponse,
                        "create_response": createResponse,
                    ] as [String: Any],
                ] as [String: Any],
                "output": ["format": ["type": "audio/pcm", "rate": 24_000], "voice": voice] as [String: Any],
            ] as [String: Any],
        ]
        if let expiresAt { o["expires_at"] = expiresAt }
        return o
    }
}
