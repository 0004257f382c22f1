import Foundation
import RoomTapAgentTestSupport
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// The agent (on the stand-in `server`) says a 1 s 700 Hz tone into a joined room once the
/// other participant (a roomtap at `listenerControl`) receives the agent's packets, and the test
/// waits until the listener heard it start and end; then both rooms are stopped (`recorderControl`
/// first) and drain. The tone is the `spoken` side of ``agentVoiceMatch(spoken:received:)``.
///
/// Why it waits on the listener: the listener's track is made when the publisher is announced,
/// its packets flow once its subscription (a new handle, ICE, DTLS) is up. On a loaded machine
/// that took more than the 2.7 s a fixed schedule gave it, and the voice's first 0.3 s went
/// unheard (correlation 0.77 in CI).
func agentSpeaksToAListener(
    server: FakeRealtimeServer, itemID: String, listenerControl: String, recorderControl: String
) throws {
    func agentTrack() throws -> [String: Any]? {
        let outcome = try CLIRunner.run(["tracks", "--json", "--control", listenerControl], timeout: 20)
        let json = try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
        return (json?["tracks"] as? [[String: Any]])?.first { $0["name"] as? String == "agent" }
    }
    #expect(
        try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
            (try agentTrack()?["packets"] as? Int ?? 0) > 0
        }, "the listener never received the agent's packets")
    let voice = (0..<24_000).map { Int16(9_000 * sin(2 * .pi * 700 * Double($0) / 24_000)) }
    server.reply(pcm: voice, itemID: itemID, chunkMs: 100, paced: true)
    #expect(
        try waitUntil(timeout: .seconds(60), every: .milliseconds(20)) {
            try agentTrack()?["talking"] as? Bool == true
        }, "the listener never heard the agent talk")
    #expect(
        try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
            try agentTrack()?["talking"] as? Bool == false
        }, "the agent never stopped talking")
    for control in [recorderControl, listenerControl] {
        let stopped = try CLIRunner.run(["stop", "--control", control], timeout: 60)
        #expect(stopped.status == 0, "stop: \(stopped.stderr)")
    }
}
