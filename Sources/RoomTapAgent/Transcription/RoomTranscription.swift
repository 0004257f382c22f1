import Foundation
public import RoomTapCore
import RoomTapSync

/// Per-speaker transcription of a room: every speaker's track gets a ``SpeakerTranscriber`` of
/// its own, when it is there at the start or whenever it joins, so every line of the transcript
/// is that speaker's (no diarization), on the room timeline of their file.
///
/// Only speakers (``TrackRole/isSpeaker``) are transcribed: never a mix, nor the agent's voice or
/// hearing (its lines come from its own session), nor tracks `skip` refuses.
///
/// Thread: ``transcribe(_:)`` from any thread but the room clock's (the room's add-track handler
/// runs it on whichever thread adds the track); ``finish(timeout:)`` on a control thread, once the
/// room has stopped; ``speakers`` anywhere.
public final class RoomTranscription: Sendable {
    private let configure: @Sendable (_ speaker: String) -> RealtimeAgentConfiguration
    private let skip: @Sendable (AudioTrack) -> Bool
    private let state = Locked<(transcribers: [TrackID: SpeakerTranscriber], order: [TrackID], finished: Bool)>(
        ([:], [], false))

    /// `configure` gives each speaker's session configuration (usually
    /// ``RealtimeAgentConfiguration/transcription(apiKey:url:settings:speaker:gate:chunkMilliseconds:transcript:log:)``);
    /// `skip` leaves tracks out.
    public init(
        configure: @escaping @Sendable (_ speaker: String) -> RealtimeAgentConfiguration,
        skip: @escaping @Sendable (AudioTrack) -> Bool = { _ in false }
    ) {
        self.configure = configure
        self.skip = skip
    }

    /// Starts transcribing `track` (a speaker) in a session of its own. Does nothing for a track
    /// whose role is not a speaker's, a skipped one, one already transcribed (a returning participant keeps
    /// theirs) or after ``finish(timeout:)``. Throws only if libsoxr cannot be set up.
    public func transcribe(_ track: AudioTrack) throws {
        guard track.role.isSpeaker, !skip(track) else { return }
        let known = state.withLock { $0.finished || $0.transcribers[track.id] != nil }
        guard !known else { return }
        let transcriber = try SpeakerTranscriber(track: track, configuration: configure(track.name))
        let added = state.withLock { s -> Bool in
            guard !s.finished, s.transcribers[track.id] == nil else { return false }
            s.transcribers[track.id] = transcriber
            s.order.append(track.id)
            return true
        }
        if added { transcriber.start() }
    }

    /// The transcribers, in the order their speakers came.
    public var speakers: [SpeakerTranscriber] {
        state.withLock { s in s.order.compactMap { s.transcribers[$0] } }
    }

    /// The room has stopped: every speaker's last turns are transcribed, side by side (each up to
    /// `timeout`), then every session ends. Blocks. Idempotent.
    public func finish(timeout: Duration) {
        let all = state.withLock { s -> [SpeakerTranscriber] in
            s.finished = true
            return s.order.compactMap { s.transcribers[$0] }
        }
        let group = DispatchGroup()
        for transcriber in all {
            DispatchQueue.global().async(group: group) { transcriber.finish(timeout: timeout) }
        }
        group.wait()
    }
}
