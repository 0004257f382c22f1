import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import Testing

/// The agent's session options on the command line: what is sent, and one line and exit 64 for
/// what is wrong.
@Suite("CLI: the agent's session options")
struct AgentSessionOptionsCLITests {
    @Test func badSessionOptionsAreOneLineAndExit64() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let base = ["record", "--file", "alice=\(sample("alice"))", "--agent", "--out", out.path]
        for (extra, message) in [
            (["--agent-vad", "loud"], "--agent-vad takes server or semantic"),
            (["--agent-vad-eagerness", "low"], "--agent-vad-eagerness needs --agent-vad semantic"),
            (["--agent-vad", "semantic", "--agent-vad-eagerness", "eager"], "low, medium, high or auto"),
            (["--agent-vad", "semantic", "--agent-idle-timeout-ms", "8000"], "server VAD only"),
            (["--agent-idle-timeout-ms", "5"], "--agent-idle-timeout-ms must be 1000...600000"),
            (["--agent-noise-reduction", "loud"], "far_field, near_field or none"),
            (["--agent-transcription-language", "German"], "ISO-639-1"),
            (["--agent-voice", "robot"], "or a custom voice's id"),
        ] {
            let outcome = InProcessCLI.run(base + extra, environment: ["OPENAI_API_KEY": "sk-test"])
            #expect(outcome.status == 64, "\(extra): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message) && outcome.stderrLines.count <= 2, "\(extra): \(outcome.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing created")
    }
}
