import Foundation
public import RoomTapAgent
public import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A local stand-in for the OpenAI Realtime API over a real WebSocket on 127.0.0.1 (on
/// ``WebSocketTestServer``), for the agent's tests and the CLI's (`--agent-url` ``url``), as strict
/// as the service where the agent can get it wrong:
///
/// - It greets every connection with `session.created` (with `expires_at`) and judges each
///   `session.update` like the service (``FakeRealtimeSession``): a rejected one gets an `error`
///   and leaves the session unchanged; an accepted one `session.updated`.
/// - One response at a time: `response.create` during one is refused
///   (`conversation_already_has_active_response`), `response.cancel` with none is refused
///   (`response_cancel_not_active`). A response streams the Realtime event sequence (created,
///   output item and content part added, audio and transcript deltas, the `.done`s,
///   `response.done`, `rate_limits.updated`); a cancelled one still gets its `.done`s with the
///   full transcript generated, and `response.done` `cancelled`.
/// - Server VAD: ``speechStarted(audioStartMs:itemID:)`` cancels the active response when the
///   session's `interrupt_response` is on (the default), as the service does.
/// - `conversation.item.create` gets `conversation.item.added`/`.done`; `conversation.item.truncate`
///   of an unknown item, of a non-assistant item, or past the audio the item has gets an `error`,
///   a valid one `conversation.item.truncated`.
/// - An `OpenAI-Beta` header on the upgrade gets `beta_api_shape_disabled` and a close 4000.
/// - With `maxSessionDuration` a session ends like the service's at 60 minutes: an `error`
///   `session_expired` (unless `sendsExpiryError` is false) and a close 1001.
/// - ``failNextResponses(code:count:)`` fails responses the way quota and rate limits do
///   (`response.done` `failed` with `status_details.error`); ``refuseNextUpgrades(status:count:)``
///   answers upgrades with an HTTP status (400, 404, 429, 500…).
///
/// It records every client event (type and JSON text) and the audio appended (24 kHz PCM, per
/// connection). With `refuseStatus` every upgrade is refused with that HTTP status (403: a bad
/// key). With `autoReply` every `response.create` (and every end of speech, as server VAD with
/// `create_response` would) is answered with that audio.
///
/// Thread: every member is safe from any thread; replies stream on threads of their own.
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
        public let time: MonotonicClock.Instant

        /// The JSON object (parsed anew on each call).
        public var object: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        }

        /// Its `event_id`, if it had one.
        public var eventID: String? { object["event_id"] as? String }
    }

    struct Record {
        var events: [ClientEvent] = []
        var audio: [[Int16]] = []
        var connections: [WebSocketTestConnection] = []
        var connectionTimes: [MonotonicClock.Instant] = []
        var sessions: [FakeRealtimeSession] = []
        var nextResponse = 0
        var failures: [String] = []
        /// Responses started without `response.created` sent yet.
        var unannounced: Set<String> = []
        /// `session.update`s answered with an `error` (the session unchanged).
        var refusedUpdates = 0
    }

    private let server: WebSocketTestServer
    let record = Locked(Record())
    private let refusals = UpgradeRefusals()
    let autoReply: [Int16]?
    private let maxSessionDuration: Duration?
    private let sendsExpiryError: Bool
    private let closesAtOnce: (code: UInt16, reason: String)?
    /// What a transcription session's turn says (its 24 kHz audio in).
    let transcribe: @Sendable ([Int16]) -> String
    /// The time sessions expire on and `expires_at` is given in (the agent's, in a virtual-time test).
    private let clock: any AgentClock

    /// Listens on 127.0.0.1:`port` (0: a port the kernel picks; see ``url``). `refuseStatus`
    /// refuses every upgrade with that status; `expectedKey` refuses (401) an upgrade whose
    /// `Authorization` is not `Bearer <expectedKey>`; `expectedAzureKey` (Azure OpenAI) refuses
    /// (401) one whose `api-key` header is not that key or that has an `Authorization`;
    /// `maxSessionDuration` ends each session
    /// after that long (`session_expired` first unless `sendsExpiryError` is false, then close
    /// 1001); `closesAtOnce` closes every connection with that code right after its
    /// `session.created` (a server in trouble, or one that ends every session at once).
    public init(
        port: UInt16 = 0, refuseStatus: Int? = nil, expectedKey: String? = nil, expectedAzureKey: String? = nil,
        autoReply: [Int16]? = nil,
        maxSessionDuration: Duration? = nil, sendsExpiryError: Bool = true,
        closesAtOnce: (code: UInt16, reason: String)? = nil,
        transcribe: @escaping @Sendable ([Int16]) -> String = FakeRealtimeServer.describeSpeech,
        clock: any AgentClock = SystemAgentClock()
    ) throws {
        self.transcribe = transcribe
        self.clock = clock
        self.autoReply = autoReply
        self.maxSessionDuration = maxSessionDuration
        self.sendsExpiryError = sendsExpiryError
        self.closesAtOnce = closesAtOnce
        let refusals = self.refusals
        var options = WebSocketTestServer.Options()
        let refusal =
            #"{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key"}}"#
        if let refuseStatus {
            options.status = refuseStatus
            options.body = refusal
        }
        options.refuse = { request in
            if let status = refusals.next() {
                return (status, #"{"error":{"type":"server_error","code":null,"message":"HTTP \#(status)"}}"#)
            }
            if let expectedKey, request.header("Authorization") != "Bearer \(expectedKey)" { return (401, refusal) }
            // Azure OpenAI: the resource key in `api-key`; a Bearer beside it is not what was asked for.
            if let expectedAzureKey,
                request.header("api-key") != expectedAzureKey || request.header("Authorization") != nil
            {
                return (
                    401,
                    #"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}"#
                )
            }
            return nil
        }
        let box = Locked<FakeRealtimeServer?>(nil)
        server = try WebSocketTestServer(
            port: port, options: options,
            onConnection: { connection in box.withLock { $0 }?.opened(connection) },
            onMessage: { connection, message in box.withLock { $0 }?.received(message, on: connection) })
        box.withLock { $0 = self }
    }

    /// Stops listening and drops every connection. Idempotent.
    public func stop() { server.stop() }

    /// The port it listens on.
    public var port: UInt16 { server.port }

    /// The URL to give the agent (`ws://127.0.0.1:PORT/v1/realtime?model=gpt-realtime`).
    public var url: String { "ws://127.0.0.1:\(server.port)/v1/realtime?model=gpt-realtime" }

    /// Every upgrade request head (to check the `Authorization` header).
    public var upgradeRequests: [String] { server.upgradeRequests }

    /// The WebSocket connections accepted so far (to check close frames and the upgrade request).
    public var connections: [WebSocketTestConnection] { record.snapshot(\.connections) }

    /// When each connection was accepted, in order (on the server's clock: virtual in a
    /// virtual-time test).
    public var connectionTimes: [MonotonicClock.Instant] { record.snapshot(\.connectionTimes) }

    /// Connections accepted so far.
    public var connectionCount: Int { record.withLock { $0.connections.count } }

    /// `session.update`s refused so far (decided as each arrives, before it is in ``events``).
    public var refusedSessionUpdates: Int { record.withLock { $0.refusedUpdates } }

    /// The URL of transcription sessions (`ws://127.0.0.1:PORT/v1/realtime?intent=transcription`).
    public var transcriptionURL: String { "ws://127.0.0.1:\(server.port)/v1/realtime?intent=transcription" }

    /// The indices of the connections opened as transcription sessions (`?intent=transcription`).
    public var transcriptionConnections: [Int] {
        record.withLock { r in r.sessions.indices.filter { r.sessions[$0].isTranscription } }
    }

    /// A transcript naming the strongest of `tones` (Hz) in a turn's audio, "tone 300": the test
    /// gives every speaker a tone of their own, so a line says whose audio it came from.
    public static func namingTones(_ tones: [Double]) -> @Sendable ([Int16]) -> String {
        { samples in
            func amplitude(_ f: Double) -> Double {
                var re = 0.0
                var im = 0.0
                for (k, v) in samples.enumerated() {
                    let a = 2 * Double.pi * f * Double(k) / 24_000
                    re += Double(v) * cos(a)
                    im += Double(v) * sin(a)
                }
                return re * re + im * im
            }
            let best = tones.max { amplitude($0) < amplitude($1) } ?? 0
            return "tone \(Int(best))"
        }
    }

    /// The default transcript of a transcription turn: "speech of 1.23 s".
    public static let describeSpeech: @Sendable ([Int16]) -> String = { samples in
        "speech of " + String(format: "%.2f", Double(samples.count) / 24_000) + " s"
    }

    /// Every client event so far, in order.
    public var events: [ClientEvent] { record.snapshot(\.events) }

    /// The client events of `type`, in order.
    public func events(ofType type: String) -> [ClientEvent] { events.filter { $0.type == type } }

    /// The audio appended on connection `index` (24 kHz mono), concatenated.
    /// In storage of its own (see `Locked.snapshot`).
    public func audio(connection index: Int = 0) -> [Int16] {
        record.withLock { index < $0.audio.count ? $0.audio[index].map { $0 } : [] }
    }

    /// Whether a response is in progress on connection `index` (the latest unless told).
    public func hasActiveResponse(connection index: Int? = nil) -> Bool {
        record.withLock { r in
            guard let i = index ?? (r.sessions.isEmpty ? nil : r.sessions.count - 1), i < r.sessions.count else {
                return false
            }
            return r.sessions[i].active != nil
        }
    }

    /// Waits until `condition` holds (polling every 2 ms); false on timeout.
    public func wait(timeout: Duration = .seconds(30), _ condition: (FakeRealtimeServer) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(self) }
    }

    // MARK: - Scripting (on the latest connection unless told)

    /// Answers the next `count` upgrades with HTTP `status` (then as usual).
    public func refuseNextUpgrades(status: Int, count: Int = 1) {
        refusals.add(status, count: count)
    }

    /// Fails the next `count` responses asked for with `response.create` the way the service
    /// reports quota and rate limits: `response.created`, then `response.done` with status
    /// `failed` and `status_details.error.code` = `code` (`insufficient_quota`,
    /// `rate_limit_exceeded`).
    public func failNextResponses(code: String, count: Int = 1) {
        record.withLock { $0.failures += Array(repeating: code, count: count) }
    }

    /// Sends a raw JSON text message.
    @discardableResult
    public func send(_ json: String, connection index: Int? = nil) -> Bool {
        guard let c = connection(index) else { return false }
        return c.send(text: json)
    }

    /// Sends an event built from `object` (JSON-serialisable).
    @discardableResult
    public func send(object: [String: Any], connection index: Int? = nil) -> Bool {
        guard let c = connection(index) else { return false }
        return Self.send(object, on: c)
    }

    /// `input_audio_buffer.speech_started` at `audioStartMs` into the session's audio. With the
    /// session's `interrupt_response` on, the active response is cancelled (as the service does):
    /// it ends with its `.done` events and `response.done` `cancelled`.
    public func speechStarted(audioStartMs: Int, itemID: String) {
        guard let c = connection(nil) else { return }
        Self.send(
            ["type": "input_audio_buffer.speech_started", "audio_start_ms": audioStartMs, "item_id": itemID], on: c)
        let finished = record.withLock { r -> (FakeRealtimeResponse, String)? in
            guard let i = r.connections.firstIndex(where: { $0 === c }), r.sessions[i].interruptResponse,
                let active = r.sessions[i].active
            else { return nil }
            active.cancel(reason: "turn_detected")
            guard !active.isStreaming, active.finish() else { return nil }
            r.sessions[i].active = nil
            return (active, r.sessions[i].eventID())
        }
        if let (response, eventID) = finished { Self.send(Self.responseDone(response, "cancelled", eventID), on: c) }
    }

    /// `input_audio_buffer.speech_stopped` at `audioEndMs`, then `input_audio_buffer.committed`
    /// and the user item; with `autoReply` and `create_response` on, a reply.
    public func speechStopped(audioEndMs: Int, itemID: String) {
        guard let c = connection(nil) else { return }
        Self.send(["type": "input_audio_buffer.speech_stopped", "audio_end_ms": audioEndMs, "item_id": itemID], on: c)
        let replies = record.withLock { r -> Bool in
            guard let i = r.connections.firstIndex(where: { $0 === c }) else { return false }
            r.sessions[i].items.insert(itemID)
            return r.sessions[i].createResponse && r.sessions[i].active == nil
        }
        Self.send(["type": "input_audio_buffer.committed", "item_id": itemID, "previous_item_id": NSNull()], on: c)
        Self.send(
            [
                "type": "conversation.item.added",
                "item": ["id": itemID, "type": "message", "role": "user", "content": [["type": "input_audio"]]],
            ], on: c)
        if replies, let autoReply { reply(pcm: autoReply, itemID: "item_auto_\(audioEndMs)", transcript: "auto reply") }
    }

    /// A response in which the model calls the function `name` with `arguments` (JSON text), as
    /// the service streams one: `response.created`, `response.output_item.added` (a
    /// `function_call` item), `response.function_call_arguments.delta`/`.done`,
    /// `response.output_item.done`, `response.done` with the item in its `output`. The function
    /// must be one of the session's tools. Returns false when it is not or a response is active.
    @discardableResult
    public func functionCall(name: String, arguments: String, callID: String) -> Bool {
        guard let c = connection(nil) else { return false }
        let started = record.withLock { r -> (FakeRealtimeResponse, String, [String], Int)? in
            guard let i = r.connections.firstIndex(where: { $0 === c }), r.sessions[i].active == nil,
                r.sessions[i].tools.contains(name)
            else { return nil }
            r.nextResponse += 1
            let response = FakeRealtimeResponse(id: "resp_\(r.nextResponse)")
            r.sessions[i].active = response
            r.sessions[i].calls.insert(callID)
            let itemID = r.sessions[i].itemID()
            r.sessions[i].items.insert(itemID)
            return (response, itemID, (0..<5).map { _ in r.sessions[i].eventID() }, i)
        }
        guard let (response, itemID, ids, session) = started else { return false }
        var item: [String: Any] = [
            "id": itemID, "type": "function_call", "status": "in_progress", "call_id": callID, "name": name,
            "arguments": "",
        ]
        let at: [String: Any] = ["response_id": response.id, "item_id": itemID, "output_index": 0, "call_id": callID]
        Self.send(Self.responseCreated(response, ids[0]), on: c)
        Self.send(
            ["type": "response.output_item.added", "response_id": response.id, "output_index": 0, "item": item], on: c)
        Self.send(at.merging(["type": "response.function_call_arguments.delta", "delta": arguments]) { $1 }, on: c)
        Self.send(at.merging(["type": "response.function_call_arguments.done", "arguments": arguments]) { $1 }, on: c)
        item["status"] = "completed"
        item["arguments"] = arguments
        Self.send(
            ["type": "response.output_item.done", "response_id": response.id, "output_index": 0, "item": item], on: c)
        _ = response.finish()
        record.withLock { r in
            if r.sessions[session].active === response { r.sessions[session].active = nil }
        }
        var done = Self.responseDone(response, "completed", ids[1])
        if var body = done["response"] as? [String: Any] {
            body["output"] = [item]
            done["response"] = body
        }
        Self.send(done, on: c)
        return true
    }

    /// `conversation.item.input_audio_transcription.completed`.
    public func transcriptionCompleted(itemID: String, transcript: String) {
        send(object: [
            "type": "conversation.item.input_audio_transcription.completed", "item_id": itemID, "content_index": 0,
            "transcript": transcript,
        ])
    }

    /// `conversation.item.input_audio_transcription.failed`.
    public func transcriptionFailed(itemID: String, message: String = "Transcription failed.") {
        send(object: [
            "type": "conversation.item.input_audio_transcription.failed", "item_id": itemID, "content_index": 0,
            "error": ["type": "transcription_error", "code": "audio_unintelligible", "message": message],
        ])
    }

    /// An `error` event.
    public func sendError(code: String, message: String, type: String = "invalid_request_error") {
        guard let c = connection(nil) else { return }
        Self.send(
            FakeRealtimeError(type: type, code: code, message: message).event(
                eventID: "event_err", clientEventID: nil), on: c)
    }

    /// A close frame with `code` (1001: session expired).
    public func close(code: UInt16, reason: String = "", connection index: Int? = nil) {
        _ = connection(index)?.sendClose(code: code, reason: reason)
    }

    /// Ends the TCP connection without a close frame (the client sees 1006).
    public func drop(connection index: Int? = nil) { connection(index)?.drop() }

    // MARK: - Internals

    func connection(_ index: Int?) -> WebSocketTestConnection? {
        record.withLock { r in
            guard let index else { return r.connections.last }
            return index < r.connections.count ? r.connections[index] : nil
        }
    }

    @discardableResult
    static func send(_ object: [String: Any], on c: WebSocketTestConnection) -> Bool {
        c.send(text: text(object))
    }

    /// The JSON text of `object` (keys sorted).
    static func text(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func opened(_ connection: WebSocketTestConnection) {
        let query = URLComponents(string: "http://h" + connection.request.target)?.queryItems
        let model = query?.first { $0.name == "model" }?.value ?? "gpt-realtime"
        let transcription = query?.first { $0.name == "intent" }?.value == "transcription"
        let (greeting, eventID) = record.withLock { r -> (String, String) in
            r.connections.append(connection)
            r.connectionTimes.append(clock.now)
            r.audio.append([])
            r.sessions.append(FakeRealtimeSession(model: model, transcription: transcription))
            let i = r.sessions.count - 1
            let expiresAt =
                maxSessionDuration.map { Int(clock.unixTime) + Int($0.components.seconds) }
                ?? (closesAtOnce != nil ? Int(clock.unixTime) + 3_600 : nil)
            return (
                Self.text([
                    "type": "session.created", "event_id": r.sessions[i].eventID(),
                    "session": r.sessions[i].object(expiresAt: expiresAt),
                ]),
                r.sessions[i].eventID()
            )
        }
        if connection.request.header("OpenAI-Beta") != nil {
            Self.send(FakeRealtimeError.betaShapeDisabled.event(eventID: eventID, clientEventID: nil), on: connection)
            connection.sendClose(code: 4000, reason: "beta_api_shape_disabled")
            return
        }
        connection.send(text: greeting)
        if let closesAtOnce {
            connection.sendClose(code: closesAtOnce.code, reason: closesAtOnce.reason)
            return
        }
        if let maxSessionDuration {
            let sendsError = sendsExpiryError
            let clock = self.clock
            let end = clock.now + maxSessionDuration
            RoomThread.start("fake-realtime.expiry") {
                if clock is SystemAgentClock {
                    guard !connection.waitUntilEnded(timeout: maxSessionDuration) else { return }
                } else {
                    // On virtual time: it moves only when the test moves it.
                    while clock.now < end {
                        if connection.waitUntilEnded(timeout: .milliseconds(1)) { return }
                    }
                }
                if sendsError {
                    Self.send(
                        FakeRealtimeError.sessionExpired.event(eventID: "event_expired", clientEventID: nil),
                        on: connection)
                }
                connection.sendClose(code: 1001, reason: "maximum duration")
            }
        }
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
        let (replies, stream) = record.withLock { r -> ([String], FakeRealtimeResponse?) in
            guard let index = r.connections.firstIndex(where: { $0 === connection }) else { return ([], nil) }
            r.events.append(ClientEvent(connection: index, type: type, json: text, time: .now))
            r.audio[index] += samples
            var (answers, stream) = answer(type: type, object, session: index, &r)
            if type == "input_audio_buffer.append", r.sessions[index].isTranscription, !samples.isEmpty {
                var vad = r.sessions[index].vad
                let found = vad.append(samples) { r.sessions[index].itemID() }
                r.sessions[index].vad = vad
                for event in found {
                    switch event {
                    case .started(let itemID, let ms):
                        answers.append([
                            "type": "input_audio_buffer.speech_started", "event_id": r.sessions[index].eventID(),
                            "audio_start_ms": ms, "item_id": itemID,
                        ])
                    case .stopped(let turn):
                        answers.append([
                            "type": "input_audio_buffer.speech_stopped", "event_id": r.sessions[index].eventID(),
                            "audio_end_ms": turn.endMs, "item_id": turn.itemID,
                        ])
                        answers += transcribed(turn, session: index, &r)
                    }
                }
            }
            return (answers.map(Self.text), stream)
        }
        for reply in replies { connection.send(text: reply) }
        if let stream, let autoReply {
            startStream(
                stream, on: connection, pcm: autoReply, itemID: "item_auto_\(stream.id)", transcript: "auto reply",
                chunkMs: 100, paced: false)
        }
    }

    /// Decides the answer to one client event (under the lock): the events to send, and a
    /// response to stream with `autoReply`.
    private func answer(
        type: String, _ object: [String: Any], session i: Int, _ r: inout Record
    ) -> ([[String: Any]], FakeRealtimeResponse?) {
        let clientID = object["event_id"] as? String
        func error(_ e: FakeRealtimeError) -> ([[String: Any]], FakeRealtimeResponse?) {
            ([e.event(eventID: r.sessions[i].eventID(), clientEventID: clientID)], nil)
        }
        switch type {
        case "session.update":
            if let e = r.sessions[i].update(object["session"]) {
                r.refusedUpdates += 1
                return error(e)
            }
            return (
                [
                    [
                        "type": "session.updated", "event_id": r.sessions[i].eventID(),
                        "session": r.sessions[i].object(expiresAt: nil),
                    ]
                ], nil
            )
        case "input_audio_buffer.append":
            guard let b64 = object["audio"] as? String, Data(base64Encoded: b64) != nil else {
                return error(.invalid("audio", "Invalid 'audio'. Expected base64-encoded audio bytes."))
            }
            return ([], nil)
        case "input_audio_buffer.commit" where r.sessions[i].isTranscription:
            var vad = r.sessions[i].vad
            let turn = vad.commit { r.sessions[i].itemID() }
            r.sessions[i].vad = vad
            guard let turn else {
                return error(
                    FakeRealtimeError(
                        code: "input_audio_buffer_commit_empty",
                        message: "Error committing input audio buffer: buffer too small. Expected at least 100ms "
                            + "of audio, but buffer only has \(vad.uncommittedSamples / 24).00ms of audio."))
            }
            return (transcribed(turn, session: i, &r), nil)
        case "response.create" where r.sessions[i].isTranscription:
            return error(
                .invalid("type", "Invalid value: 'response.create'. A transcription session does not create responses.")
            )
        case "input_audio_buffer.commit":
            return (
                [
                    [
                        "type": "input_audio_buffer.committed", "event_id": r.sessions[i].eventID(),
                        "item_id": r.sessions[i].itemID(),
                    ]
                ], nil
            )
        case "input_audio_buffer.clear":
            return ([["type": "input_audio_buffer.cleared", "event_id": r.sessions[i].eventID()]], nil)
        case "conversation.item.create":
            guard let item = object["item"] as? [String: Any] else { return error(.missing("item")) }
            if item["type"] as? String == "function_call_output" {
                guard let callID = item["call_id"] as? String else { return error(.missing("item.call_id")) }
                guard item["output"] is String else {
                    return error(.invalid("item.output", "Invalid type for 'item.output': expected a string."))
                }
                guard r.sessions[i].calls.contains(callID) else {
                    return error(.invalid("item.call_id", "Tool call ID '\(callID)' not found in conversation."))
                }
                guard !r.sessions[i].answeredCalls.contains(callID) else {
                    return error(.invalid("item.call_id", "Tool call ID '\(callID)' already has an output."))
                }
                r.sessions[i].answeredCalls.insert(callID)
                var added = item
                added["id"] = r.sessions[i].itemID()
                added["status"] = "completed"
                return (r.sessions[i].itemAddedAndDone(added), nil)
            }
            guard item["type"] as? String == "message", let role = item["role"] as? String,
                let content = item["content"] as? [[String: Any]], !content.isEmpty
            else { return error(.invalid("item", "Invalid item: a message needs a role and content.")) }
            let allowed: Set<String> =
                switch role {
                case "user": ["input_text", "input_audio", "input_image"]
                case "assistant": ["output_text", "output_audio"]
                case "system": ["input_text"]
                default: []
                }
            for (k, part) in content.enumerated() where !allowed.contains(part["type"] as? String ?? "") {
                return error(
                    .invalid(
                        "item.content[\(k)].type",
                        "Invalid value: '\(part["type"] as? String ?? "")'. A \(role) message takes "
                            + allowed.sorted().joined(separator: ", ") + "."))
            }
            let id = item["id"] as? String ?? r.sessions[i].itemID()
            r.sessions[i].items.insert(id)
            var added = item
            added["id"] = id
            added["status"] = "completed"
            return (r.sessions[i].itemAddedAndDone(added), nil)
        case "conversation.item.delete":
            let id = object["item_id"] as? String ?? ""
            guard r.sessions[i].items.remove(id) != nil else {
                return error(.invalid("item_id", "Conversation item with id '\(id)' not found."))
            }
            r.sessions[i].assistantAudioMs[id] = nil
            return ([["type": "conversation.item.deleted", "event_id": r.sessions[i].eventID(), "item_id": id]], nil)
        case "conversation.item.truncate":
            let id = object["item_id"] as? String ?? ""
            let end = object["audio_end_ms"] as? Int ?? -1
            guard r.sessions[i].items.contains(id) else {
                return error(.invalid("item_id", "Conversation item with id '\(id)' not found."))
            }
            guard let audioMs = r.sessions[i].assistantAudioMs[id] else {
                return error(.invalid("item_id", "Only model output audio messages can be truncated"))
            }
            guard end >= 0, end <= audioMs else {
                return error(.invalid("audio_end_ms", "Audio content of \(audioMs)ms is already shorter than \(end)ms"))
            }
            r.sessions[i].assistantAudioMs[id] = end
            return (
                [
                    [
                        "type": "conversation.item.truncated", "event_id": r.sessions[i].eventID(), "item_id": id,
                        "content_index": object["content_index"] as? Int ?? 0, "audio_end_ms": end,
                    ]
                ],
                nil
            )
        case "response.create":
            if let active = r.sessions[i].active { return error(.alreadyActive(active.id)) }
            r.nextResponse += 1
            let response = FakeRealtimeResponse(id: "resp_\(r.nextResponse)")
            var out: [[String: Any]] = [Self.responseCreated(response, r.sessions[i].eventID())]
            if !r.failures.isEmpty {
                let code = r.failures.removeFirst()
                _ = response.finish()
                out.append(Self.responseDone(response, "failed", r.sessions[i].eventID(), failure: code))
                out.append(Self.rateLimits(r.sessions[i].eventID(), exhausted: code == "rate_limit_exceeded"))
                return (out, nil)
            }
            r.sessions[i].active = response
            return (out, autoReply != nil && response.beginStreaming() ? response : nil)
        case "response.cancel":
            guard let active = r.sessions[i].active else { return error(.cancelNotActive) }
            active.cancel(reason: "client_cancelled")
            guard !active.isStreaming, active.finish() else { return ([], nil) }
            r.sessions[i].active = nil
            return ([Self.responseDone(active, "cancelled", r.sessions[i].eventID())], nil)
        default:
            return error(.unknownEvent(type))
        }
    }
}

