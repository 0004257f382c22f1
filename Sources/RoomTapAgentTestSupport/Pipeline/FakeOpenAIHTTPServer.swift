import Foundation
public import RoomTapJSON
import RoomTapSync
import RoomTapTestSupport

/// A stand-in for the OpenAI HTTP API the pipeline agent uses, on 127.0.0.1 (a port the kernel
/// picks), as strict as the service where a client can go wrong:
///
/// - `POST /v1/chat/completions`: `Authorization: Bearer <expectedKey>` or 401 `invalid_api_key`;
///   a JSON body with a known `model` (else 404 `model_not_found`), `stream: true`, `messages`
///   with valid roles, string contents and `name`s matching `^[a-zA-Z0-9_-]{1,64}$` (else 400 with
///   `param: "messages[i].name"`; with ``rejectNames`` every `name` is refused that way, as some
///   compatible servers do), well-formed `tools`; the answer streams as the service's does:
///   `text/event-stream`, chunked, `data: {chat.completion.chunk}` events, `data: [DONE]`.
/// - `POST /v1/audio/speech`: the same key check; a known TTS `model`, a `voice`, a non-empty
///   `input` of at most 4096 characters, `response_format: "pcm"`; the answer is 24 kHz s16le
///   mono, streamed in odd-sized chunks (a chunk may end mid-sample), a deterministic signal per
///   request (two tones) of ``speechMillisecondsPerCharacter`` per character, kept in
///   ``speeches`` for correlation.
///
/// Replies come from ``script`` (the request's messages in, the reply's pieces out), with the
/// delays a test sets (time to the first token, between chunks; time to the first audio byte,
/// pacing of audio) so a latency measurement can take them out.
///
/// Thread: any; each connection is served on a thread of its own.
public final class FakeOpenAIHTTPServer: Sendable {
    /// One chat request as it arrived.
    public struct ChatRequest: Sendable {
        public let body: JSONValue
        /// `messages[]` as (role, name, content).
        public var messages: [(role: String, name: String?, content: String)] {
            (body["messages"]?.arrayValue ?? []).map {
                ($0["role"]?.stringValue ?? "", $0["name"]?.stringValue, $0["content"]?.stringValue ?? "")
            }
        }
        public let at: ContinuousClock.Instant
    }

    /// What the chat stand-in answers.
    public enum ChatScript: Sendable {
        /// Text streamed in these pieces, then `finish_reason: stop`.
        case text([String])
        /// A tool call (name, arguments JSON), `finish_reason: tool_calls`.
        case toolCall(String, String)
        /// An error answer with this status, error code and message (OpenAI's error object).
        case failure(Int, String, String)
        /// The stream stops after these pieces without `[DONE]` (a server that died mid-stream).
        case cutOff([String])
    }

    /// One speech request and the samples sent for it (24 kHz).
    public struct Speech: Sendable {
        public let input: String
        public let voice: String
        public let samples: [Int16]
        public let at: ContinuousClock.Instant
    }

    public struct Settings: Sendable {
        public var expectedKey: String
        public var chatModels: Set<String> = ["gpt-4.1-mini", "gpt-4o-mini", "gpt-5-mini"]
        public var ttsModels: Set<String> = ["gpt-4o-mini-tts", "tts-1"]
        public var rejectNames = false
        /// Before the first chunk of a chat stream, and between chunks.
        public var chatFirstTokenDelay: Duration = .zero
        public var chatChunkDelay: Duration = .zero
        /// Before the first byte of speech; pacing: audio sent at this many times real time (0: at once).
        public var speechFirstByteDelay: Duration = .zero
        public var speechRealTimeFactor = 0.0
        public var speechMillisecondsPerCharacter = 40
        public var script: @Sendable (ChatRequest) -> ChatScript = { _ in .text(["I heard you. ", "Thank you all."]) }

        public init(expectedKey: String) { self.expectedKey = expectedKey }
    }

    public let port: UInt16
    public let settings: Settings
    private let listener: Int32
    private let stopped = Locked(false)
    private let record = Locked<(chats: [ChatRequest], speeches: [Speech], refused: [String])>(([], [], []))

    public init(settings: Settings) throws {
        do { listener = try TestTCP.listen(port: 0) } catch { throw error }
        port = TestTCP.boundPort(listener)
        self.settings = settings
        let listener = self.listener
        TestTCP.thread("openai-http-test") { [self] in
            while true {
                let fd = TestTCP.accept(listener)
                guard fd >= 0 else { return }
                TestTCP.thread("openai-http-conn") { [self] in serve(fd) }
            }
        }
    }

    deinit { stop() }

    /// Stops accepting (requests being served finish). Idempotent.
    public func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// `http://127.0.0.1:PORT/v1`.
    public var baseURL: String { "http://127.0.0.1:\(port)/v1" }

