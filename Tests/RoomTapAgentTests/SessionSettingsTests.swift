import Foundation
import RoomTapAgent
import RoomTapCore
import RoomTapTestSupport
import Testing

/// The session settings of issue 25 (semantic VAD with its eagerness, the idle timeout, noise
/// reduction, the input transcription's language and prompt, a custom voice), each taken by the
/// stand-in as the service takes it: no refused `session.update`.
@Suite(.serialized) struct SessionSettingsTests {
    private func update(_ configure: @escaping (inout RealtimeSessionSettings) -> Void) throws -> (
        [String: Any], RealtimeAgentStatistics
    ) {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))]) { configure(&$0.session) }
        #expect(rig.server.wait { !$0.events(ofType: "session.update").isEmpty })
        #expect(rig.wait { rig.agent.statistics.state == .connected })
        // The stand-in decided on the update as it arrived; a refusal reaches the agent as a warning.
        if rig.server.refusedSessionUpdates > 0 {
            #expect(rig.wait { rig.agent.statistics.sessionWarning != nil })
        }
        let stats = rig.agent.statistics
        let session = rig.server.events(ofType: "session.update").first?.object["session"] as? [String: Any] ?? [:]
        rig.finish()
        return (session, stats)
    }

    private func input(_ session: [String: Any]) -> [String: Any] {
        ((session["audio"] as? [String: Any])?["input"] as? [String: Any]) ?? [:]
    }

    @Test func semanticVADWithItsEagernessACustomVoiceAndTheTranscriptionsLanguage() throws {
        let (session, stats) = try update {
            $0.turnDetection = .semantic(eagerness: "low")
            $0.voice = "voice_1234abcd"
            $0.transcriptionLanguage = "de"
            $0.transcriptionPrompt = "Alice, Bob, roomtap"
            $0.noiseReduction = "near_field"
        }
        #expect(stats.sessionWarning == nil, "accepted: \(stats.sessionWarning ?? "")")
        let turn = input(session)["turn_detection"] as? [String: Any] ?? [:]
        #expect(turn["type"] as? String == "semantic_vad" && turn["eagerness"] as? String == "low")
        #expect(turn["threshold"] == nil && turn["silence_duration_ms"] == nil, "no server VAD fields: \(turn)")
        let transcription = input(session)["transcription"] as? [String: Any] ?? [:]
        #expect(
            transcription["language"] as? String == "de" && transcription["prompt"] as? String == "Alice, Bob, roomtap")
        #expect((input(session)["noise_reduction"] as? [String: Any])?["type"] as? String == "near_field")
        let output = (session["audio"] as? [String: Any])?["output"] as? [String: Any] ?? [:]
        #expect((output["voice"] as? [String: Any])?["id"] as? String == "voice_1234abcd")
    }

    @Test func serverVADWithAnIdleTimeoutAndNoNoiseReduction() throws {
        let (session, stats) = try update {
            $0.idleTimeoutMs = 8_000
            $0.noiseReduction = nil
        }
        #expect(stats.sessionWarning == nil, "accepted: \(stats.sessionWarning ?? "")")
        let turn = input(session)["turn_detection"] as? [String: Any] ?? [:]
        #expect(turn["type"] as? String == "server_vad" && turn["idle_timeout_ms"] as? Int == 8_000)
        #expect(input(session)["noise_reduction"] == nil)
    }

    @Test func theStandInRefusesWhatTheServiceRefuses() throws {
        // An unknown voice name and an eagerness the service does not have: refused, one warning.
        let (_, voice) = try update { $0.voice = "robot" }
        #expect(voice.sessionWarning?.contains("'robot'") == true, "\(voice.sessionWarning ?? "")")
        let (_, eager) = try update { $0.turnDetection = .semantic(eagerness: "eager") }
        #expect(eager.sessionWarning?.contains("'eager'") == true, "\(eager.sessionWarning ?? "")")
    }
}

extension SessionSettingsTests {
    /// The default model is a current one, and a model the service does not have (retired or
    /// misspelt) ends the agent with one line that names it and the option to change it.
    @Test func aModelTheServiceDoesNotHaveIsOneLineNamingItAndTheOption() throws {
        #expect(RealtimeSessionSettings.defaultModel == "gpt-realtime-2.1")
        #expect(RealtimeSessionSettings().model == "gpt-realtime-2.1")
        #expect(
            RealtimeAgentConfiguration(apiKey: "k", session: RealtimeSessionSettings()).url.hasSuffix(
                "=gpt-realtime-2.1"))
        #expect(RealtimeAgentConfiguration(apiKey: "k").url.hasSuffix("?model=gpt-realtime-2.1"))
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.failNextResponses(code: "model_not_found")
        rig.agent.say("Hello?")
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        rig.finish()
        let line = try #require(rig.log.all.first)
        #expect(rig.log.all.count == 1, "\(rig.log.all)")
        #expect(line.contains("no model 'gpt-realtime'") && line.contains("--agent-model"), "\(line)")
        #expect(line.contains("the recording goes on"))
    }
}
