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
    /// Puts the agent in `room`: adds its voice track (`voiceName`) and a mix-minus of `humans`
    /// (`hearsName`, a derived track) with ``listenSink`` attached, and attaches a speaker-activity
    /// sink to every human track for transcript attribution. Call before ``start()`` and from the
    /// control side (not the room clock's thread). `room`'s add-track handler sees both new tracks.
    ///
    /// A human track added later: `agent.speakers.sink(name:)` on it and, if the agent should hear
    /// it, `(tracks.hears.source as? Mixer)?.addInput(track)`.
    @discardableResult
    public func attach(
        to room: Room, hearing humans: [AudioTrack], voiceName: String = "agent", hearsName: String = "agent-hears"
    ) -> AgentTracks {
        for track in humans { track.addSink(speakers.sink(name: track.name)) }
        let voiceTrack = room.addTrack(name: voiceName, source: voice)
        let hears = room.addMix(name: hearsName, inputs: humans, channels: 1)
        hears.addSink(listenSink)
        return AgentTracks(voice: voiceTrack, hears: hears)
    }
}
