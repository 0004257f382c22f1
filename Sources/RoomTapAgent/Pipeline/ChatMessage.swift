public import RoomTapJSON

/// One message of a chat-completions conversation (`messages[]` of `POST /chat/completions`):
/// a system prompt, a speaker's turn (`user` with the speaker's `name`), a reply (`assistant`,
/// maybe with `tool_calls`), or a tool's result (`tool`).
///
/// Thread: a value.
public struct ChatMessage: Sendable, Equatable {
    public enum Role: String, Sendable {
        case system, user, assistant, tool
    }

    public var role: Role
    /// The speaker of a `user` turn, already sanitized (``ChatMessage/sanitizedName(_:)``).
    public var name: String?
    public var content: String
    /// An assistant's function calls (`tool_calls`).
    public var toolCalls: [RealtimeFunctionCall] = []
    /// A `tool` message's call id.
    public var toolCallID: String?

    public init(role: Role, name: String? = nil, content: String) {
        self.role = role
        self.name = name
        self.content = content
    }

    /// The names the API takes: `^[a-zA-Z0-9_-]{1,64}$`. Other characters become `_` (a track
    /// `alice+bob` is `alice_bob`, `Zoë` is `Zo_`); empty is `speaker`.
    public static func sanitizedName(_ name: String) -> String {
        let kept = name.unicodeScalars.prefix(64).map { s -> Character in
            let v = s.value
            let allowed = (0x30...0x39).contains(v) || (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v)
            return allowed || v == 0x5F || v == 0x2D ? Character(s) : "_"
        }
        return kept.isEmpty ? "speaker" : String(kept)
    }

    /// The JSON object of this message. `names`: whether the `name` field is sent; without it a
    /// named turn carries its speaker in the content (`alice: ...`), for servers that refuse `name`.
    public func json(names: Bool) -> JSONValue {
        var object: [String: JSONValue] = ["role": .string(role.rawValue)]
        if let name, role == .user {
            if names {
                object["name"] = .string(name)
                object["content"] = .string(content)
            } else {
                object["content"] = .string("\(name): \(content)")
            }
        } else {
            object["content"] = toolCalls.isEmpty || !content.isEmpty ? .string(content) : .null
        }
        if !toolCalls.isEmpty {
            object["tool_calls"] = .array(
                toolCalls.map { call in
                    .object([
                        "id": .string(call.callID), "type": "function",
                        "function": .object(["name": .string(call.name), "arguments": .string(call.arguments)]),
                    ])
                })
        }
        if let toolCallID { object["tool_call_id"] = .string(toolCallID) }
        return .object(object)
    }
}

extension RealtimeTool {
    /// The chat-completions `tools[]` entry: `{"type":"function","function":{name, description,
    /// parameters}}` (the Realtime session's tools, nested one level deeper).
    public var chatCompletionsJSON: JSONValue {
        .object([
            "type": "function",
            "function": .object([
                "name": .string(name), "description": .string(description), "parameters": parameters,
            ]),
        ])
    }
}
