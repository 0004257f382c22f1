import Foundation
import RoomTapJSON

/// An event the agent sends to the Realtime API, in the GA shapes (../shared/realtime-api.md;
/// https://platform.openai.com/docs/api-reference/realtime-client-events), encoded as one JSON
/// text message with the client's `event_id` (the service echoes it in `error.event_id`, which is
/// how an error is matched to what caused it). Audio appends have their own encoder,
/// ``appendAudio(_:eventID:)``.
///
/// Thread: a value; encode anywhere.
package enum RealtimeClientEvent: Sendable, Equatable {
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

    /// The JSON text of the event (compact, keys sorted, by the one writer: equal events encode to
    /// equal bytes), with `event_id` when given. Any thread; pure.
    public func json(eventID: String? = nil) -> String {
        var object: [String: JSONValue]
        switch self {
        case .sessionUpdate(let settings):
            object = ["type": "session.update", "session": settings.sessionObject()]
        case .updateInstructions(let text):
            object = ["type": "session.update", "session": ["type": "realtime", "instructions": .string(text)]]
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
                "type": "conversation.item.truncate", "item_id": .string(itemID),
                "content_index": .number(Double(contentIndex)), "audio_end_ms": .number(Double(audioEndMs)),
            ]
        case .deleteItem(let itemID):
            object = ["type": "conversation.item.delete", "item_id": .string(itemID)]
        case .functionCallOutput(let callID, let output):
            object = [
                "type": "conversation.item.create",
                "item": ["type": "function_call_output", "call_id": .string(callID), "output": .string(output)],
            ]
        }
        if let eventID { object["event_id"] = .string(eventID) }
        return JSONValue.object(object).jsonText
    }

    private static func message(role: String, contentType: String, text: String) -> [String: JSONValue] {
        [
            "type": "conversation.item.create",
            "item": [
                "type": "message", "role": .string(role),
                "content": [["type": .string(contentType), "text": .string(text)]],
            ],
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
        // Written by hand in this one order (the text is most of a session's traffic); the event
        // id through the writer, so any id is a valid string.
        var text = Array(#"{"type":"input_audio_buffer.append","audio":""#.utf8)
        text.append(contentsOf: Data(bytes).base64EncodedString().utf8)
        text.append(UInt8(ascii: "\""))
        if let eventID {
            text.append(contentsOf: #","event_id":"#.utf8)
            JSONValue.writeString(eventID, to: &text)
        }
        text.append(UInt8(ascii: "}"))
        return String(decoding: text, as: UTF8.self)
    }
}
