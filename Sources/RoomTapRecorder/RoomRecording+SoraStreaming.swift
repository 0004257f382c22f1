import Foundation
import RoomTapAll

/// `--sora-audio-streaming HOST:PORT`: roomtap as the receiver of Sora's audio streaming
/// (RoomTapSora): each Sora connection's `POST /speech` request a track of the live room.
extension RoomRecording {
    /// Binds the HTTP/2 listener before DIR is touched (an address in use costs nothing). Nothing
    /// to do without the option (nil). Throws the one line. The room's thread.
    func bindSoraStreaming() throws(SoraAudioStreaming.SetupError) -> SoraAudioStreaming? {
        guard let address = plan.options.soraStreaming else { return nil }
        // The room file's `sora` names, then --sora-name (which wins for an id given in both).
        let names = (plan.description?.soraNames ?? [:]).merging(plan.options.soraNames) { $1 }
        let server = try SoraAudioStreaming(
            options: .init(
                listen: address, names: names, tlsCertificate: plan.options.soraTLS?.certificate,
                tlsKey: plan.options.soraTLS?.key, results: plan.options.transcribe != nil))
        return server
    }

    /// Starts `server` taking requests into `live` (nothing without one); says where when port 0
    /// was asked (like `--listen`). With `--transcribe`, each speaker's line in `transcript` also
    /// goes to the response of the connection the speaker is.
    func attachSoraStreaming(_ server: SoraAudioStreaming?, transcript: TranscriptWriter?, to live: LiveRoom) {
        guard let server else { return }
        if plan.options.transcribe != nil, let transcript {
            transcript.observe { [weak server] entry in
                server?.postResult(
                    track: entry.speaker, text: entry.text, start: Double(entry.startSample) / 48_000,
                    end: Double(entry.endSample) / 48_000)
            }
        }
        server.attach(to: live)
        if plan.options.soraStreaming?.port == 0 {
            plan.context.console.error("roomtap: sora audio streaming on \(server.url)\n")
        }
    }

    /// What went wrong with `server`'s requests since the last call, as warnings. The supervisor.
    func printSoraStreamingWarnings(_ server: SoraAudioStreaming?) {
        for line in server?.takeLogLines() ?? [] { plan.context.console.printWarning(line) }
    }
}

extension RoomReport {
    /// `--sora-audio-streaming`: where roomtap listened and each Sora connection it recorded.
    struct SoraStreamingReport: Codable {
        var listen: String
        /// Requests refused before their body (404, 405, 400, 409, 503) and HTTP/1 clients.
        var refusedRequests: Int
        var connections: [Connection]

        struct Connection: Codable {
            var connectionID: String
            var track: String
            var channelID: String?
            var sessionID: String?
            var languageCode: String?
            var requests: Int
            var packets: Int
            var bytes: Int
            /// Requests ended with 400 by a malformed frame, and why the last one was.
            var malformed: Int
            var lastError: String?
            /// Requests the client ended before their body did.
            var cancelled: Int
            /// `--transcribe`: result lines sent in the connection's responses, and dropped.
            var resultLines: Int
            var droppedResultLines: Int
        }

        init(_ server: SoraAudioStreaming) {
            listen = server.address.description
            refusedRequests = server.refusedRequests
            connections = server.connections.map { track in
                let r = track.report
                return Connection(
                    connectionID: r.connectionID, track: r.track, channelID: r.channelID, sessionID: r.sessionID,
                    languageCode: r.languageCode, requests: r.requests, packets: r.packets, bytes: r.bytes,
                    malformed: r.malformed, lastError: r.lastError, cancelled: r.cancelled, resultLines: r.resultLines,
                    droppedResultLines: r.droppedResultLines)
            }
        }
    }
}
