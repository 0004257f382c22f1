import Foundation
package import RoomTapJSON

/// A streamed chat completion (`POST {base}/chat/completions` with `"stream": true`): the request
/// body, and the decoding of its answer, a `text/event-stream` of `chat.completion.chunk` objects
/// ended by `data: [DONE]`
/// (https://platform.openai.com/docs/api-reference/chat-streaming):
///
/// ```
/// data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}
/// data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",
///        "function":{"name":"mute_track","arguments":"{\"na"}}]}}]}
/// data: [DONE]
/// ```
///
/// Thread: a value, confined to the thread reading the stream.
package struct ChatCompletionStream {
    /// What one chunk says.
    public enum Piece: Sendable, Equatable {
        /// More reply text.
        case text(String)
        /// A piece of tool call `index`: its id and name come once, its arguments in pieces.
        case toolCall(index: Int, id: String?, name: String?, arguments: String)
        /// `finish_reason` (`stop`, `length`, `tool_calls`, `content_filter`).
        case finish(String)
        /// An `{"error":{...}}` object sent in the stream.
        case error(String)
        /// `[DONE]`: the stream is complete.
        case done
    }

    /// The request body: `model`, `messages`, `stream: true`, and `tools` when there are any.
    public static func requestBody(model: String, messages: [JSONValue], tools: [JSONValue]) -> JSONValue {
        var body: [String: JSONValue] = ["model": .string(model), "stream": true, "messages": .array(messages)]
        if !tools.isEmpty { body["tools"] = .array(tools) }
        return .object(body)
    }

    /// The pieces of one event's `data`; empty for a chunk with nothing in it, nil for data that is
    /// not a chunk (not JSON, no `choices`).
    public static func decode(_ data: String) -> [Piece]? {
        if data == "[DONE]" { return [.done] }
        guard let value = try? JSONValue(parsing: data) else { return nil }
        if let error = value["error"], !error.isNull {
            return [.error(error["message"]?.stringValue ?? error.jsonText)]
        }
        guard let choices = value["choices"]?.arrayValue else { return nil }
        var pieces: [Piece] = []
        for choice in choices where (choice["index"]?.intValue ?? 0) == 0 {
            let delta = choice["delta"]
            if let text = delta?["content"]?.stringValue, !text.isEmpty { pieces.append(.text(text)) }
            for call in delta?["tool_calls"]?.arrayValue ?? [] {
                let function = call["function"]
                pieces.append(
                    .toolCall(
                        index: call["index"]?.intValue ?? 0, id: call["id"]?.stringValue,
                        name: function?["name"]?.stringValue, arguments: function?["arguments"]?.stringValue ?? ""))
            }
            if let reason = choice["finish_reason"]?.stringValue { pieces.append(.finish(reason)) }
        }
        return pieces
    }
}
