import Foundation
public import RoomTapCore
import RoomTapJSON
public import RoomTapRTP
import RoomTapSync
import RoomTapWebRTC

/// roomtap as the receiver of Sora's audio streaming (what Shiguredo's suzu normally is): Sora
/// sends each connection's audio as its own HTTP/2 request, `POST /speech` with the headers
/// `sora-channel-id`, `sora-session-id`, `sora-connection-id` and
/// `sora-audio-streaming-language-code`, whose body is Opus packets behind 20-byte headers
/// (``SoraStreamingFrame``; `audio_streaming_header = true` in `sora.conf`).
///
/// Each connection id is a track of the ``LiveRoom`` (``SoraConnectionTrack``), named by
/// ``Options/names`` or by the id itself; a second request for an id continues its track. Other
/// paths get 404, other methods 405, a request without `sora-connection-id` 400, a second request
/// for a connection that is streaming now 409, one past the room's track limit 503; each with a
/// JSON body `{"type":"error","reason":...}` and, for the 400s, a log line.
///
/// Thread: `init`, ``attach(to:)``, ``stop()`` from a control thread; ``connections`` and
/// ``takeLogLines()`` anywhere; the requests on the server's own thread (`roomtap.h2`).
public final class SoraAudioStreaming: HTTP2ServerDelegate, @unchecked Sendable {
    /// Where and how to listen.
    public struct Options: Sendable {
        /// The address to listen on (port 0: the kernel picks one, see ``address``).
        public var listen: ListenAddress
        /// Track names by Sora connection id (`--sora-name`); others are named by their id.
        public var names: [String: String] = [:]
        /// PEM certificate chain and private key: serve `https://` (TLS 1.2+, ALPN h2); nil: h2c.
        public var tlsCertificate: String?
        public var tlsKey: String?
        /// Whether responses carry result lines (``SoraAudioStreaming/postResult(track:text:start:end:)``,
        /// `--transcribe`) and stay open a while after the body ends for the last of them.
        public var results: Bool

        public init(
            listen: ListenAddress, names: [String: String] = [:], tlsCertificate: String? = nil, tlsKey: String? = nil,
            results: Bool = false
        ) {
            self.results = results
            self.listen = listen
            self.names = names
            self.tlsCertificate = tlsCertificate
            self.tlsKey = tlsKey
        }
    }

    /// Why the server cannot run.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Log lines kept for ``takeLogLines()`` at most (later ones are counted, not kept).
    public static let maxPendingLogLines = 256

    /// The options given.
    public let options: Options
    /// Set once in `init` (the server needs `self` as its delegate).
    private var server: HTTP2Server!
    private let clock = SoraStreamClock()
    private let state = Locked(State())
    /// Told ``RoomBus/Event/warningQueued`` when a log line is queued.
    private let warningBus = RoomBusLink()

    /// Posts ``RoomBus/Event/warningQueued`` to `bus` whenever a log line is queued, so that its
    /// drainer takes them (``takeLogLines()``) when they come. Any thread; the last bus given wins.
    public func postLogLines(to bus: RoomBus) { warningBus.connect(bus) }

    private struct State {
        var live: LiveRoom?
        var tracks: [String: SoraConnectionTrack] = [:]
        var order: [SoraConnectionTrack] = []
        var logLines: [String] = []
        var droppedLogLines = 0
        var refused = 0
    }

    /// Binds the listening socket (before the output directory is touched: an address in use
    /// costs nothing). Requests are served from ``attach(to:)`` on. Throws a one-line reason.
    public init(options: Options) throws(SetupError) {
        self.options = options
        do {
            var tls: TLSServerContext?
            if let certificate = options.tlsCertificate, let key = options.tlsKey {
                tls = try TLSServerContext(certificate: certificate, key: key)
            }
            server = try HTTP2Server(address: options.listen, delegate: self, tls: tls)
        } catch {
            throw SetupError(description: "--sora-audio-streaming: \(error.description)")
        }
    }

    /// The address bound (the kernel's port when 0 was asked).
    public var address: ListenAddress { server.address }

    /// Where Sora posts: `http://ADDR/speech`, or `https://` with TLS.
    public var url: String { "\(options.tlsCertificate == nil ? "http" : "https")://\(address)/speech" }

    /// The connections seen so far, in the order they first streamed. Any thread.
    public var connections: [SoraConnectionTrack] { state.withLock { $0.order } }

    /// Requests refused before their body (404, 405, 400, 409, 503) and HTTP/1 clients. Any thread.
    public var refusedRequests: Int { state.withLock { $0.refused } }

    /// Starts serving: new connection ids become tracks of `live`. Idempotent.
    public func attach(to live: LiveRoom) {
        state.withLock { $0.live = live }
        server.start()
    }

    /// Stops serving: open requests are cancelled (their tracks go silent), connections closed.
    /// Idempotent; returns when the server's thread has ended.
    public func stop() { server.stop() }

