public import RoomTapCore

/// The tracks an agent adds to a room.
public struct AgentTracks: Sendable {
    /// The agent's voice (source ``RealtimeAgent/voice``): record it, mix it, send it.
    public let voice: AudioTrack
    /// The mix-minus the agent hears (a ``Mixer`` of the chosen humans, never the agent): its
    /// sink is ``RealtimeAgent/listenSink``. Change what the agent hears with
    /// `(hears.source as? Mixer)?.setInputs(_:)`.
    public let hears: AudioTrack
}

extension RealtimeAgent {
    /// Puts the agent in `room`: adds its voice track (`voiceName`) and a mix-minus (`hearsName`, a
    /// derived track) with ``listenSink`` attached, then ``hear(_:)`` each of `humans`. Call before
    /// ``start()`` and from the control side (not the room clock's thread). `room`'s add-track
    /// handler sees both new tracks (the mix-minus before it has any input).
    @discardableResult
    public func attach(
        to room: Room, hearing humans: [AudioTrack], voiceName: String = "agent", hearsName: String = "agent-hears"
    ) -> AgentTracks {
        let voiceTrack = room.addTrack(name: voiceName, source: voice, role: .agentVoice)
        let hears = room.addMix(name: hearsName, inputs: [], channels: 1, role: .agentHearing)
        // What the agent hears is what is heard of this mix-minus: `mute agent-hears` deafens it.
        hears.addSink(listenSink, tap: .heard)
        hearingTrack = hears
        for track in humans { hear(track) }
        return AgentTracks(voice: voiceTrack, hears: hears)
    }

    /// Lets the agent hear `track` (a human joining now or later): adds it to the mix-minus and
    /// puts a talk-detection sink on it for transcript attribution. Both take the track as heard
    /// (after its mute, volume and solo), so a muted speaker is neither heard nor credited. The
    /// agent's own tracks are refused. Idempotent; any thread but the room clock's; does nothing
    /// before ``attach(to:hearing:voiceName:hearsName:)``.
    public func hear(_ track: AudioTrack) {
        guard let hears = hearingTrack, track.role.isSpeaker, !isOwn(track) else { return }
        track.addSink(speakers.sink(for: track), tap: .heard)
        hears.mixer?.addInput(track)
    }

    /// True for the tracks the agent added to the room (its voice and its mix-minus).
    public func isOwn(_ track: AudioTrack) -> Bool {
        track.source === voice || hearingTrack === track
    }
}