extension FakeRealtimeServer {
    /// A transcription session's turn committed: `input_audio_buffer.committed`, the user item
    /// (`conversation.item.added`), then its transcription (a delta, then `completed`), as the
    /// service sends them.
    fileprivate func transcribed(
        _ turn: FakeServerVAD.Turn, session i: Int, _ r: inout Record
    ) -> [[String: Any]] {
        let text = transcribe(turn.samples)
        let item: [String: Any] = [
            "id": turn.itemID, "type": "message", "role": "user", "status": "completed",
            "content": [["type": "input_audio", "transcript": NSNull()]],
        ]
        r.sessions[i].items.insert(turn.itemID)
        return [
            [
                "type": "input_audio_buffer.committed", "event_id": r.sessions[i].eventID(), "item_id": turn.itemID,
                "previous_item_id": NSNull(),
            ],
            [
                "type": "conversation.item.added", "event_id": r.sessions[i].eventID(), "previous_item_id": NSNull(),
                "item": item,
            ],
            [
                "type": "conversation.item.input_audio_transcription.delta", "event_id": r.sessions[i].eventID(),
                "item_id": turn.itemID, "content_index": 0, "delta": text,
            ],
            [
                "type": "conversation.item.input_audio_transcription.completed", "event_id": r.sessions[i].eventID(),
                "item_id": turn.itemID, "content_index": 0, "transcript": text,
            ],
        ]
    }
}

/// Upgrades to refuse, by HTTP status, in order.
private final class UpgradeRefusals: Sendable {
    private let statuses = Locked<[Int]>([])
    func add(_ status: Int, count: Int) { statuses.withLock { $0 += Array(repeating: status, count: count) } }
    func next() -> Int? { statuses.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}
