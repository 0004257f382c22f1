import Foundation
import RoomTapAgent
import Testing

/// Function calling in the GA shapes: tools in `session.update`, a `function_call` item decoded
/// from each event that carries it, the `function_call_output` item.
@Suite struct FunctionCallEventTests {
    @Test func toolsGoInTheSessionUpdateAndOnlyWhenThereAreSome() throws {
        var settings = RealtimeSessionSettings()
        let plain = RealtimeClientEvent.sessionUpdate(settings).json()
        #expect(!plain.contains("tools") && !plain.contains("tool_choice"))
        settings.tools = [
            RealtimeTool(
                name: "mute_track", description: "Mute a track.",
                parameters: .object([
                    "type": .string("object"), "properties": .object(["name": .object(["type": .string("string")])]),
                    "required": .array([.string("name")]),
                ]))
        ]
        let o = try #require(
            try JSONSerialization.jsonObject(with: Data(RealtimeClientEvent.sessionUpdate(settings).json().utf8))
                as? [String: Any])
        let session = try #require(o["session"] as? [String: Any])
        #expect(session["tool_choice"] as? String == "auto")
        let tool = try #require((session["tools"] as? [[String: Any]])?.first)
        #expect(tool["type"] as? String == "function" && tool["name"] as? String == "mute_track")
        #expect((tool["parameters"] as? [String: Any])?["required"] as? [String] == ["name"])
        #expect(RealtimeTool.isValidName("set_volume-2") && !RealtimeTool.isValidName("mute track"))
        #expect(!RealtimeTool.isValidName(String(repeating: "a", count: 65)) && !RealtimeTool.isValidName(""))
    }

    @Test func aFunctionCallDecodesFromEachEventThatCarriesIt() {
        let call = RealtimeFunctionCall(callID: "call_1", name: "mute_track", arguments: #"{"name":"bob"}"#)
        let item =
            #"{"id":"i1","type":"function_call","status":"completed","call_id":"call_1","name":"mute_track","arguments":"{\"name\":\"bob\"}"}"#
        #expect(
            RealtimeServerEvent.decode(
                #"{"type":"response.output_item.done","response_id":"r1","output_index":0,"item":\#(item)}"#)
                == .functionCall(responseID: "r1", call: call))
        #expect(
            RealtimeServerEvent.decode(
                #"{"type":"response.done","response":{"id":"r1","status":"completed","output":[\#(item),{"type":"message"}]}}"#
            )
                == .responseDone(responseID: "r1", status: "completed", statusDetails: nil, functionCalls: [call]))
        #expect(
            RealtimeServerEvent.decode(
                #"{"type":"response.function_call_arguments.done","response_id":"r1","call_id":"call_1","name":"mute_track","arguments":"{\"name\":\"bob\"}"}"#
            )
                == .functionCall(responseID: "r1", call: call))
        // Without the name (older shape) the arguments event is left to the item events.
        #expect(
            RealtimeServerEvent.decode(
                #"{"type":"response.function_call_arguments.done","call_id":"call_1","arguments":"{}"}"#)
                == .other(type: "response.function_call_arguments.done"))
        // A message item is not a call.
        #expect(
            RealtimeServerEvent.decode(#"{"type":"response.output_item.done","item":{"type":"message","id":"m"}}"#)
                == .other(type: "response.output_item.done"))
        #expect(call.argumentObject?["name"]?.stringValue == "bob")
        #expect(RealtimeFunctionCall(callID: "c", name: "n", arguments: "not json").argumentObject == nil)
        #expect(RealtimeFunctionCall(callID: "c", name: "n", arguments: "").argumentObject?.isEmpty == true)
    }

    @Test func theOutputIsAFunctionCallOutputItem() throws {
        let json = RealtimeClientEvent.functionCallOutput(callID: "call_1", output: #"{"ok":true}"#).json(
            eventID: "rt_9")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(o["type"] as? String == "conversation.item.create" && o["event_id"] as? String == "rt_9")
        let item = try #require(o["item"] as? [String: Any])
        #expect(item["type"] as? String == "function_call_output" && item["call_id"] as? String == "call_1")
        #expect(item["output"] as? String == #"{"ok":true}"#, "the output is a string, not an object")
        #expect(
            RealtimeToolResult.error("no track named 'zed'").output == #"{"error":"no track named 'zed'","ok":false}"#)
    }
}
