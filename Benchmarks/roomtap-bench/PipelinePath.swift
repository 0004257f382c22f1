import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapSync
import RoomTapTestSupport

/// The pipeline agent's latency (`roomtap-bench --pipeline`): from the end of a speaker's turn (its
/// transcript line) to the reply's first audio ready to play (a prebuffer's worth in the voice),
/// through the real chat and speech clients (libcurl, SSE, PCM streaming, 24 → 48 kHz) against the
/// local stand-in. Two runs of `turns` addressed turns ("agent, ..." answers at once): with the
/// stand-ins answering at once, and with a service's delays (time to the first token, to the first
/// audio byte), which are then taken out; a third run un-addressed shows the turn silence's share.
enum PipelinePath {
    struct Outcome {
        var label: String
        var turns: Int
        var turnToFirstAudio: PipelineAgentStatistics.Percentiles?
        var answerToFirstAudio: PipelineAgentStatistics.Percentiles?
        var delaysMilliseconds: Double
    }

    static func run(
        turns: Int, chatDelay: Duration, speechDelay: Duration, addressed: Bool = true, label: String
    ) throws -> Outcome {
        let key = "sk-bench-0123456789"
        var settings = FakeOpenAIHTTPServer.Settings(expectedKey: key)
        settings.chatFirstTokenDelay = chatDelay
        settings.speechFirstByteDelay = speechDelay
        settings.speechMillisecondsPerCharacter = 10
        settings.script = { _ in .text(["Sure, here is a short answer. ", "And a second sentence."]) }
        let server = try FakeOpenAIHTTPServer(settings: settings)
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomtap-bench-pipeline-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let transcript = try TranscriptWriter(path: dir.appendingPathComponent("transcript.jsonl").path)
        let endpoint = PipelineEndpoint(baseURL: server.baseURL, apiKey: key)
        var configuration = PipelineAgentConfiguration(
            chat: ChatCompletionClient(endpoint: endpoint, model: "gpt-4.1-mini"),
            speech: SpeechClient(endpoint: endpoint, model: "gpt-4o-mini-tts", voice: "coral"))
        configuration.transcript = transcript
        let agent = try PipelineAgent(configuration: configuration)
        let room = Room(clock: RealTimeClock(), endsWhenSourcesFinish: false)
        let alice = room.addTrack(name: "alice", source: SineSource(frequency: 300, amplitude: 0))
        agent.attach(to: room, hearing: [alice])
        agent.start()
        room.start()
        for i in 0..<turns {
            let now = room.position
            transcript.write(
                startSample: max(0, now - 48_000), endSample: now, speaker: "alice",
                text: addressed ? "agent, question \(i)?" : "question \(i)?")
            _ = waitUntil(timeout: .seconds(30)) { agent.statistics.replies == i + 1 }
        }
        let stats = agent.statistics
        agent.stop()
        room.stop()
        room.waitUntilFinished()
        transcript.close()
        return Outcome(
            label: label, turns: stats.replies, turnToFirstAudio: stats.turnToFirstAudioMs,
            answerToFirstAudio: stats.answerToFirstAudioMs,
            delaysMilliseconds: Double(chatDelay.components.seconds * 1_000 + speechDelay.components.seconds * 1_000)
                + Double(chatDelay.components.attoseconds + speechDelay.components.attoseconds) / 1e15)
    }

    static func line(_ o: Outcome) -> String {
        func f(_ p: PipelineAgentStatistics.Percentiles?, minus: Double = 0) -> String {
            guard let p else { return "n/a" }
            return String(format: "p50 %.1f ms, p99 %.1f ms", p.p50 - minus, p.p99 - minus)
        }
        return "pipeline agent (\(o.label), \(o.turns) replies): end of turn -> first audio \(f(o.turnToFirstAudio)); "
            + "without the stand-ins' \(Int(o.delaysMilliseconds)) ms: \(f(o.turnToFirstAudio, minus: o.delaysMilliseconds))"
    }

    /// The three runs of `roomtap-bench --pipeline`.
    static func runAll(turns: Int) throws -> [String] {
        [
            line(try run(turns: turns, chatDelay: .zero, speechDelay: .zero, label: "addressed, stand-ins at once")),
            line(
                try run(
                    turns: turns, chatDelay: .milliseconds(300), speechDelay: .milliseconds(200),
                    label: "addressed, 300 ms to the first token, 200 ms to the first audio byte")),
            line(
                try run(
                    turns: max(5, turns / 3), chatDelay: .zero, speechDelay: .zero, addressed: false,
                    label: "not addressed: 700 ms turn silence")),
        ]
    }
}
