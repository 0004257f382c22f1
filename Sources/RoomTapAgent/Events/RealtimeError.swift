/// The `error` object of a Realtime `error` event: `{"type","code","message","param","event_id"}`.
///
/// Most errors leave the session usable; only the account errors in ``fatalCodes`` end the agent
/// (../shared/realtime-api.md).
///
/// Thread: a value; use anywhere.
public struct RealtimeError: Sendable, Equatable, CustomStringConvertible {
    /// The error class (`invalid_request_error`, `server_error`, …).
    public var type: String
    /// The code (`session_expired`, `invalid_api_key`, …), if given.
    public var code: String?
    /// The human-readable message.
    public var message: String
    /// The parameter at fault, if given.
    public var param: String?
    /// The client `event_id` the error is about, if given.
    public var eventID: String?

    /// Codes after which retrying cannot help: the agent stops.
    public static let fatalCodes: Set<String> = [
        "invalid_api_key", "insufficient_quota", "account_deactivated", "billing_hard_limit_reached",
    ]

    public init(type: String, code: String? = nil, message: String, param: String? = nil, eventID: String? = nil) {
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.eventID = eventID
    }

    /// True when the agent must stop (and not reconnect) after this error.
    public var isFatal: Bool { code.map { Self.fatalCodes.contains($0) } ?? false }

    public var description: String { "\(code ?? type): \(message)" }
}
