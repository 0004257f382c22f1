import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A local stand-in for the OpenAI Realtime API over a real WebSocket on 127.0.0.1 (on
/// ``WebSocketTestServer``), for the agent's tests and the CLI's (`--agent-url` ``url``).
///
/// It greets every connection with `session.created`, records every client event (type and JSON
/// text) and the audio appended (24 kHz PCM, per connection), answers `session.update` with
/// `session.updated`, and does what the test says: stream a reply (paced in real time or in a
/// burst; `response.cancel` stops it), VAD events, transcriptions, errors, a close 1001 or a TCP
/// drop. With `refuseStatus` every upgrade is refused with that HTTP status (403: a bad key).
/// With `autoReply` every `response.create` is answered with that audio.
///
/// Thread: every member is safe from any thread; scripted replies run on threads of their own.
public final class FakeRealtimeServer: Sendable {
    /// One client event as received.
    public struct ClientEvent: Sendable {
        /// The connection it came on (0 = the first).
        public let connection: Int
        /// Its `type`.
        public let type: String
        /// The JSON text.
        public let json: String
        /// When it arrived.
        public let time: ContinuousClock.Instant

        /// The JSON object (parsed anew on each call).
        public var object: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        }
    }

    private struct Record {
        var events: [ClientEvent] = []
        var audio: [[Int16]] = []
        var connections: [WebSocketTestConnection] = []
        var nextID = 0
        var cancelled: Set<String> = []
    }

    private let server: WebSocketTestServer
    private let record = Mutex(Record())
    private let autoReply: [Int16]?

    /// Listens on 127.0.0.1:`port`. `refuseStatus` refuses every upgrade with that status;
    /// `expectedKey` refuses (401) an upgrade whose `Authorization` is not `Bearer <expectedKey>`.
    public init(port: UInt16, refuseStatus: Int? = nil, expectedKey: String? = nil, autoReply: [Int16]? = nil) throws {
        self.autoReply = autoReply
        var options = WebSocketTestServer.Options()
        let refusal =
            #"{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key"}}"#
        if let refuseStatus {
            options.status = refuseStatus
            options.body = refusal
        }
        if let expectedKey {
            options.refuse = { request in
                request.header("Authorization") == "Bearer \(expectedKey)" ? nil : (401, refusal)
            }
        }
        let box = Mutex<FakeRealtimeServer?>(nil)
        server = try WebSocketTestServer(
            port: port, options: options,
            onConnection: { connection in box.withLock { $0 }?.opened(connection) },
            onMessage: { connection, message in box.withLock { $0 }?.received(message, on: connection) })
        box.withLock { $0 = self }
    }

    /// Stops listening and drops every connection. Idempotent.
    public func stop() { server.stop() }

    /// The URL to give the agent (`ws://127.0.0.1:PORT/v1/realtime?model=gpt-realtime`).
    public var url: String { "ws://127.0.0.1:\(server.port)/v1/realtime?model=gpt-realtime" }

    /// Every upgrade request head (to check the `Authorization` header).
    public var upgradeRequests: [String] { server.upgradeRequests }

    /// The WebSocket connections accepted so far (to check close frames and the upgrade request).
    public var connections: [WebSocketTestConnection] { record.withLock { $0.connections } }

    /// Connections accepted so far.
    public var connectionCount: Int { record.withLock { $0.connections.count } }

    /// Every client event so far, in order.
    public var events: [ClientEvent] { record.withLock { $0.events } }

    /// The client events of `type`, in order.
    public func events(ofType type: String) -> [ClientEvent] { events.filter { $0.type == type } }

    /// The audio appended on connection `index` (24 kHz mono), concatenated.
    public func audio(connection index: Int = 0) -> [Int16] {
        record.withLock { index < $0.audio.count ? $0.audio[index] : [] }
    }

    /// Waits until `condition` holds (polling every 2 ms); false on timeout.
    public func wait(timeout: Duration = .seconds(5), _ condition: (FakeRealtimeServer) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            if ContinuousClock.now >= deadline { return false }
            usleep(2_000)
        }
        return true
    }

    // MARK: - Scripting (on the latest connection unless told)

    /// Sends a raw JSON text message.
    @discardableResult
    public func send(_ json: String, connection index: Int? = nil) -> Bool {
        guard let c = connection(index) else { return false }
        return c.send(text: json)
    }

    /// Sends an event built from `object` (JSON-serialisable).
    @discardableResult
    public func send(object: [String: Any], connection index: Int? = nil) -> Bool {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return false
        }
        return send(String(decoding: data, as: UTF8.self), connection: index)
    }

    /// `input_audio_buffer.speech_started` at `audioStartMs` into the session's audio.
    public func speechStarted(audioStartMs: Int, itemID: String) {
        send(object: ["type": "input_audio_buffer.speech_started", "audio_start_ms": audioStartMs, "item_id": itemID])
    }

    /// `input_audio_buffer.speech_stopped` at `audioEndMs`.
    public func speechStopped(audioEndMs: Int, itemID: String) {
        send(object: ["type": "input_audio_buffer.speech_stopped", "audio_end_ms": audioEndMs, "item_id": itemID])
    }

    /// `conversation.item.input_audio_transcription.completed`.
    public func transcriptionCompleted(itemID: String, transcript: String) {
        send(object: [
            "type": "conversation.item.input_audio_transcription.completed", "item_id": itemID, "content_index": 0,
            "transcript": transcript,
        ])
    }

    /// An `error` event.
    public func sendError(code: String, message: String, type: String = "invalid_request_error") {
        send(object: [
            "type": "error", "event_id": "event_err",
            "error": ["type": type, "code": code, "message": message, "param": NSNull()] as [String: Any],
        ])
    }

    /// A close frame with `code` (1001: session expired).
    public func close(code: UInt16, reason: String = "", connection index: Int? = nil) {
        _ = connection(index)?.sendClose(code: code, reason: reason)
    }

    /// Ends the TCP connection without a close frame (the client sees 1006).
    public func drop(connection index: Int? = nil) { connection(index)?.drop() }

    /// Streams `pcm` (24 kHz) as a response: `response.created`, `response.output_audio.delta`
    /// chunks of `chunkMs` (each followed by a `response.output_audio_transcript.delta` with the
    /// transcript's words due by then), `response.output_audio.done`, the transcript's `.done`,
    /// `response.done`.
    /// `paced`: one chunk per `chunkMs` of wall time; otherwise all at once. Returns at once (the
    /// reply runs on its own thread); a `response.cancel` from the client ends it early with status
    /// `cancelled`. Returns the response id.
    @discardableResult
    public func reply(
        pcm: [Int16], itemID: String = "item_reply", transcript: String? = nil, chunkMs: Int = 100, paced: Bool = false
    ) -> String {
        let responseID = record.withLock { r -> String in
            r.nextID += 1
            return "resp_\(r.nextID)"
        }
        guard let c = connection(nil) else { return responseID }
        let thread = Thread { [self] in
            stream(
                pcm, on: c, responseID: responseID, itemID: itemID, transcript: transcript, chunkMs: chunkMs,
                paced: paced)
        }
        thread.name = "fake-realtime.reply"
        thread.start()
        return responseID
    }

    // MARK: - Internals

    private func connection(_ index: Int?) -> WebSocketTestConnection? {
        record.withLock { r in
            guard let index else { return r.connections.last }
            return index < r.connections.count ? r.connections[index] : nil
        }
    }

    private func opened(_ connection: WebSocketTestConnection) {
        record.withLock { r in
            r.connections.append(connection)
            r.audio.append([])
        }
        connection.send(
            text:
                #"{"type":"session.created","event_id":"event_1","session":{"type":"realtime","model":"gpt-realtime"}}"#
        )
    }

    private func received(_ message: WebSocketTestMessage, on connection: WebSocketTestConnection) {
        guard case .text(let text) = message else { return }
        let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        let type = object["type"] as? String ?? ""
        var samples: [Int16] = []
        if type == "input_audio_buffer.append", let b64 = object["audio"] as? String,
            let data = Data(base64Encoded: b64)
        {
            samples = data.withUnsafeBytes { raw in
                (0..<(raw.count / 2)).map { Int16(bitPattern: UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8) }
            }
        }
        record.withLock { r in
            guard let index = r.connections.firstIndex(where: { $0 === connection }) else { return }
            r.events.append(ClientEvent(connection: index, type: type, json: text, time: .now))
            r.audio[index] += samples
            if type == "response.cancel" { r.cancelled.insert("*") }
        }
        switch type {
        case "session.update":
            connection.send(text: #"{"type":"session.updated","event_id":"event_2","session":{"type":"realtime"}}"#)
        case "response.create":
            if let autoReply { reply(pcm: autoReply, itemID: "item_auto_\(events.count)", transcript: "auto reply") }
        default:
            break
        }
    }

    private func stream(
        _ pcm: [Int16], on c: WebSocketTestConnection, responseID: String, itemID: String, transcript: String?,
        chunkMs: Int, paced: Bool
    ) {
        record.withLock { _ = $0.cancelled.remove("*") }
        func send(_ object: [String: Any]) {
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                c.send(text: String(decoding: data, as: UTF8.self))
            }
        }
        send(["type": "response.created", "response": ["id": responseID, "status": "in_progress"]])
        send([
            "type": "response.output_item.added", "response_id": responseID, "output_index": 0,
            "item": ["id": itemID, "type": "message", "role": "assistant"],
        ])
        let per = max(1, chunkMs * 24)
        var offset = 0
        var cancelled = false
        let start = ContinuousClock.now
        var index = 0
        var sentWords = 0
        while offset < pcm.count {
            if record.withLock({ $0.cancelled.contains("*") }) {
                cancelled = true
                break
            }
            let end = min(pcm.count, offset + per)
            var bytes = [UInt8](repeating: 0, count: (end - offset) * 2)
            for i in offset..<end {
                let u = UInt16(bitPattern: pcm[i])
                bytes[2 * (i - offset)] = UInt8(u & 0xFF)
                bytes[2 * (i - offset) + 1] = UInt8(u >> 8)
            }
            send([
                "type": "response.output_audio.delta", "response_id": responseID, "item_id": itemID,
                "output_index": 0, "content_index": 0, "delta": Data(bytes).base64EncodedString(),
            ])
            if let transcript {
                // The transcript streams with the audio: the words due by the end of this chunk.
                let words = transcript.split(separator: " ", omittingEmptySubsequences: false)
                let due = (words.count * end + pcm.count - 1) / max(1, pcm.count)
                if due > sentWords {
                    let piece = (sentWords > 0 ? " " : "") + words[sentWords..<due].joined(separator: " ")
                    send([
                        "type": "response.output_audio_transcript.delta", "response_id": responseID,
                        "item_id": itemID, "delta": piece,
                    ])
                    sentWords = due
                }
            }
            offset = end
            index += 1
            if paced {
                let due = start + .milliseconds(chunkMs * index)
                let now = ContinuousClock.now
                if due > now {
                    let d = (due - now).components
                    Thread.sleep(forTimeInterval: Double(d.seconds) + Double(d.attoseconds) / 1e18)
                }
            }
        }
        if !cancelled {
            send(["type": "response.output_audio.done", "response_id": responseID, "item_id": itemID])
            if let transcript {
                send([
                    "type": "response.output_audio_transcript.done", "response_id": responseID, "item_id": itemID,
                    "transcript": transcript,
                ])
            }
        }
        send([
            "type": "response.done",
            "response": ["id": responseID, "status": cancelled ? "cancelled" : "completed"] as [String: Any],
        ])
    }
}
