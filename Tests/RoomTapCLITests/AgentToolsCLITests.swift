import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import Testing

/// The agent's built-in room tools through the real CLI: the stand-in's model calls a function,
/// roomtap acts on the room exactly as `roomtap mute NAME` would and answers the call.
@Suite("CLI: the agent's room tools", .serialized)
struct AgentToolsCLITests {
    static let key = "sk-test-TOOLS-0123456789"

    private func output(of callID: String, _ server: FakeRealtimeServer) -> [String: Any]? {
        for event in server.events(ofType: "conversation.item.create") {
            guard let item = event.object["item"] as? [String: Any], item["type"] as? String == "function_call_output",
                item["call_id"] as? String == callID, let text = item["output"] as? String
            else { continue }
            return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        }
        return nil
    }

    /// The model's turn after a tool's output: the `count`-th `response.create` is answered
    /// (with silence, so the mix stays what the humans make it) and done.
    private func answerFollowUp(_ count: Int, _ server: FakeRealtimeServer) {
        #expect(server.wait(timeout: .seconds(20)) { $0.events(ofType: "response.create").count >= count })
        server.reply(pcm: [Int16](repeating: 0, count: 2_400), itemID: "item_after_\(count)")
        #expect(server.wait(timeout: .seconds(20)) { !$0.hasActiveResponse() })
    }