    /// The chat requests answered 200, in order.
    public var chats: [ChatRequest] { record.withLock { $0.chats } }
    /// The speech requests answered 200 and what was sent.
    public var speeches: [Speech] { record.withLock { $0.speeches } }
    /// Requests refused (status and reason), in order.
    public var refused: [String] { record.withLock { $0.refused } }

    /// The signal of the `index`-th speech request (0-based), `count` samples at 24 kHz.
    public static func speechSignal(index: Int, count: Int) -> [Int16] {
        let f1 = 220.0 + 37 * Double(index % 7)
        let f2 = 710.0 + 53 * Double(index % 5)
        return (0..<count).map { n in
            let t = Double(n) / 24_000
            return Int16((6_000 * sin(2 * .pi * f1 * t) + 3_000 * sin(2 * .pi * f2 * t)).rounded())
        }
    }

    // MARK: - Serving

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let (method, path, headers, body) = TestTCP.readRequest(fd) else { return }
        guard method == "POST", ["/v1/chat/completions", "/v1/audio/speech"].contains(path) else {
            refuse(
                fd, 404, "unknown_url", "Unknown request URL: \(method) \(path).",
                type: "invalid_request_error")
            return
        }
        guard headers["authorization"] == "Bearer \(settings.expectedKey)" else {
            refuse(fd, 401, "invalid_api_key", "Incorrect API key provided.", type: "invalid_request_error")
            return
        }
        guard headers["content-type"]?.hasPrefix("application/json") == true,
            let json = try? JSONValue(parsing: String(decoding: body, as: UTF8.self)),
            json.objectValue != nil
        else {
            refuse(fd, 400, nil, "We could not parse the JSON body of your request.", type: "invalid_request_error")
            return
        }
        if path == "/v1/chat/completions" { chat(fd, json) } else { speech(fd, json) }
    }

    private func chat(_ fd: Int32, _ body: JSONValue) {
        if let problem = chatProblem(body) {
            refuse(fd, problem.status, problem.code, problem.message, param: problem.param)
            return
        }
        let request = ChatRequest(body: body, at: ContinuousClock.now)
        let script = settings.script(request)
        if case .failure(let status, let code, let message) = script {
            refuse(fd, status, code, message)
            return
        }
        record.withLock { $0.chats.append(request) }
        guard startChunked(fd, type: "text/event-stream") else { return }
        sleep(settings.chatFirstTokenDelay)
        let id = "chatcmpl-\(UInt32.random(in: 0...UInt32.max))"
        func chunk(_ delta: JSONValue, finish: String?) -> Bool {
            let object: JSONValue = .object([
                "id": .string(id), "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": body["model"] ?? .null,
                "choices": .array([
                    .object(["index": 0, "delta": delta, "finish_reason": finish.map { JSONValue.string($0) } ?? .null])
                ]),
            ])
            return sendChunk(fd, Array("data: \(object.jsonText)\n\n".utf8))
        }
        switch script {
        case .text(let pieces), .cutOff(let pieces):
            guard chunk(.object(["role": "assistant", "content": ""]), finish: nil) else { return }
            for piece in pieces {
                guard chunk(.object(["content": .string(piece)]), finish: nil) else { return }
                sleep(settings.chatChunkDelay)
            }
            if case .cutOff = script { return }  // no [DONE], no final chunk: the connection just ends
            _ = chunk(.object([:]), finish: "stop")
        case .toolCall(let name, let arguments):
            let call: JSONValue = .object([
                "index": 0, "id": "call_1", "type": "function",
                "function": .object(["name": .string(name), "arguments": .string(arguments)]),
            ])
            guard chunk(.object(["role": "assistant", "tool_calls": .array([call])]), finish: nil) else { return }
            _ = chunk(.object([:]), finish: "tool_calls")
        case .failure: return
        }
        _ = sendChunk(fd, Array("data: [DONE]\n\n".utf8))
        _ = sendChunk(fd, [])
    }

    private struct Problem {
        var status: Int
        var code: String?
        var message: String
        var param: String?
    }

    /// What the service would refuse in a chat request, if anything.
    private func chatProblem(_ body: JSONValue) -> Problem? {
        guard let model = body["model"]?.stringValue else {
            return Problem(status: 400, code: nil, message: "you must provide a model parameter", param: "model")
        }
        guard settings.chatModels.contains(model) else {
            return Problem(
                status: 404, code: "model_not_found",
                message: "The model `\(model)` does not exist or you do not have access to it.")
        }
        guard body["stream"]?.boolValue == true else {
            return Problem(
                status: 400, code: nil, message: "this stand-in streams only: stream must be true", param: "stream")
        }
        guard let messages = body["messages"]?.arrayValue, !messages.isEmpty else {
            return Problem(status: 400, code: nil, message: "'messages' must be a non-empty array", param: "messages")
        }
        for (i, m) in messages.enumerated() {
            let role = m["role"]?.stringValue ?? ""
            guard ["system", "developer", "user", "assistant", "tool"].contains(role) else {
                return Problem(
                    status: 400, code: "invalid_value", message: "Invalid value: '\(role)'.",
                    param: "messages[\(i)].role")
            }
            let content = m["content"]
            let hasCalls = m["tool_calls"]?.arrayValue?.isEmpty == false
            guard content?.stringValue != nil || (role == "assistant" && hasCalls && content?.isNull != false) else {
                return Problem(
                    status: 400, code: "invalid_type", message: "Invalid type for 'messages[\(i)].content'.",
                    param: "messages[\(i)].content")
            }
            if role == "tool" && m["tool_call_id"]?.stringValue == nil {
                return Problem(
                    status: 400, code: nil, message: "Missing required parameter: 'messages[\(i)].tool_call_id'.",
                    param: "messages[\(i)].tool_call_id")
            }
            if let name = m["name"] {
                let valid = name.stringValue.map(Self.isValidName) ?? false
                if settings.rejectNames || !valid {
                    return Problem(
                        status: 400, code: settings.rejectNames ? "unknown_parameter" : "invalid_value",
                        message: settings.rejectNames
                            ? "Unrecognized request argument supplied: messages[\(i)].name"
                            : "Invalid 'messages[\(i)].name': string does not match pattern. Expected a string "
                                + "that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.",
                        param: "messages[\(i)].name")
                }
            }
        }
        for (i, tool) in (body["tools"]?.arrayValue ?? []).enumerated() {
            guard tool["type"]?.stringValue == "function", let name = tool["function"]?["name"]?.stringValue,
                Self.isValidName(name)
            else {
                return Problem(
                    status: 400, code: "invalid_value", message: "Invalid 'tools[\(i)]'.", param: "tools[\(i)]")
            }
        }
        return nil
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F
                    || $0 == 0x2D
            }
    }

    private func speech(_ fd: Int32, _ body: JSONValue) {
        let model = body["model"]?.stringValue ?? ""
        let input = body["input"]?.stringValue ?? ""
        let voice = body["voice"]?.stringValue ?? ""
        guard settings.ttsModels.contains(model) else {
            refuse(fd, 404, "model_not_found", "The model `\(model)` does not exist or you do not have access to it.")
            return
        }
        guard !input.isEmpty, input.count <= 4_096 else {
            refuse(fd, 400, "invalid_value", "'input' must be 1 to 4096 characters.", param: "input")
            return
        }
        guard !voice.isEmpty else {
            refuse(fd, 400, nil, "Missing required parameter: 'voice'.", param: "voice")
            return
        }
        guard body["response_format"]?.stringValue == "pcm" else {
            refuse(fd, 400, "invalid_value", "this stand-in speaks response_format pcm only", param: "response_format")
            return
        }
        let index = record.withLock { $0.speeches.count }
        let samples = Self.speechSignal(
            index: index, count: input.count * settings.speechMillisecondsPerCharacter * 24)
        record.withLock {
            $0.speeches.append(Speech(input: input, voice: voice, samples: samples, at: ContinuousClock.now))
        }
        guard startChunked(fd, type: "audio/pcm") else { return }
        sleep(settings.speechFirstByteDelay)
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for s in samples {
            let u = UInt16(bitPattern: s)
            bytes.append(UInt8(u & 0xFF))
            bytes.append(UInt8(u >> 8))
        }
        let piece = 1_441  // 30 ms and a byte: chunks end mid-sample
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            guard sendChunk(fd, Array(bytes[offset..<end])) else { return }
            offset = end
            if settings.speechRealTimeFactor > 0 {
                sleep(.microseconds(Int64(Double(piece) / 48.0 * 1_000 / settings.speechRealTimeFactor)))
            }
        }
        _ = sendChunk(fd, [])
    }

    // MARK: - HTTP

    private func startChunked(_ fd: Int32, type: String) -> Bool {
        TestTCP.sendAll(
            fd,
            Array(
                "HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    .utf8))
    }

    /// One chunk of a chunked body (RFC 9112 §7.1); empty: the last chunk.
    private func sendChunk(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        TestTCP.sendAll(fd, Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + Array("\r\n".utf8))
    }

    private func refuse(
        _ fd: Int32, _ status: Int, _ code: String?, _ message: String, param: String? = nil,
        type: String = "invalid_request_error"
    ) {
        record.withLock { $0.refused.append("\(status) \(code ?? ""): \(message)") }
        let error: JSONValue = .object([
            "error": .object([
                "message": .string(message), "type": .string(type),
                "param": param.map { JSONValue.string($0) } ?? .null,
                "code": code.map { JSONValue.string($0) } ?? .null,
            ])
        ])
        let body = Array(error.jsonText.utf8)
        let reason =
            [400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"][status] ?? "Error"
        TestTCP.sendAll(
            fd,
            Array(
                "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                    .utf8) + Array("Connection: close\r\n\r\n".utf8) + body)
    }

    private func sleep(_ duration: Duration) {
        guard duration > .zero else { return }
        Thread.sleep(
            forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
