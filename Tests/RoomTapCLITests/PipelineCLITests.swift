import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import Testing

/// `record --agent-pipeline` through the real CLI: the speakers' own transcription sessions (the
/// Realtime stand-in) feed the chat stand-in by name, the reply is spoken into agent.wav and the
/// mix, both sides are in transcript.jsonl and room.json; a refused key ends only the agent.
@Suite("CLI: the pipeline agent", .serialized)
struct PipelineCLITests {
    static let key = "sk-test-PIPELINE-CLI-0123456789"

    /// An Ogg Opus file of `seconds`, a tone of `frequency` from `from` to `to` s, silence elsewhere.
    private func speaker(_ dir: URL, _ name: String, _ frequency: Double, from: Double, to: Double) throws -> String {
        let pcm = (0..<Int(3 * 48_000)).map { n -> Int16 in
            let t = Double(n) / 48_000
            guard t >= from && t < to else { return 0 }
            return Int16((8_000 * sin(2 * Double.pi * frequency * t)).rounded())
        }
        let path = dir.appendingPathComponent("\(name).opus").path
        try OggOpusWriter().encode(pcm).write(to: path)
        return path
    }

    private func lines(_ dir: URL) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: dir.appendingPathComponent("transcript.jsonl").path, encoding: .utf8)
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    private func run(_ extra: [String], http: FakeOpenAIHTTPServer, realtime: FakeRealtimeServer, out: URL) throws
        -> CLIRunner.Outcome
    {
        let inputs = try temporaryDirectory()
        let alice = try speaker(inputs, "alice", 300, from: 0.3, to: 1.0)
        let bob = try speaker(inputs, "bob", 500, from: 1.2, to: 1.9)
        return try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--file", "bob=\(bob)", "--duration", "8", "--mix",
                "--agent-pipeline", "--agent-base-url", http.baseURL, "--transcribe-url", realtime.transcriptionURL,
                "--out", out.path, "--quiet",
            ] + extra, environment: ["OPENAI_API_KEY": Self.key]
        ).wait(timeout: 120)
    }

    @Test func twoSpeakersAreAnsweredByNameAndTheReplyIsTheAgentTrack() throws {
        let realtime = try FakeRealtimeServer(
            expectedKey: Self.key, transcribe: FakeRealtimeServer.namingTones([300, 500]))
        defer { realtime.stop() }
        var settings = FakeOpenAIHTTPServer.Settings(expectedKey: Self.key)
        settings.script = { _ in .text(["Alice said three hundred", " and Bob five hundred. ", "Thanks."]) }
        settings.speechMillisecondsPerCharacter = 30
        let http = try FakeOpenAIHTTPServer(settings: settings)
        defer { http.stop() }
        let out = try temporaryDirectory().appendingPathComponent("room")
        let outcome = try run(
            ["--agent-turn-silence-ms", "1500", "--agent-voice", "nova"], http: http, realtime: realtime, out: out)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!outcome.stderr.contains(Self.key))
        #expect(realtime.transcriptionConnections.count == 2, "one session per speaker, none for the agent's voice")

        // The chat request carries both turns, each under its speaker's name.
        let request = try #require(http.chats.first, "refused: \(http.refused), stderr: \(outcome.stderr)")
        let turns = request.messages.filter { $0.role == "user" }
        #expect(turns.map(\.name) == ["alice", "bob"] && turns.map(\.content) == ["tone 300", "tone 500"], "\(turns)")
        #expect(http.chats.count == 1 && http.speeches.map(\.voice) == ["nova", "nova"])

        // The reply is the agent track: in agent.wav (what the speech stand-in sent) and in the mix.
        let agent = try WAVFile.readSamples(path: out.appendingPathComponent("agent.wav").path).1
        let mix = try WAVFile.readSamples(path: out.appendingPathComponent("mix.wav").path).1
        let alice = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
        let bob = try WAVFile.readSamples(path: out.appendingPathComponent("bob.wav").path).1
        #expect([agent.count, mix.count, alice.count, bob.count].allSatisfy { $0 == 8 * 48_000 })
        let first = try #require(agent.firstIndex { $0 != 0 }, "the agent spoke")
        #expect(first > 2 * 48_000, "after the turns: \(first)")
        let spoken = stride(from: first, to: min(agent.count, first + 60_000), by: 2).map { agent[$0] }
        let sent = try #require(http.speeches.first).samples
        #expect(Correlation.best(spoken, sent, lags: -100..<100).value > 0.95)
        let sentTotal = http.speeches.reduce(0) { $0 + $1.samples.count }
        let loud = agent.filter { $0 != 0 }.count
        #expect(abs(loud - 2 * sentTotal) < sentTotal / 10, "the whole reply played once: \(loud) of \(2 * sentTotal)")
        var residual = 0
        for n in first..<min(agent.count, first + 40_000) {
            residual = max(residual, abs(Int(mix[n]) - Int(alice[n]) - Int(bob[n]) - Int(agent[n])))
        }
        #expect(residual <= 2, "the mix is the humans plus the agent (off by \(residual))")

        // transcript.jsonl: both turns and the reply.
        let said = try lines(out).map { "\($0["speaker"] as? String ?? "?"): \($0["text"] as? String ?? "?")" }
        #expect(
            said == [
                "alice: tone 300", "bob: tone 500", "agent: Alice said three hundred and Bob five hundred. Thanks.",
            ], "\(said)")

        // room.json: the pipeline's numbers, never the key.
        let roomText = try String(contentsOfFile: out.appendingPathComponent("room.json").path, encoding: .utf8)
        #expect(!roomText.contains(Self.key))
        let room = try #require(JSONSerialization.jsonObject(with: Data(roomText.utf8)) as? [String: Any])
        let pipeline = try #require(
            (room["agent"] as? [String: Any])?["pipeline"] as? [String: Any], "\(room["agent"] ?? "")")
        #expect(pipeline["chatModel"] as? String == "gpt-4.1-mini" && pipeline["baseURL"] as? String == http.baseURL)
        let stats = try #require(pipeline["statistics"] as? [String: Any])
        #expect(
            stats["turns"] as? Int == 2 && stats["replies"] as? Int == 1 && stats["errors"] as? Int == 0, "\(stats)")
        #expect((stats["turnToFirstAudioMs"] as? [String: Any])?["p50"] as? Double != nil)
    }

    @Test func aRefusedKeyEndsTheAgentInOneLineAndTheRecordingCompletes() throws {
        let realtime = try FakeRealtimeServer(
            expectedKey: Self.key, transcribe: FakeRealtimeServer.namingTones([300, 500]))
        defer { realtime.stop() }
        let http = try FakeOpenAIHTTPServer(settings: .init(expectedKey: "sk-another-key"))
        defer { http.stop() }
        let out = try temporaryDirectory().appendingPathComponent("room")
        let outcome = try run(["--agent-turn-silence-ms", "300"], http: http, realtime: realtime, out: out)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let agentLines = outcome.stderrLines.filter { $0.contains("agent:") }
        #expect(
            agentLines.count == 1 && agentLines[0].contains("stopped: chat: HTTP 401 invalid_api_key"),
            "\(outcome.stderr)")
        #expect(!outcome.stderr.contains(Self.key))
        for name in ["alice", "bob", "agent", "mix"] {
            let samples = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path).1
            #expect(samples.count == 8 * 48_000, "\(name).wav is whole")
        }
        #expect(try lines(out).count == 2, "the humans' lines are all there")
        let room = try String(contentsOfFile: out.appendingPathComponent("room.json").path, encoding: .utf8)
        #expect(room.contains("\"failed\"") && !room.contains(Self.key))
    }

    @Test func badPipelineOptionsAreOneLineAndNothingIsMade() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let base = ["record", "--file", "alice=\(sample("alice"))", "--out", out.path]
        expectUsageErrors(
            base,
            [
                (["--agent-chat-model", "x"], "need --agent-pipeline"),
                (["--agent", "--agent-pipeline"], "give one"),
                (["--agent-pipeline", "--agent-url", "wss://x/"], "use --agent-base-url"),
                (["--agent-pipeline", "--agent-base-url", "ftp://x/v1"], "must be an http:// or https:// URL"),
                (["--agent-pipeline", "--agent-base-url", "https://x/v1?key=sk-1"], "must not carry a key"),
                (["--agent-pipeline", "--agent-turn-silence-ms", "5"], "100...10000"),
                (["--agent-pipeline", "--agent-voice", "robot"], "is not a speech voice"),
            ], environment: ["OPENAI_API_KEY": Self.key])
        let missing = InProcessCLI.run(base + ["--agent-pipeline"], environment: ["OPENAI_API_KEY": ""])
        #expect(missing.status == 1 && missing.stderr.contains("needs an OpenAI API key"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing created")
    }
}
