import Foundation
import RoomTapJSON

/// An event from the Realtime API (GA names; ../shared/realtime-api.md and
/// https://platform.openai.com/docs/api-reference/realtime-server-events), decoded from one JSON
/// text message. Types the agent does not act on decode as ``other(type:)``.
///
/// Thread: a value; decode anywhere (the agent decodes on its session thread).
package enum RealtimeServerEvent: Sendable, Equatable {
    /// `session.created`, with the session's `expires_at` (Unix seconds) when given.
    case sessionCreated(expiresAt: Int?)
    /// `session.updated`.
    case sessionUpdated
    /// `error`.
    case error(RealtimeError)
    /// `input_audio_buffer.speech_started`: `audioStartMs` into all audio appended this session.
    case speechStarted(itemID: String, audioStartMs: Int)
    /// `input_audio_buffer.speech_stopped`: `audioEndMs` into all audio appended this session.
    case speechStopped(itemID: String, audioEndMs: Int)
    /// `input_audio_buffer.committed`: the audio since the last commit is the item `itemID`.
    case committed(itemID: String)
    /// `response.created`.
    case responseCreated(responseID: String)
    /// `response.done`, with the response's status (completed, cancelled, failed, incomplete) and
    /// its `status_details` as JSON text, if any.
    case responseDone(
        responseID: String, status: String, statusDetails: String?, functionCalls: [RealtimeFunctionCall] = [])
    /// A `function_call` output item complete with its arguments (`response.output_item.done`, or
    /// `response.function_call_arguments.done` when it names the function).
    case functionCall(responseID: String, call: RealtimeFunctionCall)
    /// `response.output_audio.delta`: 24 kHz mono PCM decoded from base64 little-endian bytes.
    case outputAudioDelta(responseID: String, itemID: String, contentIndex: Int, pcm: [Int16])
    /// `response.output_audio.done`.
    case outputAudioDone(responseID: String, itemID: String)
    /// `response.output_audio_transcript.delta`.
    case outputAudioTranscriptDelta(itemID: String, delta: String)
    /// `response.output_audio_transcript.done`.
    case outputAudioTranscriptDone(itemID: String, transcript: String)
    /// `conversation.item.input_audio_transcription.completed`: what a human said.
    case inputTranscriptionCompleted(itemID: String, transcript: String)
    /// `conversation.item.input_audio_transcription.failed`, with the error's message.
    case inputTranscriptionFailed(itemID: String, message: String)
    /// `response.output_text.done`: a reply in text, not speech.
    case outputTextDone(itemID: String, text: String)
    /// Any other event, by its `type`.
    case other(type: String)

    /// The largest message decoded (a 15 MiB append's worth); larger input is rejected.
    public static let maxMessageBytes = 16 << 20

    /// Decodes one message; nil when it is not a JSON object with a string `type` (or is too large).
    /// Missing or mistyped fields decode as empty strings and zeros, never a crash.
    public static func decode(_ text: String) -> RealtimeServerEvent? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes one message from its UTF-8 bytes; see ``decode(_:)-swift.type.method``.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> RealtimeServerEvent? {
        guard bytes.count >= 2, bytes.count <= maxMessageBytes, bytes.first == UInt8(ascii: "{") else { return nil }
        guard let value = try? JSONValue(parsing: bytes), case .object(let object) = value,
            let type = object["type"]?.stringValue
        else { return nil }
        let f = Fields(object)
        switch type {
        case "session.created":
            let expires = f.fields("session").int("expires_at")
            return .sessionCreated(expiresAt: expires > 0 ? expires : nil)
        case "session.updated": return .sessionUpdated
        case "error":
            let e = f.fields("error")
            return .error(
                RealtimeError(
                    type: e.string("type"), code: e.optionalString("code"), message: e.string("message"),
                    param: e.optionalString("param"), eventID: e.optionalString("event_id")))
        case "input_audio_buffer.speech_started":
            return .speechStarted(itemID: f.string("item_id"), audioStartMs: f.int("audio_start_ms"))
        case "input_audio_buffer.speech_stopped":
            return .speechStopped(itemID: f.string("item_id"), audioEndMs: f.int("audio_end_ms"))
        case "input_audio_buffer.committed":
            return .committed(itemID: f.string("item_id"))
        case "response.created":
            return .responseCreated(responseID: f.fields("response").string("id"))
        case "response.done":
            let r = f.fields("response")
            // Compact JSON text, keys sorted.
            let details = r.object["status_details"].flatMap { $0.isNull ? nil : $0.jsonText }
            let calls = (r.object["output"]?.arrayValue ?? []).compactMap { Self.functionCall(in: $0) }
            return .responseDone(
                responseID: r.string("id"), status: r.string("status"), statusDetails: details, functionCalls: calls)
        case "response.output_item.done":
            guard let item = f.object["item"], let call = Self.functionCall(in: item) else { return .other(type: type) }
            return .functionCall(responseID: f.string("response_id"), call: call)
        case "response.function_call_arguments.done":
            guard !f.string("name").isEmpty, !f.string("call_id").isEmpty else { return .other(type: type) }
            return .functionCall(
                responseID: f.string("response_id"),
                call: RealtimeFunctionCall(
                    callID: f.string("call_id"), name: f.string("name"), arguments: f.string("arguments")))
        case "response.output_audio.delta":
            return .outputAudioDelta(
                responseID: f.string("response_id"), itemID: f.string("item_id"),
                contentIndex: f.int("content_index"), pcm: pcm(base64: f.string("delta")))
        case "response.output_audio.done":
            return .outputAudioDone(responseID: f.string("response_id"), itemID: f.string("item_id"))
        case "response.output_audio_transcript.delta":
            return .outputAudioTranscriptDelta(itemID: f.string("item_id"), delta: f.string("delta"))
        case "response.output_audio_transcript.done":
            return .outputAudioTranscriptDone(itemID: f.string("item_id"), transcript: f.string("transcript"))
        case "conversation.item.input_audio_transcription.completed":
            return .inputTranscriptionCompleted(itemID: f.string("item_id"), transcript: f.string("transcript"))
        case "conversation.item.input_audio_transcription.failed":
            let e = f.fields("error")
            return .inputTranscriptionFailed(itemID: f.string("item_id"), message: e.string("message"))
        case "response.output_text.done":
            return .outputTextDone(itemID: f.string("item_id"), text: f.string("text"))
        default:
            return .other(type: type)
        }
    }

    /// The call of a `function_call` item (nil for another item, or one without its id or name).
    static func functionCall(in item: JSONValue) -> RealtimeFunctionCall? {
        guard let object = item.objectValue, object["type"]?.stringValue == "function_call" else { return nil }
        let f = Fields(object)
        guard !f.string("call_id").isEmpty, !f.string("name").isEmpty else { return nil }
        return RealtimeFunctionCall(
            callID: f.string("call_id"), name: f.string("name"), arguments: f.string("arguments"))
    }

    /// Little-endian PCM16 from base64 (an odd trailing byte is dropped; invalid base64 gives none).
    static func pcm(base64: String) -> [Int16] {
        guard let data = Data(base64Encoded: base64) else { return [] }
        let count = data.count / 2
        var out = [Int16](repeating: 0, count: count)
        data.withUnsafeBytes { raw in
            for i in 0..<count {
                out[i] = Int16(bitPattern: UInt16(raw[2 * i]) | UInt16(raw[2 * i + 1]) << 8)
            }
        }
        return out
    }

    /// Typed, forgiving access to a JSON object's fields: a missing or mistyped field reads as
    /// empty, zero or an empty object.
    private struct Fields {
        let object: [String: JSONValue]
        init(_ object: [String: JSONValue]) { self.object = object }
        func optionalString(_ key: String) -> String? { object[key]?.stringValue }
        func string(_ key: String) -> String { optionalString(key) ?? "" }
        func int(_ key: String) -> Int {
            guard let d = object[key]?.doubleValue, d >= -1e15, d <= 1e15 else { return 0 }
            return Int(d)
        }
        func fields(_ key: String) -> Fields { Fields(object[key]?.objectValue ?? [:]) }
    }
}
