import Foundation
import RoomTapAgent
import RoomTapFuzzing
import Testing

/// The pipeline agent's parsers of outside input: the event-stream framing (WHATWG), chat chunks,
/// and the text and history helpers around them, with hostile input.
@Suite("Pipeline: SSE framing, chat chunks, sentences, history")
struct PipelineParsingTests {
    private func events(_ chunks: [String], limit: Int = 1 << 20) throws -> [ServerSentEventParser.Event] {
        var parser = ServerSentEventParser(maxEventBytes: limit)
        var out: [ServerSentEventParser.Event] = []
        for chunk in chunks { try parser.feed(Array(chunk.utf8)) { out.append($0) } }
        return out
    }

    @Test func framingFollowsTheStandard() throws {
        let stream =
            "\u{FEFF}: keep-alive\r\ndata: one\r\n\r\nevent: ping\ndata:two\ndata:  three\n\nid: 7\rdata\r\rdata: x\nretry: 10\n"
        let whole = try events([stream])
        #expect(
            whole == [
                .init(data: "one"), .init(type: "ping", data: "two\n three"), .init(data: "", id: "7"),
            ], "\(whole)")
        // The same bytes one at a time (a CRLF split between chunks) give the same events.
        let bytes = stream.utf8.map { String(decoding: [$0], as: UTF8.self) }
        var parser = ServerSentEventParser()
        var split: [ServerSentEventParser.Event] = []
        for b in Array(stream.utf8) { try parser.feed([b]) { split.append($0) } }
        #expect(split == whole && bytes.count > 10)
        // An event without its blank line is not dispatched (the stream ended mid-event).
        #expect(try events(["data: cut"]).isEmpty)
    }

    @Test func hostileInputIsBoundedAndNeverCrashes() throws {
        #expect(throws: ServerSentEventParser.Overflow.self) {
            _ = try events([String(repeating: "x", count: 5_000)], limit: 1_024)
        }
        #expect(throws: ServerSentEventParser.Overflow.self) {
            _ = try events([String(repeating: "data: 0123456789\n", count: 200)], limit: 1_024)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let bytes = (0..<Int.random(in: 0..<400, using: &generator)).map { _ in UInt8.random(in: 0...255) }
            bytes.withUnsafeBytes { ChatStreamFuzz.exercise($0) }
        }
        for text in ["data: {\"choices\": 3}\n\n", "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{}]}}]}\n\n"] {
            Array(text.utf8).withUnsafeBytes { ChatStreamFuzz.exercise($0) }
        }
    }

    @Test func chatChunksDecode() {
        #expect(ChatCompletionStream.decode("[DONE]") == [.done])
        #expect(
            ChatCompletionStream.decode(#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#)
                == [.text("Hi")])
        #expect(
            ChatCompletionStream.decode(
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"mute_track","arguments":"{\"na"}}]}}]}"#
            ) == [.toolCall(index: 0, id: "c1", name: "mute_track", arguments: "{\"na")])
        #expect(
            ChatCompletionStream.decode(#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#) == [
                .finish("stop")
            ])
        #expect(ChatCompletionStream.decode(#"{"error":{"message":"overloaded"}}"#) == [.error("overloaded")])
        #expect(ChatCompletionStream.decode("not json") == nil)
        #expect(ChatCompletionStream.decode(#"{"object":"x"}"#) == nil)
    }

    @Test func sentencesAreCutAsTheTextStreams() {
        var splitter = SentenceSplitter()
        var out: [String] = []
        for piece in ["Hello Alice", " and Bob. ", "Hi. I can ", "hear you both! Wh", "at next?"] {
            out += splitter.append(piece)
        }
        #expect(out == ["Hello Alice and Bob.", "Hi. I can hear you both!"])
        #expect(splitter.finish() == "What next?")
        #expect(splitter.finish() == nil)
    }

    @Test func namesAreSanitizedToWhatTheAPITakes() {
        #expect(ChatMessage.sanitizedName("alice") == "alice")
        #expect(ChatMessage.sanitizedName("alice+bob") == "alice_bob")
        #expect(ChatMessage.sanitizedName("Zoë Müller") == "Zo__M_ller")
        #expect(ChatMessage.sanitizedName("") == "speaker")
        #expect(ChatMessage.sanitizedName(String(repeating: "a", count: 100)).count == 64)
        let turn = ChatMessage(role: .user, name: "alice", content: "hello")
        #expect(turn.json(names: true).jsonText == #"{"content":"hello","name":"alice","role":"user"}"#)
        #expect(turn.json(names: false).jsonText == #"{"content":"alice: hello","role":"user"}"#)
    }

    @Test func historyStaysBounded() {
        var history = ChatHistory(recentLimit: 6, summaryLimit: 200)
        for i in 0..<500 {
            history.append(ChatMessage(role: .user, name: "alice", content: "turn \(i) with some words"))
        }
        let messages = history.messages(instructions: "Be brief.")
        #expect(messages.count == 7)
        #expect(
            messages[0].role == .system && messages[0].content.hasPrefix("Be brief.\n\nEarlier in this conversation: …")
        )
        #expect(messages[0].content.count < 260 && messages[0].content.contains("alice: turn 493"))
        #expect(messages.last?.content == "turn 499 with some words")
    }

    @Test func httpFailuresAreClassified() {
        func body(_ code: String?, _ param: String? = nil) -> [UInt8] {
            let quoted = { (s: String?) in s.map { "\"\($0)\"" } ?? "null" }
            return Array(
                #"{"error":{"message":"m","type":"invalid_request_error","code":\#(quoted(code)),"param":\#(quoted(param))}}"#
                    .utf8)
        }
        #expect(PipelineFailure.http(status: 401, body: body("invalid_api_key"), what: "chat").action == .fatal)
        #expect(PipelineFailure.http(status: 404, body: body("model_not_found"), what: "chat").action == .fatal)
        #expect(PipelineFailure.http(status: 429, body: body("insufficient_quota"), what: "chat").action == .fatal)
        #expect(PipelineFailure.http(status: 429, body: body("rate_limit_exceeded"), what: "chat").action == .retry)
        #expect(PipelineFailure.http(status: 503, body: Array("<html>".utf8), what: "chat").action == .retry)
        #expect(
            PipelineFailure.http(status: 400, body: body(nil, "messages[2].name"), what: "chat").action == .nameRejected
        )
        #expect(PipelineFailure.http(status: 400, body: body(nil, "messages[2].content"), what: "chat").action == .drop)
        let line = PipelineFailure.http(status: 401, body: body("invalid_api_key"), what: "chat").message
        #expect(line == "chat: HTTP 401 invalid_api_key: m")
    }
}
