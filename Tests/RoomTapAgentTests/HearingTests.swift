import RoomTapAgent
import RoomTapCore
import RoomTapTestSupport
import Testing

/// `RealtimeAgent.hear(_:)`: what the agent hears and whom it credits follow the tracks' controls.
@Suite struct HearingTests {
    /// Runs 1 s of alice (a loud sine) heard by an agent; `muted` mutes her first.
    private func credited(muted: Bool) throws -> (speakers: [String], heardInputs: [String]) {
        let agent = try RealtimeAgent(configuration: RealtimeAgentConfiguration(apiKey: ""))
        let room = Room(clock: VirtualClock())
        let alice = room.addTrack(name: "alice", source: SineSource(frequency: 300, amplitude: 12_000, length: 48_000))
        let tracks = agent.attach(to: room, hearing: [alice])
        agent.hear(alice)  // twice: idempotent
        agent.hear(tracks.voice)  // the agent's own voice is refused
        alice.controls.setEnabled(!muted)
        room.run()
        agent.stop()
        return (agent.speakers.speakers(from: 0, to: 48_000), (tracks.hears.source as? Mixer)?.inputs.map(\.name) ?? [])
    }

    @Test func aSpeakerIsCreditedAndHeardOnlyWhenNotMuted() throws {
        let heard = try credited(muted: false)
        #expect(heard.speakers == ["alice"])
        #expect(heard.heardInputs == ["alice"], "one input: hear() is idempotent and refuses the agent's voice")
        let muted = try credited(muted: true)
        #expect(muted.speakers.isEmpty, "a muted speaker is not credited: \(muted.speakers)")
    }
}
