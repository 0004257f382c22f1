import Foundation

/// An event the agent sends to the Realtime API, in the GA shapes (../shared/realtime-api.md;
/// https://platform.openai.com/docs/api-reference/realtime-client-events), encoded as one JSON
/// text message with the client's `event_id` (the service echoes it in `error.event_id`, which is
/// how an error is matched to what caused it). Audio appends have their own encoder,
/// ``appendAudio(_:eventID:)``.
///
/// Thread: a value; encode anywhere.
public enum RealtimeClientEvent: Sendable, Equatable {
    /// `session.update` with the full settings.
    case sessionUpdate(RealtimeSessionSettings)
    /// `session.update` changing only the instructions (only fields sent are changed).
    case updateInstructions(String)
    /// `session.update` of a transcription session (`session.type` "transcription").
    case transcriptionSessionUpdate(RealtimeTranscriptionSettings)
    /// `input_audio_buffer.commit`: the audio since the last turn is a turn (transcribed now).
    case commitAudio
    /// `input_audio_buffer.clear`: the audio since the last turn is dropped (a turn never ends).
    case clearAudio
    /// `conversation.item.create`: a user message with `input_text` content.
    case userMessage(String)
    /// `conversation.item.create`: an assistant message with `output_text` content.
    case assistantMessage(String)
    /// `conversation.item.create`: a system message with `input_text` content (the context
    /// summary replayed into a new session).
    case systemMessage(String)
    /// `response.create` with the session's defaults.
    case responseCreate
    /// `response.cancel`.
    case responseCancel
    /// `conversation.item.truncate`: what of an assistant item was really heard.
    case truncate(itemID: String, contentIndex: Int, audioEndMs: Int)
    /// `conversation.item.delete`: an assistant item nobody heard (a barge-in before it played).
    case deleteItem(itemID: String)
    /// `conversation.item.create`: a `function_call_output` answering the call `callID`.
    case functionCallOutput(callID: String, output: String)

    /// The JSON text of the event (keys sorted, so equal events encode to equal bytes), with
    /// `event_id` when given.
    public func json(eventID: String? = nil) -> String {
        var object: [String: Any]
        switch self {
        case .sessionUpdate(let settings):
            object = ["type": "session.update", "session": settings.sessionObject()]
        case .updateInstructions(let text):
            object = ["type": "session.update", "session": ["type": "realtime", "instructions": text]]
        case .transcriptionSessionUpdate(let settings):
            object = ["type": "session.update", "session": settings.sessionObject()]
        case .commitAudio:
            object = ["type": "input_audio_buffer.commit"]
        case .clearAudio:
            object = ["type": "input_audio_buffer.clear"]
        case .userMessage(let text):
            object = Self.message(role: "user", contentType: "input_text", text: text)
        case .assistantMessage(let text):
            object = Self.message(role: "assistant", contentType: "output_text", text: text)
        case .systemMessage(let text):
            object = Self.message(role: "system", contentType: "input_text", text: text)
        case .responseCreate:
            object = ["type": "response.create"]
        case .responseCancel:
            object = ["type": "response.cancel"]
        case .truncate(let itemID, let contentIndex, let audioEndMs):
            object = [
                "type": "conversation.item.truncate", "item_id": itemID, "content_index": contentIndex,
                "audio_end_ms": audioEndMs,
            ]
        case .deleteItem(let itemID):
            object = ["type": "conversation.item.delete", "item_id": itemID]
        case .functionCallOutput(let callID, let output):
            object = [
                "type": "conversation.item.create",
                "item": ["type": "function_call_output", "call_id": callID, "output": output],
            ]
        }
        if let eventID { object["event_id"] = eventID }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    private static func message(role: String, contentType: String, text: String) -> [String: Any] {
        [
            "type": "conversation.item.create",
            "item": [
                "type": "message", "role": role, "content": [["type": contentType, "text": text]],
            ] as [String: Any],
        ]
    }

    /// `input_audio_buffer.append` of `samples` (24 kHz mono PCM16, sent little-endian, base64).
    /// Allocates the text; the agent's listen thread calls it, never the room clock.
    public static func appendAudio(_ samples: UnsafeBufferPointer<Int16>, eventID: String? = nil) -> String {
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (i, s) in samples.enumerated() {
            let u = UInt16(bitPattern: s)
            bytes[2 * i] = UInt8(truncatingIfNeeded: u)
            bytes[2 * i + 1] = UInt8(truncatingIfNeeded: u >> 8)
        }
        let id = eventID.map { #","event_id":""# + $0 + #"""# } ?? ""
        return #"{"type":"input_audio_buffer.append","audio":""# + Data(bytes).base64EncodedString() + #"""# + id + "}"
    }
}
