import Foundation
import RoomTapAll

/// Per-speaker transcription of a recorded room (`record --transcribe`): a ``RoomTranscription``
/// whose every speaker's record goes to a transcription session of its own, lines into the room's
/// transcript.jsonl (shared with the agent, when there is one). Whatever happens to one speaker's
/// session, the others and the recording go on.
///
/// Thread: made on the recorder's main thread; `trackAdded` on whichever thread adds a track (the
/// room's add-track handler); `finish` on the main thread once the room has stopped.
final class RoomTranscriber: Sendable {
    let options: TranscribeOptions
    let transcription: RoomTranscription
    let url: String
    /// Where a speaker's session warns.
    let console: Console

    /// Checks the key; nothing connects until a speaker's track is added (the agent's own tracks
    /// are not speakers: see ``TrackRole``).
    init(
        options: TranscribeOptions, transcript: TranscriptWriter, environment: [String: String], console: Console
    ) throws {
        let key = try RoomAgent.apiKey(in: environment, azure: options.azure, option: "--transcribe")
        self.options = options
        self.console = console
        let settings = options.settings
        let url = options.url
        let probe = RealtimeAgentConfiguration.transcription(apiKey: "", url: url, settings: settings, speaker: "")
        self.url = probe.url
        transcription = RoomTranscription(
            configure: { speaker in
                RealtimeAgentConfiguration.transcription(
                    apiKey: key, url: url, settings: settings, speaker: speaker, transcript: transcript,
                    log: { line in console.printWarning("transcribe \(speaker): \(line)") })
            })
    }

    /// A track joined the room: a speaker gets a session of their own.
    func trackAdded(_ track: AudioTrack) {
        do { try transcription.transcribe(track) } catch {
            console.printWarning("transcribe \(track.name): cannot set up: \(error); not transcribed")
        }
    }

    /// The room has stopped: the last turns, then every session ends (at most `timeout`).
    func finish(timeout: Duration = .seconds(10)) { transcription.finish(timeout: timeout) }

    /// For room.json (never the key): the settings, and per speaker what was sent and how the
    /// session fared. `roomSeconds`: the room's length, for the share of it that was sent.
    struct Report: Codable {
        var model: String
        var language: String?
        var url: String
        var authentication: String
        /// Audio sent over all speakers, in seconds (what is billed), and the room's length.
        var secondsSent: Double
        var roomSeconds: Double
        var speakers: [Speaker]

        struct Speaker: Codable {
            var name: String
            var state: String
            var failure: String?
            var secondsSent: Double
            /// secondsSent / roomSeconds.
            var shareOfRoom: Double
            var sessions: Int
            var reconnects: Int
            var rollovers: Int
            var retries: Int
            var errors: Int
            var transcriptionFailures: Int
            var droppedFrames: Int
        }
    }

    func report(roomSeconds: Double) -> Report {
        let speakers = transcription.speakers.map { t -> Report.Speaker in
            let s = t.statistics
            return Report.Speaker(
                name: s.speaker, state: s.state.rawValue, failure: s.failure,
                secondsSent: (s.secondsSent * 1000).rounded() / 1000,
                shareOfRoom: roomSeconds > 0 ? (s.secondsSent / roomSeconds * 1000).rounded() / 1000 : 0,
                sessions: s.sessions, reconnects: s.reconnects,
                rollovers: s.rollovers, retries: s.retries, errors: s.errors,
                transcriptionFailures: s.transcriptionFailures, droppedFrames: s.droppedFrames)
        }
        let sent = transcription.speakers.reduce(0.0) { $0 + $1.statistics.secondsSent }
        return Report(
            model: options.model, language: options.language, url: url,
            authentication: RealtimeAuthentication.forURL(url).rawValue, secondsSent: (sent * 1000).rounded() / 1000,
            roomSeconds: (roomSeconds * 1000).rounded() / 1000, speakers: speakers)
    }
}
