public import RoomTapCore

/// One speaker's transcription: their own track's record goes, through a ``VoiceGate``, to a
/// transcription session of their own (a ``RealtimeAgent`` whose configuration is
/// ``RealtimeAgentConfiguration/transcription(apiKey:url:settings:speaker:gate:chunkMilliseconds:transcript:log:)``),
/// so every line is theirs, with no diarization, at the room times their file holds the words.
///
/// The session is the agent's: the same connection lifecycle (backoff with jitter, the floor
/// between attempts, the rollover before a session's end, a fatal line for what will not heal),
/// the same listen path (resampled to 24 kHz, chunked, a bounded queue that drops rather than
/// hold the clock). One speaker's session failing touches no other speaker and not the room.
///
/// The sink hears the track's `.recorded` tap: a speaker off the record (muted with scope
/// `record` or `all`) is silent there, so the gate sends nothing of them.
///
/// Thread: `init`, ``start()``, ``finish(timeout:)`` on a control thread (never the room clock's);
/// ``statistics`` from any thread.
public final class SpeakerTranscriber: Sendable {
    /// The speaker's track.
    public let track: AudioTrack
    /// The transcription session.
    public let session: RealtimeAgent

    /// Sets up the session (nothing connects yet). Throws only if libsoxr cannot be set up.
    public init(track: AudioTrack, configuration: RealtimeAgentConfiguration) throws {
        self.track = track
        session = try RealtimeAgent(configuration: configuration)
    }

    /// Attaches the listen sink to the track (its record) and starts connecting. Idempotent for
    /// the session; call once.
    public func start() {
        track.addSink(session.listenSink, tap: .recorded)
        session.start()
    }

    /// The room has stopped: the last turns are transcribed (up to `timeout`), then the session
    /// ends. Blocks. Idempotent.
    public func finish(timeout: Duration) {
        session.finishTranscription(timeout: timeout)
    }

    /// What this speaker's transcription did.
    public var statistics: SpeakerTranscriptionStatistics {
        let s = session.statistics
        return SpeakerTranscriptionStatistics(
            speaker: track.name, state: s.state, failure: s.failure, lastError: s.lastError,
            secondsSent: Double(s.audioBytesSent) / 48_000, framesGated: session.listenSink.gatedFrames,
            framesSent: session.listenSink.passedFrames, sessions: s.sessions, reconnects: s.reconnects,
            rollovers: s.rollovers,
            retries: s.retries, errors: s.errors, transcriptionFailures: s.transcriptionFailures,
            droppedFrames: s.listenDroppedFrames)
    }
}

/// One speaker's transcription figures (room.json's `transcription.speakers`).
///
/// Thread: a value.
public struct SpeakerTranscriptionStatistics: Sendable, Codable, Equatable {
    /// The track's name.
    public var speaker: String
    /// The session's state (`connected`, `reconnecting`, `failed`, `stopped`…).
    public var state: RealtimeAgentState
    /// Why it stopped for good, if it did (one line).
    public var failure: String?
    public var lastError: String?
    /// Audio sent to the service, in seconds (24 kHz PCM16: what is billed).
    public var secondsSent: Double
    /// 10 ms frames the gate held back (silence, never sent) and frames let through.
    public var framesGated: Int
    public var framesSent: Int
    /// Sessions opened (the first, reconnects and rollovers).
    public var sessions: Int
    public var reconnects: Int
    public var rollovers: Int
    public var retries: Int
    public var errors: Int
    /// Turns the service could not transcribe.
    public var transcriptionFailures: Int
    /// Frames dropped because the session could not keep up (the room never waits).
    public var droppedFrames: Int
}
