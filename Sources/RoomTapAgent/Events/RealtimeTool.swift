import Foundation
public import RoomTapJSON

/// A function tool the model may call (`session.tools`, GA shape
/// `{"type":"function","name","description","parameters"}`; ../shared/realtime-api.md).
///
/// Thread: a value; use anywhere.
public struct RealtimeTool: Sendable, Equatable {
    /// The function's name (1-64 of `a-z A-Z 0-9 _ -`).
    public var name: String
    /// What it does, for the model.
    public var description: String
    /// Its arguments as a JSON Schema object (`{"type":"object","properties":{...}}`).
    public var parameters: JSONValue

    public init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }

    /// True when `name` is a name the service takes for a function.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-")
            }
    }

    /// The `session.tools` entry.
    func object() -> JSONValue {
        ["type": "function", "name": .string(name), "description": .string(description), "parameters": parameters]
    }
}

/// A function call the model made: a `function_call` output item (from
/// `response.output_item.done`, `response.function_call_arguments.done` or `response.done`).
///
/// Thread: a value.
public struct RealtimeFunctionCall: Sendable, Equatable {
    /// The call's id, echoed in the `function_call_output`.
    public var callID: String
    /// The tool's name.
    public var name: String
    /// The arguments, JSON text as the model wrote it (may be malformed).
    public var arguments: String

    public init(callID: String, name: String, arguments: String) {
        self.callID = callID
        self.name = name
        self.arguments = arguments
    }

    /// The arguments as a JSON object; nil when they are not one.
    public var argumentObject: [String: JSONValue]? {
        let text = arguments.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return [:] }
        return (try? JSONValue(parsing: text))?.objectValue
    }
}

/// What running a tool gave: the `output` text for the model (JSON, by convention
/// `{"ok":true,...}` or `{"ok":false,"error":"..."}`), and whether the agent leaves the room
/// after sending it (`leave_room`).
///
/// Thread: a value.
public struct RealtimeToolResult: Sendable, Equatable {
    public var output: String
    public var isError: Bool
    public var endsAgent: Bool

    public init(output: String, isError: Bool = false, endsAgent: Bool = false) {
        self.output = output
        self.isError = isError
        self.endsAgent = endsAgent
    }

    /// `{"ok":false,"error":message}`.
    public static func error(_ message: String) -> RealtimeToolResult {
        RealtimeToolResult(
            output: JSONValue.object(["ok": .bool(false), "error": .string(message)]).jsonText, isError: true)
    }

    /// `{"ok":true, ...fields}`.
    public static func ok(_ fields: [String: JSONValue] = [:], endsAgent: Bool = false) -> RealtimeToolResult {
        var object = fields
        object["ok"] = .bool(true)
        return RealtimeToolResult(output: JSONValue.object(object).jsonText, endsAgent: endsAgent)
    }
}
