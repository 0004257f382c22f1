import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// A live room (real-time clock) with two humans, the pipeline agent's voice collected, the
/// transcript in a scratch file and the OpenAI HTTP stand-in.
final class PipelineRig {
    static let key = "sk-test-PIPELINE-0123456789"
    let server: FakeOpenAIHTTPServer
    let room: Room
    let agent: PipelineAgent
    let transcript: TranscriptWriter
    let transcriptPath: String
    let voiceSink = CollectingSink(reserveFrames: 3_000)
    let humans: [AudioTrack]
    let log = LogCapture()

    init(
        key: String = PipelineRig.key, humans: [(String, any FrameSource)]? = nil, muted: Set<String> = [],
        server configureServer: (inout FakeOpenAIHTTPServer.Settings) -> Void = { _ in },
        agent configureAgent: (inout PipelineAgentConfiguration) -> Void = { _ in }
    ) throws {
        var settings = FakeOpenAIHTTPServer.Settings(expectedKey: Self.key)
        configureServer(&settings)
        server = try FakeOpenAIHTTPServer(settings: settings)
        transcriptPath = try TestScratch.directory("pipeline").appendingPathComponent("transcript.jsonl").path
        transcript = try TranscriptWriter(path: transcriptPath)
        let endpoint = PipelineEndpoint(baseURL: server.baseURL, apiKey: key)
        var configuration = PipelineAgentConfiguration(
            chat: ChatCompletionClient(endpoint: endpoint, model: "gpt-4.1-mini"),
            speech: SpeechClient(endpoint: endpoint, model: "gpt-4o-mini-tts", voice: "coral"))
        configuration.transcript = transcript
        configuration.log = log.sink
        configuration.backoff = .milliseconds(20)
        configureAgent(&configuration)
        agent = try PipelineAgent(configuration: configuration)
        let room = Room(clock: RealTimeClock(), endsWhenSourcesFinish: false)
        self.room = room
        let sources = humans ?? [("alice", ConstantSource(0)), ("bob", ConstantSource(0))]
        self.humans = sources.map { room.addTrack(name: $0.0, source: $0.1) }
        for track in self.humans where muted.contains(track.name) { track.controls.setEnabled(false) }
        agent.attach(to: room, hearing: self.humans).voice.addSink(voiceSink)
        agent.start()
        room.start()
    }

    func finish() {
        agent.stop()
        room.stop()
        room.waitUntilFinished()
        transcript.close()
        server.stop()
    }

    /// A finished turn of `speaker` as its transcription session writes it.
    func say(_ speaker: String, _ text: String) {
        let now = room.position
        transcript.write(startSample: max(0, now - 48_000), endSample: now, speaker: speaker, text: text)
    }

