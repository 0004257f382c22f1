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

    init(model: String) { self.model = model }

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
            guard let v = voice as? String, Self.voices.contains(v) else {
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
                next.interruptResponse = t["interrupt_response"] as? Bool ?? true
                next.createResponse = t["create_response"] as? Bool ?? true
            }
        }
        self = next
        return nil
    }

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
