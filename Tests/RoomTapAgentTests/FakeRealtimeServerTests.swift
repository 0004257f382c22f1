import Foundation
import RoomTapAgentTestSupport
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebSocket
import Testing

/// A plain WebSocket client speaking to the stand-in as the agent does: every server event kept.
final class RealtimeProbe: Sendable {
    private final class Inbox: Sendable {
        let received = Locked<[String]>([])
        let closed = Locked<(Int, String)?>(nil)
    }
    let client: WebSocketClient
    private let inbox = Inbox()

    init(_ server: FakeRealtimeServer, headers: [WebSocketHeader] = [], url: String? = nil) throws {
        let inbox = self.inbox
        client = WebSocketClient(
            configuration: WebSocketConfiguration(url: url ?? server.url, headers: headers)
        ) { event in
            switch event {
            case .text(let text): inbox.received.withLock { $0.append(text) }
            case .binary: break
            case .closed(let code, let reason): inbox.closed.withLock { $0 = (Int(code), reason) }
            }
        }
        let before = server.connectionCount
        try client.connect()
        // The server registers the connection on its own thread after the 101 goes out: a reply
        // asked for before that would go nowhere.
        _ = waitUntil { server.connectionCount > before }
    }

    /// Sends `object` as one JSON text message.
    func send(_ object: [String: Any]) {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        client.send(text: String(decoding: data, as: UTF8.self))
    }

    var events: [[String: Any]] {
        inbox.received.snapshot(\.self).map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
    }
    func events(_ type: String) -> [[String: Any]] { events.filter { $0["type"] as? String == type } }
    var types: [String] { events.compactMap { $0["type"] as? String } }
    var closeCode: Int? { inbox.closed.withLock { $0?.0 } }
    var closeReason: String? { inbox.closed.withLock { $0?.1 } }

    /// Waits for the `count`-th event of `type` and returns it.
    @discardableResult
    func next(_ type: String, count: Int = 1, timeout: Duration = .seconds(30)) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitUntil(timeout: timeout) {
            let list = events(type)
            found = list.count >= count ? list[count - 1] : nil
            return found != nil
        }
        return found
    }

    /// The `error` answering the client event `eventID`.
    func error(for eventID: String, timeout: Duration = .seconds(30)) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitUntil(timeout: timeout) {
            found = events("error").compactMap { $0["error"] as? [String: Any] }.first {
                $0["event_id"] as? String == eventID
            }
            return found != nil
        }
        return found
    }

    func close() {
        client.close()
        _ = client.waitUntilClosed(timeout: .seconds(30))
    }
}

/// The stand-in answers like the Realtime service, proved over a real WebSocket: each reply the
/// agent's fixes depend on.
@Suite struct FakeRealtimeServerTests {
    static var update: [String: Any] {
        [
            "type": "session.update", "event_id": "evt_update",
            "session": [
                "type": "realtime", "output_modalities": ["audio"],
                "audio": [
                    "input": ["format": ["type": "audio/pcm", "rate": 24_000]],
                    "output": ["format": ["type": "audio/pcm", "rate": 24_000], "voice": "cedar"],
                ],
            ] as [String: Any],
        ]
    }

    @Test func aSessionStartsWithSessionCreatedAndAGoodUpdateIsAnswered() throws {
        let server = try FakeRealtimeServer(maxSessionDuration: .seconds(600))
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        let created = try #require(probe.next("session.created"))
        let session = try #require(created["session"] as? [String: Any])
        #expect(session["type"] as? String == "realtime")
        let expires = try #require(session["expires_at"] as? Int)
        #expect(abs(Double(expires) - Date().timeIntervalSince1970 - 600) < 5)
        probe.send(Self.update)
        let updated = try #require(probe.next("session.updated"))
        let audio = (updated["session"] as? [String: Any])?["audio"] as? [String: Any]
        #expect((audio?["output"] as? [String: Any])?["voice"] as? String == "cedar")
        probe.close()
    }

