import Foundation

/// The stand-in's catalogue of the service's `error` events: the codes and messages the Realtime
/// API answers with (as seen in openai-python's `RealtimeError`, the Realtime guides and client
/// issue threads), shaped `{"type":"error","event_id":…,"error":{"type","code","message","param",
/// "event_id"}}` where `error.event_id` echoes the client event's `event_id`.
///
/// Thread: a value; use anywhere.
public struct FakeRealtimeError: Sendable, Equatable {
    /// The error class (`invalid_request_error`, `server_error`).
    public var type = "invalid_request_error"
    /// The code the client acts on.
    public var code: String
    /// The sentence the service gives.
    public var message: String
    /// The field at fault, if any.
    public var param: String?

    /// The `error` event for the client event `clientEventID` (nil: about no event of the client's).
    func event(eventID: String, clientEventID: String?) -> [String: Any] {
        [
            "type": "error", "event_id": eventID,
            "error": [
                "type": type, "code": code, "message": message, "param": param ?? NSNull(),
                "event_id": clientEventID ?? NSNull(),
            ] as [String: Any],
        ]
    }

    /// `response.cancel` with nothing to cancel (benign; the client should not count it).
    static let cancelNotActive = FakeRealtimeError(
        code: "response_cancel_not_active", message: "Cancellation failed: no active response found.")

    /// `response.create` while another response is in progress.
    static func alreadyActive(_ responseID: String) -> FakeRealtimeError {
        FakeRealtimeError(
            code: "conversation_already_has_active_response",
            message: "Conversation already has an active response in progress: \(responseID). Wait until the "
                + "response is finished before creating a new one.")
    }

    /// A required field is missing.
    static func missing(_ param: String) -> FakeRealtimeError {
        FakeRealtimeError(
            code: "missing_required_parameter", message: "Missing required parameter: '\(param)'.", param: param)
    }

    /// A field has a value the service does not accept.
    static func invalid(_ param: String, _ message: String) -> FakeRealtimeError {
        FakeRealtimeError(code: "invalid_value", message: message, param: param)
    }

    /// A voice change after the model has spoken in the session.
    static let voiceLocked = FakeRealtimeError(
        code: "cannot_update_voice",
        message: "Cannot update a conversation's voice if assistant audio is present.",
        param: "session.audio.output.voice")

    /// A message that is not a JSON object with a known `type`.
    static func unknownEvent(_ type: String) -> FakeRealtimeError {
        FakeRealtimeError(
            code: "invalid_value", message: "Invalid value: '\(type)'. Supported values are: 'session.update', …",
            param: "type")
    }

    /// The beta protocol, shut down (an `OpenAI-Beta` header on the upgrade).
    static let betaShapeDisabled = FakeRealtimeError(
        code: "beta_api_shape_disabled",
        message: "The beta Realtime API shape is no longer supported. Remove the 'OpenAI-Beta' header and use the "
            + "GA event shapes.")

    /// The session reached its maximum duration.
    static let sessionExpired = FakeRealtimeError(
        code: "session_expired", message: "Your session hit the maximum duration of 60 minutes.")
}