    var lines: [[String: Any]] {
        ((try? String(contentsOfFile: transcriptPath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The voice (48 kHz) brought to 24 kHz (every other sample: the stand-in's tones are far below
    /// 12 kHz) from its first non-silent sample.
    var voice24: [Int16] {
        let all = voiceSink.samples
        guard let first = all.firstIndex(where: { $0 != 0 }) else { return [] }
        return stride(from: first, to: all.count, by: 2).map { all[$0] }
    }
}

@Suite("Pipeline agent: turns by name, chat, speech, barge-in, failures", .serialized)
struct PipelineAgentTests {
    @Test func twoSpeakersTurnsReachTheChatByNameAndTheReplyIsSpoken() throws {
        let rig = try PipelineRig(server: {
            $0.script = { _ in .text(["Hello Alice", " and Bob. ", "Nice to meet you."]) }
        })
        defer { rig.finish() }
        rig.say("alice", "I think we should ship on Friday.")
        rig.say("bob", "Friday is too early for me.")
        #expect(waitUntil { rig.agent.statistics.replies == 1 }, "\(rig.log.all)")
        let request = try #require(rig.server.chats.first)
        let turns = request.messages.filter { $0.role == "user" }
        #expect(turns.map(\.name) == ["alice", "bob"])
        #expect(turns.map(\.content) == ["I think we should ship on Friday.", "Friday is too early for me."])
        #expect(rig.server.chats.count == 1, "one answer for the two turns (they came within the turn silence)")
        // Spoken sentence by sentence: two speech requests, their audio in the voice in order.
        let speeches = rig.server.speeches
        #expect(speeches.map(\.input) == ["Hello Alice and Bob.", "Nice to meet you."])
        #expect(speeches.allSatisfy { $0.voice == "coral" })
        let voice = rig.voice24
        let first = speeches[0].samples
        #expect(Correlation.best(voice, first, lags: -100..<100).value > 0.95, "the voice is what the TTS sent")
        let total = speeches.reduce(0) { $0 + $1.samples.count }
        let played = rig.voiceSink.samples.filter { $0 != 0 }.count / 2
        #expect(abs(played - total) < total / 20, "all of the reply played: \(played) of \(total) samples at 24 kHz")
        // The transcript line comes just after the reply is counted: wait for it.
        #expect(waitUntil { rig.lines.contains { $0["speaker"] as? String == "agent" } })
        let agentLines = rig.lines.filter { $0["speaker"] as? String == "agent" }
        #expect(
            agentLines.count == 1 && agentLines.first?["text"] as? String == "Hello Alice and Bob. Nice to meet you.")
        #expect(
            rig.agent.history.last == ChatMessage(role: .assistant, content: "Hello Alice and Bob. Nice to meet you."))
        #expect(rig.log.all.isEmpty, "\(rig.log.all)")
        let stats = rig.agent.statistics
        #expect(stats.turns == 2 && stats.bargeIns == 0 && stats.errors == 0)
        #expect(stats.turnToFirstAudioMs?.count == 1 && (stats.turnToFirstAudioMs?.p50 ?? 0) >= 700)
    }

    /// A speaker the agent does not hear (`--agent-hears`, or muted for what is heard) never
    /// reaches the chat model, and hearing them again lets their next turn through.
    @Test func aSpeakerTheAgentDoesNotHearNeverReachesTheChatModel() throws {
        let heard = Locked<Set<String>>(["alice"])
        let rig = try PipelineRig(
            server: { $0.script = { _ in .text(["Noted."]) } },
            agent: { configuration in configuration.hears = { name in heard.withLock { $0.contains(name) } } })
        defer { rig.finish() }
        rig.say("bob", "My card number is 4242.")
        rig.say("alice", "agent, what did I say?")
        #expect(waitUntil { rig.agent.statistics.replies == 1 }, "\(rig.log.all)")
        let first = try #require(rig.server.chats.first).messages.filter { $0.role == "user" }
        #expect(first.map(\.name) == ["alice"], "bob is not heard: \(first)")
        #expect(!first.contains { $0.content.contains("4242") })
        heard.withLock { $0.insert("bob") }
        rig.say("bob", "agent, now you hear me.")
        #expect(waitUntil { rig.agent.statistics.replies == 2 }, "\(rig.log.all)")
        let second = try #require(rig.server.chats.last).messages.filter { $0.role == "user" }
        #expect(second.last?.name == "bob" && second.last?.content == "agent, now you hear me.")
        #expect(rig.agent.statistics.turns == 2, "only heard turns count")
    }

    @Test func aTurnWhileItSpeaksCutsItAndTheHistoryKeepsWhatWasSaid() throws {
        let long = "This is a long answer that goes on and on about the schedule. " + "It keeps going for a while. "
        let rig = try PipelineRig(server: {
            $0.script = { _ in .text([long, "And this sentence should never be heard by anyone."]) }
            $0.speechMillisecondsPerCharacter = 60
        })
        defer { rig.finish() }
        rig.say("alice", "agent, what is the plan?")
        #expect(waitUntil { rig.agent.voice.playPosition > 48_000 }, "a second of the reply played")
        rig.say("bob", "Stop, I have a question.")
        #expect(waitUntil { rig.agent.statistics.bargeIns == 1 }, "\(rig.log.all)")
        let stopped = rig.agent.voice.playPosition
        #expect(!rig.agent.voice.isPlaying)
        let said = try #require(rig.agent.history.last { $0.role == .assistant }?.content)
        let generated = long + "And this sentence should never be heard by anyone."
        #expect(
            said.count < generated.count / 2 && said.hasSuffix("…") && generated.hasPrefix(said.dropLast()), "\(said)")
        // The reply's transcript line is written just after the barge-in is counted (seen missing
        // in one make test run when read at once): wait for it.
        #expect(waitUntil { rig.lines.contains { $0["speaker"] as? String == "agent" } })
        let cut = try #require(rig.lines.first { $0["speaker"] as? String == "agent" })
        #expect(cut["interrupted"] as? Bool == true)
        // Nothing more of the reply plays after the cut (the voice stays silent until the next reply).
        #expect(waitUntil { rig.room.position > 48_000 * 4 })
        #expect(rig.agent.voice.playPosition == stopped || rig.server.chats.count == 2)
        // Bob's turn is answered next, with the cut reply as said aloud in the history.
        #expect(waitUntil { rig.server.chats.count == 2 })
        let second = rig.server.chats[1].messages
        #expect(second.contains { $0.role == "assistant" && $0.content == said })
        #expect(second.last?.name == "bob")
    }

    @Test func talkOverTheAgentStopsItBeforeTheTurnIsTranscribed() throws {
        let rig = try PipelineRig(
            humans: [("alice", ConstantSource(0)), ("bob", SineSource(frequency: 440, amplitude: 8_000))],
            muted: ["bob"],
            server: {
                $0.script = { _ in .text(["A long reply that will be interrupted by Bob talking over it right now."]) }
                $0.speechMillisecondsPerCharacter = 60
            })
        defer { rig.finish() }
        rig.say("alice", "agent, go ahead.")
        #expect(waitUntil { rig.agent.voice.playPosition > 24_000 })
        #expect(rig.agent.statistics.bargeIns == 0)
        rig.humans[1].controls.setEnabled(true)  // Bob starts talking over the agent
        #expect(waitUntil { rig.agent.statistics.bargeIns == 1 }, "\(rig.log.all)")
        #expect(!rig.agent.voice.isPlaying)
    }

    @Test func aRefusedKeyEndsTheAgentWithOneClearLineAndTheRoomGoesOn() throws {
        let rig = try PipelineRig(key: "sk-wrong")
        defer { rig.finish() }
        rig.say("alice", "agent, are you there?")
        #expect(waitUntil { rig.agent.statistics.state == "failed" })
        let stats = rig.agent.statistics
        #expect(stats.failure?.contains("HTTP 401 invalid_api_key") == true, "\(stats)")
        #expect(rig.log.all.count == 1 && rig.log.all[0].hasPrefix("stopped: chat: HTTP 401"), "\(rig.log.all)")
        #expect(!rig.log.all.joined().contains("sk-wrong"))
        let position = rig.room.position
        #expect(waitUntil { rig.room.position > position + 48_000 }, "the room goes on")
        rig.say("bob", "agent?")
        #expect(rig.server.refused.count == 1, "a failed agent sends nothing more")
    }

    @Test func anUnknownModelEndsTheAgent() throws {
        let rig = try PipelineRig(agent: { $0.chat.model = "gpt-nonexistent" })
        defer { rig.finish() }
        rig.say("alice", "agent?")
        #expect(waitUntil { rig.agent.statistics.state == "failed" })
        #expect(rig.agent.statistics.failure?.contains("404 model_not_found") == true)
    }

    @Test func aServerThatRefusesNamesGetsTheSpeakerInTheContent() throws {
        let rig = try PipelineRig(server: { $0.rejectNames = true })
        defer { rig.finish() }
        rig.say("alice+bob", "agent, hello from both of us")
        #expect(waitUntil { rig.agent.statistics.replies == 1 }, "\(rig.log.all)")
        let request = try #require(rig.server.chats.first)
        #expect(
            request.messages.last?.name == nil
                && request.messages.last?.content == "alice_bob: agent, hello from both of us")
        #expect(rig.agent.statistics.namesInContent)
        #expect(rig.server.refused.count == 1 && rig.log.all.count == 1, "\(rig.log.all)")
        rig.say("alice", "agent, again")
        #expect(waitUntil { rig.server.chats.count == 2 })
        #expect(rig.server.refused.count == 1, "remembered: no second refusal")
    }

    @Test func aStreamCutOffIsRetriedWithBackoff() throws {
        let calls = Locked(0)
        let rig = try PipelineRig(server: {
            $0.script = { _ in
                let call = calls.withLock { c -> Int in
                    c += 1
                    return c
                }
                return call == 1 ? .cutOff([]) : .text(["Back again, all good here."])
            }
        })
        defer { rig.finish() }
        rig.say("alice", "agent, status?")
        #expect(waitUntil { rig.agent.statistics.replies == 1 }, "\(rig.log.all)")
        #expect(rig.agent.statistics.retries == 1 && rig.server.chats.count == 2)
        #expect(rig.log.all.count == 1 && rig.log.all[0].contains("retrying in"), "\(rig.log.all)")
    }

    @Test func toolsAreOfferedAndRun() throws {
        let ran = Locked<[String]>([])
        let rig = try PipelineRig(
            server: {
                $0.script = { request in
                    request.messages.contains { $0.role == "tool" }
                        ? .text(["Bob is muted now."]) : .toolCall("mute_track", #"{"name":"bob"}"#)
                }
            },
            agent: {
                $0.tools = [
                    RealtimeTool(name: "mute_track", description: "Mute a track.", parameters: ["type": "object"])
                ]
                $0.toolRunner = { call in
                    ran.withLock { $0.append("\(call.name) \(call.arguments)") }
                    return .ok()
                }
            })
        defer { rig.finish() }
        rig.say("alice", "agent, mute bob please")
        #expect(waitUntil { rig.agent.statistics.replies == 1 }, "\(rig.log.all)")
        #expect(ran.withLock { $0 } == [#"mute_track {"name":"bob"}"#])
        let offered = rig.server.chats[0].body["tools"]?.arrayValue?.first?["function"]?["name"]?.stringValue
        #expect(offered == "mute_track")
        #expect(rig.server.speeches.map(\.input) == ["Bob is muted now."])
    }
}