    @Test func cancelWithNoActiveResponseIsRefused() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        probe.send(["type": "response.cancel", "event_id": "evt_c1"])
        let error = try #require(probe.error(for: "evt_c1"))
        #expect(error["code"] as? String == "response_cancel_not_active")
        probe.close()
    }

    @Test func aSecondCreateWhileOneIsActiveIsRefusedAndAllowedAfterDone() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        probe.send(["type": "response.create", "event_id": "evt_r1"])
        #expect(probe.next("response.created") != nil)
        probe.send(["type": "response.create", "event_id": "evt_r2"])
        #expect(probe.error(for: "evt_r2")?["code"] as? String == "conversation_already_has_active_response")
        server.reply(pcm: sine24(frequency: 400, count: 2_400), transcript: "Hi.")
        let done = try #require(probe.next("response.done"))
        #expect((done["response"] as? [String: Any])?["status"] as? String == "completed")
        #expect(probe.events("response.created").count == 1, "the reply is the response asked for")
        probe.send(["type": "response.create", "event_id": "evt_r3"])
        #expect(probe.next("response.created", count: 2) != nil)
        #expect(probe.events("error").count == 1)
        probe.close()
    }

    @Test func aReplyCarriesTheServiceEventSequence() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        #expect(probe.next("session.created") != nil)
        server.reply(pcm: sine24(frequency: 400, count: 4_800), itemID: "item_a", transcript: "Two words.")
        #expect(probe.next("rate_limits.updated") != nil)
        let sequence = probe.types.filter { $0 != "session.created" && !$0.hasSuffix(".delta") }
        #expect(
            sequence == [
                "response.created", "response.output_item.added", "conversation.item.added",
                "response.content_part.added", "response.output_audio.done", "response.output_audio_transcript.done",
                "response.content_part.done", "response.output_item.done", "conversation.item.done", "response.done",
                "rate_limits.updated",
            ])
        #expect(probe.events("response.output_audio.delta").count == 2)
        probe.close()
    }

    @Test func truncateIsCheckedAgainstTheItemsAudio() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        server.reply(pcm: sine24(frequency: 400, count: 12_000), itemID: "item_a", transcript: "Half a second.")
        #expect(probe.next("response.done") != nil)
        probe.send([
            "type": "conversation.item.truncate", "event_id": "evt_t1", "item_id": "item_nope", "content_index": 0,
            "audio_end_ms": 100,
        ])
        #expect(probe.error(for: "evt_t1")?["param"] as? String == "item_id")
        probe.send([
            "type": "conversation.item.truncate", "event_id": "evt_t2", "item_id": "item_a", "content_index": 0,
            "audio_end_ms": 501,
        ])
        let late = try #require(probe.error(for: "evt_t2"))
        #expect(late["param"] as? String == "audio_end_ms")
        #expect((late["message"] as? String)?.contains("500ms") == true)
        probe.send([
            "type": "conversation.item.create", "event_id": "evt_u",
            "item": [
                "id": "item_user", "type": "message", "role": "user",
                "content": [["type": "input_text", "text": "hi"]],
            ] as [String: Any],
        ])
        #expect(probe.next("conversation.item.done") != nil)
        probe.send([
            "type": "conversation.item.truncate", "event_id": "evt_t3", "item_id": "item_user", "content_index": 0,
            "audio_end_ms": 0,
        ])
        #expect(probe.error(for: "evt_t3") != nil, "only assistant audio can be truncated")
        probe.send([
            "type": "conversation.item.truncate", "event_id": "evt_t4", "item_id": "item_a", "content_index": 0,
            "audio_end_ms": 300,
        ])
        let truncated = try #require(probe.next("conversation.item.truncated"))
        #expect(truncated["item_id"] as? String == "item_a")
        #expect(truncated["audio_end_ms"] as? Int == 300)
        #expect(probe.events("error").count == 3)
        probe.close()
    }

    @Test func speechDuringAReplyCancelsItOnTheServerWithTheFullTranscript() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        let words = (1...20).map { "w\($0)" }.joined(separator: " ")
        server.reply(pcm: sine24(frequency: 400, count: 48_000), itemID: "item_a", transcript: words, paced: true)
        #expect(probe.next("response.output_audio.delta", count: 2) != nil)
        server.speechStarted(audioStartMs: 100, itemID: "item_u")
        let done = try #require(probe.next("response.done"))
        let response = try #require(done["response"] as? [String: Any])
        #expect(response["status"] as? String == "cancelled")
        #expect((response["status_details"] as? [String: Any])?["reason"] as? String == "turn_detected")
        #expect(probe.events("response.output_audio.delta").count < 20, "stopped early")
        #expect(probe.next("response.output_audio.done") != nil)
        #expect(probe.next("response.output_audio_transcript.done")?["transcript"] as? String == words)
        let order = probe.types.filter {
            ["input_audio_buffer.speech_started", "response.output_audio.done", "response.done"].contains($0)
        }
        #expect(order == ["input_audio_buffer.speech_started", "response.output_audio.done", "response.done"])
        probe.send(["type": "response.cancel", "event_id": "evt_late"])
        #expect(probe.error(for: "evt_late")?["code"] as? String == "response_cancel_not_active")
        probe.close()
    }

    @Test func withInterruptResponseOffSpeechDoesNotCancel() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        probe.send([
            "type": "session.update", "event_id": "evt_u",
            "session": [
                "type": "realtime",
                "audio": ["input": ["turn_detection": ["type": "server_vad", "interrupt_response": false]]],
            ] as [String: Any],
        ])
        #expect(probe.next("session.updated") != nil)
        server.reply(pcm: sine24(frequency: 400, count: 24_000), transcript: "still talking", chunkMs: 100, paced: true)
        #expect(probe.next("response.output_audio.delta") != nil)
        server.speechStarted(audioStartMs: 0, itemID: "item_u")
        let done = try #require(probe.next("response.done"))
        #expect((done["response"] as? [String: Any])?["status"] as? String == "completed")
        probe.close()
    }

    @Test(arguments: [
        ("no type", #"{"voice":"x"}"#, "missing_required_parameter"),
        ("bad format", #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/wav"}}}}"#, "invalid_value"),
        (
            "bad rate", #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcm","rate":16000}}}}"#,
            "invalid_value"
        ),
        ("bad voice", #"{"type":"realtime","audio":{"output":{"voice":"robot"}}}"#, "invalid_value"),
        ("other model", #"{"type":"realtime","model":"gpt-realtime-mini"}"#, "invalid_value"),
    ])
    func aBadSessionUpdateIsAnErrorAndChangesNothing(name: String, sessionJSON: String, code: String) throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        let session = try #require(try JSONSerialization.jsonObject(with: Data(sessionJSON.utf8)) as? [String: Any])
        var bad: [String: Any] = ["type": "session.update", "event_id": "evt_bad", "session": session]
        if var s = bad["session"] as? [String: Any] {
            s["instructions"] = "changed"
            bad["session"] = s
        }
        probe.send(bad)
        #expect(probe.error(for: "evt_bad")?["code"] as? String == code, "\(name)")
        probe.send(["type": "session.update", "event_id": "evt_ok", "session": ["type": "realtime"]])
        let updated = try #require(probe.next("session.updated"))
        let effective = try #require(updated["session"] as? [String: Any])
        #expect(effective["instructions"] as? String == "", "\(name): the session is unchanged")
        #expect(probe.events("session.updated").count == 1)
        probe.close()
    }

    @Test func theVoiceCannotChangeAfterTheModelSpoke() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        probe.send(Self.update)
        #expect(probe.next("session.updated") != nil)
        server.reply(pcm: sine24(frequency: 400, count: 2_400))
        #expect(probe.next("response.done") != nil)
        probe.send([
            "type": "session.update", "event_id": "evt_voice",
            "session": ["type": "realtime", "audio": ["output": ["voice": "alloy"]]] as [String: Any],
        ])
        #expect(probe.error(for: "evt_voice")?["code"] as? String == "cannot_update_voice")
        probe.send(Self.update)
        #expect(probe.next("session.updated", count: 2) != nil, "the same voice again is fine")
        probe.close()
    }

    @Test func theBetaHeaderIsRefusedWithClose4000() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server, headers: [WebSocketHeader(name: "OpenAI-Beta", value: "realtime=v1")])
        #expect(
            probe.next("error")?["error"].flatMap { ($0 as? [String: Any])?["code"] as? String }
                == "beta_api_shape_disabled")
        #expect(waitUntil { probe.closeCode == 4000 })
        #expect(probe.events("session.created").isEmpty)
    }

    @Test(arguments: [true, false])
    func aSessionExpiresAtItsMaximumDuration(withError: Bool) throws {
        let server = try FakeRealtimeServer(maxSessionDuration: .milliseconds(400), sendsExpiryError: withError)
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        #expect(waitUntil { probe.closeCode != nil })
        #expect(probe.closeCode == 1001)
        #expect(probe.closeReason == "maximum duration")
        let codes = probe.events("error").compactMap { ($0["error"] as? [String: Any])?["code"] as? String }
        #expect(codes == (withError ? ["session_expired"] : []))
    }

    @Test(arguments: ["insufficient_quota", "rate_limit_exceeded"])
    func quotaAndRateFailuresArriveAsAFailedResponse(code: String) throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        server.failNextResponses(code: code)
        let probe = try RealtimeProbe(server)
        probe.send(["type": "response.create", "event_id": "evt_r"])
        let done = try #require(probe.next("response.done"))
        let response = try #require(done["response"] as? [String: Any])
        #expect(response["status"] as? String == "failed")
        let details = try #require(response["status_details"] as? [String: Any])
        #expect((details["error"] as? [String: Any])?["code"] as? String == code)
        #expect(probe.next("rate_limits.updated") != nil)
        probe.send(["type": "response.create", "event_id": "evt_r2"])
        #expect(probe.next("response.created", count: 2) != nil, "nothing stays active after a failure")
        #expect(probe.events("error").isEmpty)
        probe.close()
    }

    @Test(arguments: [400, 404, 429, 500])
    func upgradesAreRefusedOnDemand(status: Int) throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        server.refuseNextUpgrades(status: status)
        #expect(throws: WebSocketError.self) { _ = try RealtimeProbe(server) }
        let probe = try RealtimeProbe(server)
        #expect(probe.next("session.created") != nil, "the next upgrade goes through")
        probe.close()
    }

    @Test func conversationItemsAreAddedAndBadContentIsRefused() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        probe.send([
            "type": "conversation.item.create", "event_id": "evt_sys",
            "item": [
                "type": "message", "role": "system", "content": [["type": "input_text", "text": "earlier: soup"]],
            ] as [String: Any],
        ])
        #expect(probe.next("conversation.item.added") != nil)
        #expect(probe.next("conversation.item.done") != nil)
        probe.send([
            "type": "conversation.item.create", "event_id": "evt_bad",
            "item": [
                "type": "message", "role": "system", "content": [["type": "output_text", "text": "nope"]],
            ] as [String: Any],
        ])
        #expect(probe.error(for: "evt_bad")?["code"] as? String == "invalid_value")
        probe.close()
    }
}
