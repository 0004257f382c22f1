import RoomTapJSON

/// Why a chat or speech request failed, and what the pipeline agent does about it: one line for
/// the log (never the key), and the action.
///
/// Thread: a value.
public struct PipelineFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Action: Sendable, Equatable {
        /// Try the same request again after a backoff (5xx, 429 rate limit, a timeout, a lost
        /// connection, a stream that stopped before its end).
        case retry
        /// Give up on this turn (another 4xx, a malformed answer).
        case drop
        /// The server refused the `name` of a message (400 about `messages[i].name`): send the
        /// speaker in the content from now on and retry at once.
        case nameRejected
        /// Retrying cannot help (401 bad key, 403, quota, unknown model): the agent ends.
        case fatal
        /// A barge-in or stop aborted the request: not a failure.
        case cancelled
    }

    public var action: Action
    /// One line: what failed and why, e.g. `chat: HTTP 401 invalid_api_key: Incorrect API key`.
    public var message: String
    /// The HTTP status (0: no answer).
    public var status: Int

    public init(action: Action, message: String, status: Int = 0) {
        self.action = action
        self.message = message
        self.status = status
    }

    public var description: String { message }

    /// The failure of an answer with a non-2xx `status` and `body` (OpenAI's error object
    /// `{"error":{"message","type","param","code"}}` when there is one) from `what` (`chat`,
    /// `speech`).
    public static func http(status: Int, body: [UInt8], what: String) -> PipelineFailure {
        let error = body.withUnsafeBytes { try? JSONValue(parsing: $0) }?["error"]
        let code = error?["code"]?.stringValue
        let param = error?["param"]?.stringValue
        let text = error?["message"]?.stringValue ?? String(decoding: body.prefix(200), as: UTF8.self)
        let detail = oneLine("HTTP \(status)\(code.map { " \($0)" } ?? ""): \(text)")
        let fatalCodes: Set<String> = RealtimeError.fatalCodes.union(["model_not_found"])
        let action: Action
        switch status {
        case 401, 403: action = .fatal
        case _ where code.map(fatalCodes.contains) == true: action = .fatal
        case 404: action = .fatal  // an unknown model or a base URL that is not an OpenAI-compatible API
        case 400 where isNameParameter(param) || (param == nil && text.contains(".name")):
            action = .nameRejected
        case 408, 409, 425, 429, 500...599: action = .retry
        default: action = .drop
        }
        return PipelineFailure(action: action, message: "\(what): \(detail)", status: status)
    }

    /// True for `messages[3].name`.
    static func isNameParameter(_ param: String?) -> Bool {
        guard let param else { return false }
        return param.hasPrefix("messages[") && param.hasSuffix("].name")
    }

    /// `text` on one line, at most 300 characters.
    static func oneLine(_ text: String) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count > 300 ? String(flat.prefix(300)) + "…" : flat
    }
}
