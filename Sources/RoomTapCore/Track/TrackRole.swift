/// What a track is in the room, said by whoever adds it (``Room/addTrack(name:source:role:)``,
/// ``Room/addMix(name:inputs:channels:role:)``) and fixed for the track's life. Routing, reports,
/// transcription and the agent decide by the role, never by a track's name or its source's type.
///
/// The raw value is the role's name in room.json and the control protocol (`"role"`).
public enum TrackRole: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A participant whose origin the adder did not say (a library user's own source).
    case speaker = "speaker"
    /// A participant played from a file (Ogg Opus, a container's Opus track, a Janus .mjr).
    case speakerFromFile = "speaker-file"
    /// A participant received from the network (RTP, a WebRTC join, Sora audio streaming).
    case speakerFromNetwork = "speaker-network"
    /// A participant captured from a microphone (ALSA).
    case speakerFromMicrophone = "speaker-microphone"
    /// The room's mix of its speakers.
    case mix = "mix"
    /// The voice of the room's agent (what it says).
    case agentVoice = "agent-voice"
    /// What the agent hears: the mix-minus of the speakers, without its own voice.
    case agentHearing = "agent-hearing"

    /// A person in the room (any origin): recorded, transcribed, mixed and heard by the agent.
    public var isSpeaker: Bool {
        switch self {
        case .speaker, .speakerFromFile, .speakerFromNetwork, .speakerFromMicrophone: true
        case .mix, .agentVoice, .agentHearing: false
        }
    }

    /// A track made of other tracks of the room (a ``Mixer``): it renders after every source
    /// track of the same tick, and its own controls shape only what is heard of it.
    public var isDerived: Bool { self == .mix || self == .agentHearing }

    /// The agent's own tracks (its voice and its hearing).
    public var isAgent: Bool { self == .agentVoice || self == .agentHearing }

    /// room.json's coarse `"kind"`: `"mix"` for derived tracks, else `"speaker"` (older readers).
    public var kind: String { isDerived ? "mix" : "speaker" }

    public var description: String { rawValue }
}