    @Test func muteTrackMutesTheTrackWithinATickAndAnswersTheCall() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let env = ["OPENAI_API_KEY": Self.key, "ROOMTAP_CONTROL": uniqueControlPath()]
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "bob=\(sample("bob"))", "--realtime", "--duration", "5", "--mix", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: env)
        #expect(server.wait(timeout: .seconds(20)) { $0.audio().count > 36_000 }, "1.5 s heard")
        let session = try #require(server.events(ofType: "session.update").first?.object["session"] as? [String: Any])
        let tools = (session["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(tools) == ["mute_track", "unmute_track", "set_volume", "list_tracks", "leave_room"])
        #expect(server.events(ofType: "error").isEmpty)

        let client = try ControlClient(path: env["ROOMTAP_CONTROL"]!)
        let sentAt = try #require(try client.request("status")["room_time"]?.doubleValue)
        #expect(server.functionCall(name: "mute_track", arguments: #"{"name":"bob"}"#, callID: "call_mute"))
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_mute", $0) != nil })
        let muted = try #require(output(of: "call_mute", server))
        #expect(muted["ok"] as? Bool == true && muted["muted"] as? Bool == true, "\(muted)")
        // Then the model is asked to go on (one response.create after the output).
        answerFollowUp(1, server)
        let types = server.events.map(\.type).filter { $0 != "input_audio_buffer.append" }
        let outputAt = try #require(types.firstIndex(of: "conversation.item.create"))
        #expect(types.lastIndex(of: "response.create").map { $0 > outputAt } == true, "\(types)")

        // An unknown track: an error result, the session goes on.
        #expect(
            server.wait(timeout: .seconds(20)) {
                $0.functionCall(name: "mute_track", arguments: #"{"name":"zed"}"#, callID: "call_zed")
            })
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_zed", $0) != nil })
        let unknown = try #require(output(of: "call_zed", server))
        #expect(unknown["ok"] as? Bool == false)
        #expect((unknown["error"] as? String)?.contains("no track named 'zed'") == true, "\(unknown)")
        answerFollowUp(2, server)
        #expect(
            server.wait(timeout: .seconds(20)) {
                $0.functionCall(name: "list_tracks", arguments: "{}", callID: "call_list")
            })
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_list", $0) != nil })
        let list = try #require(output(of: "call_list", server)?["tracks"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == ["bob"], "the humans only: \(list)")
        #expect(list.first?["muted"] as? Bool == true && list.first?["talking"] is Bool)

        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(server.events(ofType: "error").isEmpty, "the stand-in took every answer")

        // room.json: the change, made by the agent, at the room time it took effect.
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
            as? [String: Any]
        let controls = report?["controls"] as? [[String: Any]] ?? []
        let change = try #require(controls.first { $0["change"] as? String == "mute" })
        #expect(change["track"] as? String == "bob" && change["by"] as? String == "agent", "\(controls)")
        let at = try #require(change["roomTime"] as? Double)
        print("mute_track: sent at room time \(sentAt) s, in effect at \(at) s (\(Int((at - sentAt) * 1000)) ms)")
        #expect(at >= sentAt && at < sentAt + 0.5, "the call was sent at room time \(sentAt) s, took effect at \(at)")
        let stats = (report?["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect(stats?["toolCalls"] as? Int == 3 && stats?["toolErrors"] as? Int == 1, "\(stats ?? [:])")

        // The mix: bob until the call, silent from one tick after it (the ramp's frame) to the end;
        // bob's own file keeps him (the default scope, as `roomtap mute bob`).
        let mix = try WAVFile.readSamples(path: out.appendingPathComponent("mix.wav").path).1
        let bob = try WAVFile.readSamples(path: out.appendingPathComponent("bob.wav").path).1
        let from = Int((at * 48_000).rounded()) + 480
        #expect(mix.count == 240_000 && from < mix.count)
        #expect(mix[from...].allSatisfy { $0 == 0 }, "silent from \(Double(from) / 48_000) s")
        #expect(mix[..<Int(at * 48_000)].contains { abs($0) > 500 }, "bob is in the mix before")
        #expect(bob[from...].contains { abs($0) > 500 }, "bob's own file keeps him")
        #expect(!outcome.stderr.contains(Self.key))
    }

    /// `set_volume` and `unmute_track` act as `roomtap volume` and `roomtap unmute` do: the
    /// track's state changes (read back over the control socket), the changes are in room.json
    /// `controls` by the agent, and a volume out of 0...10 or without a number is an error result.
    @Test func setVolumeAndUnmuteTrackActAsTheVerbsDo() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let control = uniqueControlPath()
        let env = ["OPENAI_API_KEY": Self.key, "ROOMTAP_CONTROL": control]
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "bob=\(sample("bob"))", "--file", "later=\(sample("alice"))@300", "--realtime",
                "--agent", "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        #expect(server.wait(timeout: .seconds(20)) { $0.audio().count > 12_000 })
        let client = try ControlClient(path: control)
        func bob() throws -> JSONValue? {
            try client.request("tracks")["tracks"]?.arrayValue?.first { $0["name"]?.stringValue == "bob" }
        }
        var answered = 0
        func call(_ name: String, _ arguments: String, _ id: String) throws -> [String: Any] {
            #expect(
                server.wait(timeout: .seconds(20)) {
                    $0.functionCall(name: name, arguments: arguments, callID: id)
                })
            #expect(server.wait(timeout: .seconds(20)) { self.output(of: id, $0) != nil })
            answered += 1
            answerFollowUp(answered, server)
            return try #require(output(of: id, server))
        }
        let half = try call("set_volume", #"{"name":"bob","volume":0.5}"#, "call_half")
        #expect(half["ok"] as? Bool == true && half["volume"] as? Double == 0.5, "\(half)")
        #expect(try bob()?["volume"]?.doubleValue == 0.5)
        let loud = try call("set_volume", #"{"name":"bob","volume":11}"#, "call_loud")
        #expect(loud["ok"] as? Bool == false, "11 is out of 0...10: \(loud)")
        let none = try call("set_volume", #"{"name":"bob"}"#, "call_none")
        #expect((none["error"] as? String)?.contains("set_volume needs \"volume\"") == true, "\(none)")
        #expect(try bob()?["volume"]?.doubleValue == 0.5, "refused calls change nothing")
        _ = try call("mute_track", #"{"name":"bob"}"#, "call_mute")
        #expect(try bob()?["muted"]?.boolValue == true)
        let unmuted = try call("unmute_track", #"{"name":"bob"}"#, "call_unmute")
        #expect(unmuted["ok"] as? Bool == true && unmuted["muted"] as? Bool == false, "\(unmuted)")
        #expect(try bob()?["muted"]?.boolValue == false)
        #expect(try CLIRunner.run(["stop", "--control", control], timeout: 60).status == 0)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
            as? [String: Any]
        let byAgent = (report?["controls"] as? [[String: Any]] ?? []).filter { $0["by"] as? String == "agent" }
        #expect(byAgent.compactMap { $0["change"] as? String } == ["volume", "mute", "unmute"], "\(byAgent)")
        #expect(byAgent.allSatisfy { $0["track"] as? String == "bob" })
        let stats = (report?["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect(stats?["toolCalls"] as? Int == 5 && stats?["toolErrors"] as? Int == 2, "\(stats ?? [:])")
    }

    @Test func leaveRoomEndsTheAgentAndTheRecordingGoesOn() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let env = ["OPENAI_API_KEY": Self.key, "ROOMTAP_CONTROL": uniqueControlPath()]
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "3", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: env)
        #expect(server.wait(timeout: .seconds(20)) { $0.audio().count > 12_000 })
        #expect(server.functionCall(name: "leave_room", arguments: "{}", callID: "call_leave"))
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_leave", $0)?["ok"] as? Bool == true })
        #expect(server.wait(timeout: .seconds(20)) { $0.connections.first?.closeFrame?.code == 1000 }, "it left")
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.contains("left the room"), "\(outcome.stderr)")
        #expect(try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1.count == 144_000)
        #expect(server.connectionCount == 1, "no reconnect after leaving")
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
            as? [String: Any]
        let stats = (report?["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect(stats?["state"] as? String == "stopped")
    }
}

/// `--agent-tools FILE`: the user's own tools run as commands; failures and timeouts are error
/// results that never stall the session.
@Suite("CLI: the agent's user tools", .serialized)
struct AgentUserToolsCLITests {
    private func output(of callID: String, _ server: FakeRealtimeServer) -> String? {
        for event in server.events(ofType: "conversation.item.create") {
            guard let item = event.object["item"] as? [String: Any], item["type"] as? String == "function_call_output",
                item["call_id"] as? String == callID
            else { continue }
            return item["output"] as? String
        }
        return nil
    }

    @Test func aUserToolRunsWithTheArgumentsAndItsOutputReachesTheServer() throws {
        // Every response.create after a tool's output is answered (with 0.1 s of silence).
        let server = try FakeRealtimeServer(
            expectedKey: AgentToolsCLITests.key, autoReply: [Int16](repeating: 0, count: 2_400))
        defer { server.stop() }
        let out = try temporaryDirectory()
        let file = out.appendingPathComponent("tools.json")
        let tools: [[String: Any]] = [
            [
                "name": "lookup_menu", "description": "The dish of the day.",
                "parameters": ["type": "object", "properties": ["day": ["type": "string"]]],
                // stdin is the arguments; stdout the result.
                "command": ["/bin/sh", "-c", #"read args; printf '{"dish":"soup","asked":%s}' "$args""#],
                "timeout_s": 5,
            ],
            ["name": "slow", "description": "Never answers.", "command": ["sleep", "30"], "timeout_s": 2],
            ["name": "broken", "description": "Fails.", "command": ["/bin/sh", "-c", "echo boom >&2; exit 3"]],
        ]
        try JSONSerialization.data(withJSONObject: tools).write(to: file)
        let env = ["OPENAI_API_KEY": AgentToolsCLITests.key, "ROOMTAP_CONTROL": uniqueControlPath()]
        let room = out.appendingPathComponent("room")
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "6", "--agent",
                "--agent-url", server.url, "--agent-tools", file.path, "--out", room.path, "--quiet",
            ], environment: env)
        #expect(server.wait(timeout: .seconds(20)) { $0.audio().count > 12_000 })
        let session = try #require(server.events(ofType: "session.update").first?.object["session"] as? [String: Any])
        let names = (session["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.contains("lookup_menu") && names.contains("slow") && names.contains("mute_track"), "\(names)")

        // A slow tool first: while it runs the session goes on (audio flows, another call is answered).
        #expect(server.functionCall(name: "slow", arguments: "{}", callID: "call_slow"))
        let appendsBefore = server.events(ofType: "input_audio_buffer.append").count
        #expect(
            server.wait(timeout: .seconds(20)) {
                $0.functionCall(name: "lookup_menu", arguments: #"{"day":"monday"}"#, callID: "call_menu")
            })
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_menu", $0) != nil })
        let menu = try #require(output(of: "call_menu", server))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(menu.utf8)) as? [String: Any])
        #expect(parsed["dish"] as? String == "soup")
        #expect((parsed["asked"] as? [String: Any])?["day"] as? String == "monday", "the arguments on stdin: \(menu)")
        #expect(output(of: "call_slow", server) == nil, "answered while the slow one still runs")
        // 2 s of the slow tool: audio keeps flowing to the session meanwhile (40 ms chunks).
        #expect(
            server.wait(timeout: .seconds(20)) {
                $0.events(ofType: "input_audio_buffer.append").count > appendsBefore + 5
            }, "audio kept flowing")
        let slowStillRunning = output(of: "call_slow", server) == nil
        #expect(slowStillRunning, "the session went on while the slow tool ran")
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_slow", $0) != nil })
        #expect(output(of: "call_slow", server)?.contains("timed out after 2 s") == true)
        #expect(
            server.wait(timeout: .seconds(20)) {
                $0.functionCall(name: "broken", arguments: "{}", callID: "call_broken")
            })
        #expect(server.wait(timeout: .seconds(20)) { self.output(of: "call_broken", $0) != nil })
        let broken = try #require(output(of: "call_broken", server))
        #expect(broken.contains("status 3") && broken.contains("boom"), "\(broken)")
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(server.events(ofType: "error").isEmpty, "\(server.events(ofType: "error").map(\.json))")
    }

    @Test func aBadToolsFileIsOneLine() throws {
        let out = try temporaryDirectory()
        let file = out.appendingPathComponent("tools.json")
        try #"[{"name":"ok_tool","command":["true"]},{"name":"no command","command":[]}]"#.write(
            to: file, atomically: true, encoding: .utf8)
        let room = out.appendingPathComponent("room")
        let bad = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-tools", file.path, "--out",
                room.path,
            ],
            environment: ["OPENAI_API_KEY": AgentToolsCLITests.key, "ROOMTAP_CONTROL": uniqueControlPath()], timeout: 30
        )
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("tool 2") && bad.stderr.contains("name"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: room.path))
        try #"[{"name":"mute_track","command":["true"]}]"#.write(to: file, atomically: true, encoding: .utf8)
        let taken = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-tools", file.path, "--out",
                room.path,
            ],
            environment: ["OPENAI_API_KEY": AgentToolsCLITests.key, "ROOMTAP_CONTROL": uniqueControlPath()], timeout: 30
        )
        #expect(taken.status == 64 && taken.stderr.contains("is taken"), "\(taken.stderr)")
    }
}
