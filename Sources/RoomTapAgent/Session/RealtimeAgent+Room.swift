public import RoomTapCore

/// The tracks an agent adds to a room.
public struct AgentTracks: Sendable {
    /// The agent's voice (source ``RealtimeAgent/voice``): record it, mix it, send it.
    public let voice: AudioTrack
    /// The mix-minus the agent hears (a ``Mixer`` of the chosen humans, never the agent): its
    /// sink is ``RealtimeAgent/listenSink``. Change what the agent hears with
    /// `(hears.source as? Mixer)?.setInputs(_:)`.
    public let hears: AudioTrack

    /// Adds an agent's voice (`voice`, role `agent-voice`) and its mix-minus (role
    /// `agent-hearing`, no input yet) to `room`, with `listener` on what is heard of the mix-minus
    /// (so `mute agent-hears` deafens the agent). Control side.
    static func add(
        to room: Room, voice: any FrameSource, listener: any AudioTrackSink, voiceName: String, hearsName: String
    ) -> AgentTracks {
        let voiceTrack = room.addTrack(name: voiceName, source: voice, role: .agentVoice)
        let hears = room.addMix(name: hearsName, inputs: [], channels: 1, role: .agentHearing)
        hears.addSink(listener, tap: .heard)
        return AgentTracks(voice: voiceTrack, hears: hears)
    }
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
        let tracks = AgentTracks.add(
            to: room, voice: voice, listener: listenSink, voiceName: voiceName, hearsName: hearsName)
        hearingTrack = tracks.hears
        for track in humans { hear(track) }
        return tracks
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
