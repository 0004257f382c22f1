/// One request line, parsed: `{"id": <number|string>, "cmd": "<command>", ...parameters}`.
///
/// Thread: a value.
public struct ControlRequest: Sendable, Equatable {
    /// Echoed in the reply: a number, a string, or `null` when the request had none.
    public var id: JSONValue
    /// The `cmd` member ("ping", "mute", ...).
    public var command: String
    /// Every member except `id` and `cmd`.
    public var parameters: [String: JSONValue]

    public init(id: JSONValue = .null, command: String, parameters: [String: JSONValue] = [:]) {
        self.id = id
        self.command = command
        self.parameters = parameters
    }

    // MARK: Envelope

    /// Parses one request line (without its newline). On failure, returns the reply to send: the
    /// request's `id` when it could be read (else `null`), and the code (`bad_json` or
    /// `bad_request`) with one line saying what was wrong.
    ///
    /// Thread: any; pure.
    public static func parse(_ line: UnsafeRawBufferPointer) -> Result<ControlRequest, ControlEnvelopeError> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line)
        } catch {
            return .failure(
                ControlEnvelopeError(id: .null, failure: ControlFailure(.badJSON, "not valid JSON: \(error)")))
        }
        guard case .object(var members) = value else {
            let example = #"a request is one JSON object per line, like {"id":1,"cmd":"ping"}"#
            return .failure(ControlEnvelopeError(id: .null, failure: ControlFailure(.badRequest, example)))
        }
        let id = members.removeValue(forKey: "id") ?? .null
        switch id {
        case .null, .number, .string: break
        default:
            let failure = ControlFailure(.badRequest, "\"id\" must be a number or a string")
            return .failure(ControlEnvelopeError(id: .null, failure: failure))
        }
        guard let command = members.removeValue(forKey: "cmd") else {
            let failure = ControlFailure(.badRequest, #"missing "cmd" (the command name, like "ping")"#)
            return .failure(ControlEnvelopeError(id: id, failure: failure))
        }
        guard case .string(let name) = command else {
            return .failure(
                ControlEnvelopeError(id: id, failure: ControlFailure(.badRequest, "\"cmd\" must be a string")))
        }
        return .success(ControlRequest(id: id, command: name, parameters: members))
    }

    /// The request as one line of JSON (no newline), as a client sends it.
    public var jsonText: String {
        var members = parameters
        members["cmd"] = .string(command)
        if id != .null { members["id"] = id }
        return JSONValue.object(members).jsonText
    }

    // MARK: Typed parameters

    /// The string parameter `key`; a missing or non-string value is `bad_request`.
    public func string(_ key: String) throws(ControlFailure) -> String {
        guard let value = try optionalString(key) else { throw missing(key, "a string") }
        return value
    }

    /// The string parameter `key`, nil when absent or `null`; another type is `bad_request`.
    public func optionalString(_ key: String) throws(ControlFailure) -> String? {
        switch parameters[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw wrongType(key, "a string")
        }
    }

    /// The number parameter `key`; a missing or non-number value is `bad_request`.
    public func number(_ key: String) throws(ControlFailure) -> Double {
        guard let value = try optionalNumber(key) else { throw missing(key, "a number") }
        return value
    }

    /// The number parameter `key`, nil when absent or `null`; another type is `bad_request`.
    public func optionalNumber(_ key: String) throws(ControlFailure) -> Double? {
        switch parameters[key] {
        case nil, .null?: return nil
        case .number(let value)?: return value
        default: throw wrongType(key, "a number")
        }
    }

    /// The boolean parameter `key`, nil when absent or `null`; another type is `bad_request`.
    public func optionalBool(_ key: String) throws(ControlFailure) -> Bool? {
        switch parameters[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw wrongType(key, "true or false")
        }
    }

    /// The parameter `key` as an array of strings; missing, or anything else, is `bad_request`.
    public func strings(_ key: String) throws(ControlFailure) -> [String] {
        guard let value = parameters[key], value != .null else { throw missing(key, "an array of strings") }
        guard case .array(let elements) = value else { throw wrongType(key, "an array of strings") }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw wrongType(key, "an array of strings") }
            result.append(text)
        }
        return result
    }

    /// The string parameter `key` restricted to `allowed` (nil when absent): another value is
    /// `bad_request` listing the allowed ones.
    public func choice(_ key: String, _ allowed: [String]) throws(ControlFailure) -> String? {
        guard let value = try optionalString(key) else { return nil }
        guard allowed.contains(value) else {
            let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
            throw ControlFailure(.badRequest, "\"\(key)\" must be one of \(list)")
        }
        return value
    }

    /// The volume parameter `key` (a number 0...10 or a string like "0.5", "-6dB"); see
    /// ``VolumeLevel/parse(_:)-(JSONValue)``.
    public func volume(_ key: String = "volume") throws(ControlFailure) -> Float {
        guard let value = parameters[key], value != .null else { throw missing(key, "a volume") }
        return try VolumeLevel.parse(value, parameter: key)
    }

    private func missing(_ key: String, _ kind: String) -> ControlFailure {
        ControlFailure(.badRequest, "\"\(command)\" needs \"\(key)\" (\(kind))")
    }

    private func wrongType(_ key: String, _ kind: String) -> ControlFailure {
        ControlFailure(.badRequest, "\"\(key)\" must be \(kind)")
    }
}

/// A line that is not a request: the `id` to echo (`null` when it could not be read) and why.
public struct ControlEnvelopeError: Error, Sendable, Equatable {
    public let id: JSONValue
    public let failure: ControlFailure

    public init(id: JSONValue, failure: ControlFailure) {
        self.id = id
        self.failure = failure
    }
}