    /// Sends a final transcription of track `name` to its connection's open response, as one line
    /// in suzu's shape with the connection and room times: `{"type": "openai", "is_final": true,
    /// "message": text, "connection_id": ..., "start": s, "end": s}` (`start`, `end`: room seconds,
    /// where the files hold the words). Ignored for a track that is not a Sora connection's or
    /// without ``Options/results``; dropped (counted in the connection's report) when no request of
    /// the connection is open or its client does not read. Any thread; never blocks.
    public func postResult(track name: String, text: String, start: Double, end: Double) {
        guard options.results, let track = state.withLock({ s in s.order.first { $0.name == name } }) else { return }
        let line = JSONValue.object([
            "type": .string("openai"), "is_final": .bool(true), "message": .string(text),
            "connection_id": .string(track.connectionID), "start": .number(Self.rounded(start)),
            "end": .number(Self.rounded(end)),
        ]).jsonText
        if track.results.post(line) { server.wake() }
    }

    /// Seconds to the millisecond, as transcript.jsonl has them.
    private static func rounded(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    /// Log lines since the last call (what went wrong with which request), plus a line counting
    /// those not kept. Any thread.
    public func takeLogLines() -> [String] {
        state.withLock { s in
            var lines = s.logLines
            if s.droppedLogLines > 0 {
                lines.append("sora audio streaming: \(s.droppedLogLines) more log lines not shown")
            }
            s.logLines.removeAll()
            s.droppedLogLines = 0
            return lines
        }
    }

    private func log(_ line: String) {
        state.withLock { s in
            if s.logLines.count < Self.maxPendingLogLines { s.logLines.append(line) } else { s.droppedLogLines += 1 }
        }
        warningBus.post(.warningQueued)
    }

    // MARK: - HTTP2ServerDelegate (the server's thread)

    package func open(_ head: HTTP2RequestHead, peer: String) -> HTTP2Disposition {
        let path = head.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        guard path == "/speech" else {
            return refuse(404, "no such path \(Self.quoted(head.path)): Sora's audio streaming posts to /speech")
        }
        guard head.method == "POST" else { return refuse(405, "\(head.method) /speech: only POST is taken") }
        guard let id = head.field("sora-connection-id"), !id.isEmpty else {
            let reason = "the request has no sora-connection-id header"
            log("sora audio streaming: a request from \(peer): \(reason); answered 400")
            return refuse(400, reason)
        }
        guard id.utf8.count <= 255, id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            let reason = "the sora-connection-id \(Self.quoted(id)) is not a Sora connection id"
            log("sora audio streaming: a request from \(peer): \(reason); answered 400")
            return refuse(400, reason)
        }
        // Tracks are made on this thread only, and outside the lock: adding one runs the room's
        // add-track handler (a recorder opens the file there), which must not hold up readers of
        // `connections`.
        let (existing, live) = state.withLock { ($0.tracks[id], $0.live) }
        var found = existing
        if found == nil, let live {
            let taken = Set(live.room.tracks.map(\.name))
            let wanted = TrackNaming.sanitize(options.names[id] ?? id, fallback: "sora-connection")
            let name = TrackNaming.unique(wanted, taken: taken)
            if let stream = live.addJoinedTrack(name: name) {
                let track = SoraConnectionTrack(connectionID: id, name: name, stream: stream)
                state.withLock {
                    $0.tracks[id] = track
                    $0.order.append(track)
                }
                found = track
            }
        }
        guard let track = found else {
            let reason = "the room has as many tracks as it may (--max-tracks): connection \(id) is not recorded"
            log("sora audio streaming: \(reason)")
            return refuse(503, reason)
        }
        guard !track.isStreaming else {
            return refuse(409, "connection \(id) is streaming in another request already")
        }
        track.beginRequest(head)
        return .handle(
            SoraStreamRequest(
                track: track, clock: clock, peer: peer, maxBackdate: maxBackdate(),
                results: options.results ? track.results : nil, log: { [weak self] in self?.log($0) }))
    }

    /// How far a late request's first packet may be dated back: the record delay less 200 ms
    /// (time to decode), none in a room without a record delay.
    private func maxBackdate() -> UInt64 {
        let record = state.withLock { $0.live?.options.recordDelayMilliseconds } ?? 0
        return UInt64(max(0, record - 200)) * 1_000_000
    }

    package func refusedHTTP1(peer: String) {
        state.withLock { $0.refused += 1 }
        log(
            "sora audio streaming: refused an HTTP/1 request from \(peer): it takes HTTP/2 only "
                + "(sora.conf audio_streaming_url = http://HOST:PORT/speech, h2c with prior knowledge)")
    }

    package func protocolError(peer: String, reason: String) {
        log("sora audio streaming: closed the connection from \(peer): \(reason)")
    }

    private func refuse(_ status: Int, _ reason: String) -> HTTP2Disposition {
        state.withLock { $0.refused += 1 }
        let body = JSONValue.object(["type": .string("error"), "reason": .string(reason)]).jsonText + "\n"
        return .respond(HTTP2Response(status: status, body: Array(body.utf8)))
    }

    /// `text` quoted for a message, at most 80 characters of it.
    private static func quoted(_ text: String) -> String {
        let shown = text.count > 80 ? String(text.prefix(80)) + "..." : text
        return JSONValue.string(shown).jsonText
    }
}
