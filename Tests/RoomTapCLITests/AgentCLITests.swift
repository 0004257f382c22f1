import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// `roomtap record --agent` through the real CLI against a local server that speaks the Realtime
/// protocol over a real WebSocket (FakeRealtimeServer), as OpenAI would.
@Suite("CLI: the Realtime agent", .serialized)
struct AgentCLITests {
    static let key = "sk-test-DO-NOT-PRINT-0123456789"

    private func environment() -> [String: String] {
        ["OPENAI_API_KEY": Self.key, "ROOMTAP_CONTROL": uniqueControlPath()]
    }

    /// 24 kHz tone of `seconds` (the agent's "voice" in these tests).
    private func tone(_ frequency: Double, seconds: Double, amplitude: Double = 9_000) -> [Int16] {
        (0..<Int(24_000 * seconds)).map { Int16(amplitude * sin(2 * .pi * frequency * Double($0) / 24_000)) }
    }

    private func read(_ dir: URL, _ name: String) throws -> [Int16] {
        try WAVFile.readSamples(path: dir.appendingPathComponent(name).path).1
    }

    private func json(_ dir: URL, _ name: String = "room.json") throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent(name))) as? [String: Any]
            ?? [:]
    }

    @Test func theAgentHearsTheRoomMinusItselfAndItsReplyIsATrack() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let instructions = out.appendingPathComponent("critic.txt")
        try "You are a food critic who will eat anything.\n".write(to: instructions, atomically: true, encoding: .utf8)
        let env = environment()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--realtime",
                "--duration", "6", "--mix", "--agent", "--agent-url", server.url, "--agent-instructions",
                instructions.path, "--agent-voice", "cedar", "--out", out.appendingPathComponent("room").path,
            ], environment: env)
        #expect(server.wait(timeout: .seconds(10)) { !$0.events(ofType: "session.update").isEmpty })
        // Speech in the session's audio 400-900 ms: alice alone talks then; a reply at ~2 s.
        #expect(server.wait(timeout: .seconds(10)) { $0.audio().count > 24_000 })
        server.speechStarted(audioStartMs: 400, itemID: "item_u1")
        server.speechStopped(audioEndMs: 900, itemID: "item_u1")
        server.transcriptionCompleted(itemID: "item_u1", transcript: "What's for dinner?")
        let voice = tone(600, seconds: 1.0)
        // The room time just before the reply is sent, asked in-process (spawning a client process
        // here takes too long to date anything): the reply must start playing right after it.
        let client = try ControlClient(path: env["ROOMTAP_CONTROL"]!)
        let sentAt = try #require(try client.request("status")["room_time"]?.doubleValue)
        server.reply(pcm: voice, itemID: "item_a1", transcript: "Anything at all.", chunkMs: 100, paced: true)
        let outcome = recorder.wait(timeout: 40)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        // The session.update the server got: GA shape, the instructions and voice given.
        let update = try #require(server.events(ofType: "session.update").first?.object["session"] as? [String: Any])
        #expect(update["type"] as? String == "realtime")
        #expect(update["instructions"] as? String == "You are a food critic who will eat anything.")
        let audio = update["audio"] as? [String: Any]
        let input = audio?["input"] as? [String: Any]
        let output = audio?["output"] as? [String: Any]
        #expect((input?["format"] as? [String: Any])?["rate"] as? Int == 24_000)
        #expect((input?["format"] as? [String: Any])?["type"] as? String == "audio/pcm")
        #expect((input?["turn_detection"] as? [String: Any])?["type"] as? String == "server_vad")
        #expect(output?["voice"] as? String == "cedar")
        #expect(server.upgradeRequests.first?.contains("Bearer \(Self.key)") == true, "the key goes to the server")

        let room = out.appendingPathComponent("room")
        let alice = try read(room, "alice.wav")
        let bob = try read(room, "bob.wav")
        let agent = try read(room, "agent.wav")
        let mix = try read(room, "mix.wav")
        #expect([alice.count, bob.count, agent.count, mix.count].allSatisfy { $0 == 288_000 })

        // What the server heard is the humans' mix at 24 kHz (not just bytes): correlate it with
        // alice + bob decimated to 24 kHz, and find no trace of the agent's own voice in it.
        let heard = server.audio()
        let humans = stride(from: 0, to: alice.count - 1, by: 2).map {
            Int16(clamping: (Int(alice[$0]) + Int(bob[$0]) + Int(alice[$0 + 1]) + Int(bob[$0 + 1])) / 2)
        }
        // The session's audio starts when the agent connected; find where in the room that was.
        let start = Correlation.best(Array(heard.prefix(48_000)), humans, lags: 0..<24_000)
        #expect(start.value > 0.9, "the heard audio is the room's humans (\(start.value) at \(start.lag))")
        let agentAt24k = stride(from: 0, to: agent.count - 1, by: 2).map { agent[$0] }
        let aligned = Array(agentAt24k[start.lag...].prefix(heard.count))
        let leak = Correlation.best(Array(heard.prefix(aligned.count)), aligned, lags: -50..<50)
        #expect(abs(leak.value) < 0.1, "the agent never hears itself: correlation \(leak.value)")

        // The reply is the agent's track: the tone, upsampled, on the room timeline, and in the mix.
        let first = try #require(agent.firstIndex { abs($0) > 500 })
        let startsAt = Double(first) / 48_000
        #expect(
            startsAt >= sentAt && startsAt < sentAt + 0.4,
            "the reply plays when it arrives: sent at room time \(sentAt) s, starts at \(startsAt) s")
        let spoken = agent[first...].prefix(96_000)
        let upsampledTone = voice.flatMap { [$0, $0] }
        let match = Correlation.best(Array(spoken.prefix(40_000)), upsampledTone, lags: 0..<400)
        #expect(match.value > 0.95, "agent.wav holds the reply (\(match.value))")
        let nonSilent = agent.filter { abs($0) > 500 }.count
        #expect(abs(nonSilent - 48_000) < 4_800, "the whole 1 s reply was played once: \(nonSilent) loud samples")
        var residual = 0
        for n in first..<(first + 40_000) {
            residual = max(residual, abs(Int(mix[n]) - Int(alice[n]) - Int(bob[n]) - Int(agent[n])))
        }
        #expect(residual <= 2, "the mix is the humans plus the agent (off by \(residual))")

        // Transcripts: the human utterance attributed to alice, the agent's reply to the agent.
        let lines = try String(contentsOf: room.appendingPathComponent("transcript.jsonl"), encoding: .utf8)
            .split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        #expect(lines.contains { $0["speaker"] as? String == "alice" && $0["text"] as? String == "What's for dinner?" })
        #expect(lines.contains { $0["speaker"] as? String == "agent" && $0["text"] as? String == "Anything at all." })

        let report = try json(room)
        let roles = Dictionary(
            ((report["tracks"] as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0["role"] as? String) },
            uniquingKeysWith: { a, _ in a })
        #expect(
            roles == ["alice": "speaker-file", "bob": "speaker-file", "agent": "agent-voice", "mix": "mix"],
            "room.json's roles: \(roles)")
        let agentReport = report["agent"] as? [String: Any]
        #expect(agentReport?["voice"] as? String == "cedar")
        #expect(Set(agentReport?["hears"] as? [String] ?? []) == ["alice", "bob"])
        let text = try String(contentsOf: room.appendingPathComponent("room.json"), encoding: .utf8)
        #expect(!text.contains(Self.key) && !outcome.stdout.contains(Self.key) && !outcome.stderr.contains(Self.key))
    }

    @Test func bargeInTruncatesAtWhatWasPlayed() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "5", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: environment())
        #expect(server.wait(timeout: .seconds(10)) { $0.audio().count > 12_000 })
        server.reply(pcm: tone(500, seconds: 3), itemID: "item_long", chunkMs: 100, paced: true)
        usleep(1_200_000)  // the test's own pacing: alice barges in 1.2 s into the reply
        server.speechStarted(audioStartMs: 2_000, itemID: "item_u2")
        #expect(server.wait(timeout: .seconds(30)) { !$0.events(ofType: "conversation.item.truncate").isEmpty })
        #expect(recorder.wait(timeout: 30).status == 0)
        let truncate = try #require(server.events(ofType: "conversation.item.truncate").first?.object)
        #expect(truncate["item_id"] as? String == "item_long")
        let endMs = try #require(truncate["audio_end_ms"] as? Int)
        let agent = try read(out, "agent.wav")
        let first = try #require(agent.firstIndex { $0 != 0 })
        let last = try #require(agent.lastIndex { $0 != 0 })
        let playedMs = Double(last - first + 1) / 48
        #expect(abs(Double(endMs) - playedMs) <= 10, "truncate says \(endMs) ms, \(playedMs) ms were played")
        #expect(playedMs > 500 && playedMs < 2_500, "stopped mid-reply: \(playedMs) ms")
        #expect(server.events(ofType: "response.cancel").isEmpty, "the server cancels it (interrupt_response)")
    }

    @Test func sayReconnectsAndFaultsLeaveTheRecordingWhole() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let env = environment()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "600", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
                // A speaker placed late keeps the room running until the test stops it.
                "--file", "later=\(sample("bob"))@300",
            ], environment: env)
        #expect(server.wait(timeout: .seconds(60)) { !$0.events(ofType: "session.update").isEmpty })
        let say = try CLIRunner.run(["agent", "say", "Tell", "us", "about", "the", "soup"], environment: env)
        #expect(say.status == 0, "\(say.stderr)")
        #expect(server.wait(timeout: .seconds(60)) { !$0.events(ofType: "response.create").isEmpty })
        let item = try #require(
            server.events(ofType: "conversation.item.create").first?.object["item"] as? [String: Any])
        let content = (item["content"] as? [[String: Any]])?.first
        #expect(item["role"] as? String == "user" && content?["text"] as? String == "Tell us about the soup")
        server.sendError(code: "invalid_value", message: "harmless")
        server.close(code: 1001, reason: "session expired")
        #expect(server.wait(timeout: .seconds(60)) { $0.events(ofType: "session.update").count >= 2 }, "reconnected")
        server.drop()
        #expect(server.wait(timeout: .seconds(60)) { $0.events(ofType: "session.update").count >= 3 }, "again")
        let mute = try CLIRunner.run(["agent", "mute"], environment: env)
        #expect(mute.status == 0)
        // The room outlasts every step on a loaded machine; it ends when asked.
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let roomSamples = try read(out, "alice.wav").count
        #expect(roomSamples > 0 && roomSamples % 480 == 0, "whole frames: \(roomSamples)")
        #expect(try read(out, "agent.wav").count == roomSamples, "agent.wav covers the whole room")
        let stats = (try json(out)["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect((stats?["reconnects"] as? Int ?? 0) >= 1, "the drop")
        #expect((stats?["rollovers"] as? Int ?? 0) >= 1, "the close 1001: a new session at once")
        #expect(stats?["state"] as? String == "stopped")
        #expect(!outcome.stderr.contains(Self.key))
    }

    @Test func refusedOrMissingKeysAreOneLine() throws {
        let server = try FakeRealtimeServer(refuseStatus: 403)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let refused = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "1.5", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: environment())
        #expect(refused.status == 0, "the room records without its agent: \(refused.stderr)")
        let agentLines = refused.stderrLines.filter { $0.contains("agent") }
        #expect(agentLines.count == 1 && agentLines[0].contains("403"), "\(refused.stderrLines)")
        #expect(!refused.stderr.contains(Self.key))
        #expect(try read(out, "alice.wav").count == 72_000 && (try read(out, "agent.wav")).allSatisfy { $0 == 0 })

        let noKey = try temporaryDirectory()
        let missing = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-url", server.url, "--out",
                noKey.path,
            ],
            environment: ["OPENAI_API_KEY": "", "ROOMTAP_CONTROL": uniqueControlPath()])
        #expect(missing.status == 1)
        #expect(missing.stderrLines.count == 1 && missing.stderr.contains("OPENAI_API_KEY"))
        #expect(try listing(noKey).isEmpty, "nothing recorded without the key")
        let badVoice = InProcessCLI.run(
            ["record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-voice", "robot", "--out", noKey.path],
            environment: environment())
        #expect(badVoice.status == 64 && badVoice.stderr.contains("not a Realtime voice"))
    }

    @Test func statusShowsTheAgentsStateRetriesAndLastError() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        server.refuseNextUpgrades(status: 503)
        let out = try temporaryDirectory()
        let env = environment()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "600", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
                // A speaker placed late keeps the room running until the test stops it.
                "--file", "later=\(sample("bob"))@300",
            ], environment: env)
        #expect(server.wait(timeout: .seconds(10)) { !$0.events(ofType: "session.update").isEmpty })
        var agent: [String: Any] = [:]
        #expect(
            waitUntil {
                guard let outcome = try? CLIRunner.run(["status", "--json"], environment: env, timeout: 20),
                    outcome.status == 0,
                    let json = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
                else { return false }
                agent = json["agent"] as? [String: Any] ?? [:]
                return agent["state"] as? String == "connected"
            })
        #expect(agent["retries"] as? Int == 1)
        #expect((agent["last_error"] as? String)?.contains("503") == true, "\(agent)")
        let text = try CLIRunner.run(["status"], environment: env, timeout: 20)
        #expect(text.stdout.contains("agent       connected, 1 retries"), "\(text.stdout)")
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
        let stats = (try json(out)["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect(stats?["state"] as? String == "stopped")
        #expect(stats?["retries"] as? Int == 1)
    }

    @Test func theModelIsGivenInOnePlace() throws {
        let out = try temporaryDirectory()
        let clash = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-model", "gpt-realtime-mini",
                "--agent-url", "ws://127.0.0.1:9/v1/realtime?model=gpt-realtime", "--out", out.path,
            ], environment: environment())
        #expect(clash.status == 64)
        #expect(clash.stderr.contains("disagrees with the model 'gpt-realtime'"), "\(clash.stderr)")
        #expect(try listing(out).isEmpty)
    }

    @Test func theAgentsVoiceGoesBackIntoTheCallAsRTP() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key)
        defer { server.stop() }
        let out = try temporaryDirectory()
        // The "call": another recorder listening where the agent's voice is sent.
        let callPort = try freeUDPPort()
        let call = try CLIRunner.start(
            [
                "record", "--listen", "127.0.0.1:\(callPort)", "--duration", "6", "--out",
                out.appendingPathComponent("call").path, "--quiet",
            ],
            environment: ["ROOMTAP_CONTROL": uniqueControlPath()])
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "4", "--agent",
                "--agent-url", server.url, "--agent-send", "rtp://127.0.0.1:\(callPort)",
                "--out", out.appendingPathComponent("room").path, "--quiet",
            ], environment: environment())
        #expect(server.wait(timeout: .seconds(10)) { $0.audio().count > 12_000 })
        server.reply(pcm: tone(700, seconds: 1), itemID: "item_rtp", chunkMs: 100, paced: true)
        #expect(recorder.wait(timeout: 30).status == 0)
        #expect(call.wait(timeout: 30).status == 0)
        let agent = try read(out.appendingPathComponent("room"), "agent.wav")
        let received = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("call").path)
            .filter { $0.hasPrefix("ssrc-") }
        try #require(received.count == 1, "one RTP stream arrived: \(received)")
        let heard = try read(out.appendingPathComponent("call"), received[0])
        let spoken = try #require(agent.firstIndex { abs($0) > 500 })
        let arrived = try #require(heard.firstIndex { abs($0) > 500 })
        let match = Correlation.best(
            Array(agent[spoken..<(spoken + 40_000)]), Array(heard[arrived...].prefix(42_000)), lags: -400..<400)
        #expect(match.value > 0.9, "the call hears the agent's voice (\(match.value))")
        let report = try json(out.appendingPathComponent("room"))
        #expect(((report["agent"] as? [String: Any])?["rtpPacketsSent"] as? Int ?? 0) >= 150, "20 ms packets for 4 s")
    }
}
