import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The stand-in rejects what the service rejects about sessions and tools, over a real WebSocket.
@Suite(.serialized) struct FakeRealtimeToolsTests {
    private func update(_ session: [String: Any], on probe: RealtimeProbe, count: Int) -> [String: Any]? {
        var s = session
        s["type"] = "realtime"
        probe.send(["type": "session.update", "event_id": "u\(count)", "session": s])
        _ = waitUntil { probe.events("error").count + probe.events("session.updated").count >= count }
        return probe.events("error").last.flatMap {
            ($0["error"] as? [String: Any])?["event_id"] as? String == "u\(count)" ? $0 : nil
        }
    }

    @Test func betaFieldsUnknownFieldsAndBadToolsAreRefused() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        _ = probe.next("session.created")
        var n = 0
        func refused(_ session: [String: Any]) -> String? {
            n += 1
            return (update(session, on: probe, count: n)?["error"] as? [String: Any])?["message"] as? String
        }
        #expect(refused(["voice": "marin"])?.contains("Unknown parameter: 'session.voice'") == true)
        #expect(refused(["modalities": ["audio", "text"]])?.contains("session.modalities") == true)
        #expect(refused(["input_audio_format": "pcm16"])?.contains("session.input_audio_format") == true)
        #expect(refused(["tools": [["type": "function", "name": "mute track"]]])?.contains("must match") == true)
        #expect(
            refused(["tools": [["type": "function", "name": "t", "parameters": ["type": "string"]]]])?
                .contains("JSON Schema") == true)
        #expect(refused(["tools": [["type": "function", "name": "t"], ["type": "function", "name": "t"]]]) != nil)
        #expect(refused(["tool_choice": "sometimes"]) != nil)
        let tools = RealtimeSessionSettings(instructions: "x").withTools()
        #expect(refused(tools) == nil, "the agent's own session.update with tools is taken")
        #expect(server.events(ofType: "session.update").count == n)
    }

    @Test func aFunctionCallIsAnsweredOnlyWithItsCallID() throws {
        let server = try FakeRealtimeServer()
        defer { server.stop() }
        let probe = try RealtimeProbe(server)
        _ = probe.next("session.created")
        #expect(update(RealtimeSessionSettings().withTools(), on: probe, count: 1) == nil)
        #expect(!server.functionCall(name: "no_such_tool", arguments: "{}", callID: "call_0"), "not a session tool")
        #expect(server.functionCall(name: "mute_track", arguments: #"{"name":"bob"}"#, callID: "call_1"))
        let done = try #require(probe.next("response.output_item.done"))
        let item = try #require(done["item"] as? [String: Any])
        #expect(item["type"] as? String == "function_call" && item["call_id"] as? String == "call_1")
        #expect(item["arguments"] as? String == #"{"name":"bob"}"#)
        let responseDone = try #require(probe.next("response.done"))
        #expect(((responseDone["response"] as? [String: Any])?["output"] as? [[String: Any]])?.count == 1)
        probe.send([
            "type": "conversation.item.create", "event_id": "o1",
            "item": ["type": "function_call_output", "call_id": "call_9", "output": "{}"],
        ])
        let wrong = try #require(probe.next("error"))
        #expect(((wrong["error"] as? [String: Any])?["message"] as? String)?.contains("call_9") == true)
        probe.send([
            "type": "conversation.item.create", "event_id": "o2",
            "item": ["type": "function_call_output", "call_id": "call_1", "output": #"{"ok":true}"#],
        ])
        #expect(probe.next("conversation.item.added") != nil)
        probe.send(["type": "response.create", "event_id": "c1"])
        #expect(probe.next("response.created") != nil)
    }
}

extension RealtimeSessionSettings {
    /// The `session` object the agent sends, with one `mute_track` tool.
    func withTools() -> [String: Any] {
        var settings = self
        settings.tools = [
            RealtimeTool(
                name: "mute_track", description: "Mute a track.",
                parameters: .object([
                    "type": .string("object"),
                    "properties": .object(["name": .object(["type": .string("string")])]),
                ]))
        ]
        let text = RealtimeClientEvent.sessionUpdate(settings).json()
        let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        return object?["session"] as? [String: Any] ?? [:]
    }
}
