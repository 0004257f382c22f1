import RoomTapJSON

/// One `POST /speech` request of Sora's audio streaming: reads the body's frames
/// (``SoraStreamingFrame``) and hands each to the connection's track when it is due
/// (``SoraStreamClock``), so a body that comes faster than real time is taken at the pace of its
/// timestamps: the bytes not yet due stay unconsumed, and HTTP/2 flow control holds the sender
/// back (``HTTP2ServiceResult/consumed``).
///
/// Answers, as suzu does, with `200` and `content-type: application/json`. Without results
/// (``init``'s `results` nil) the answer comes once the body has ended and every packet is on the
/// track, with an empty body. With them (`--transcribe`), each result line posted for the
/// connection (``SoraResultLines``: one JSON object a line, a final transcription of the speaker)
/// goes out as soon as it is posted, the `200` head with the first, while the body still streams;
/// after the body ends the response stays open until no line has come for ``resultLinger`` (the
/// words spoken last are transcribed after they were sent), then ends. Lines are held back while
/// more than ``maxUnsentResponse`` bytes of the response wait for the client to read them (HTTP/2
/// flow control), and the line queue is bounded, so a client that does not read loses lines
/// (counted), never the transcript's writer its time.
///
/// A malformed frame (length 0, more than 1500 bytes, or cut short by the end of the body) ends
/// the request with `400` and `{"type":"error","reason":...}`, and a log line; the packets before
/// it stay on the track, and the room and every other request go on. When result lines went out
/// already the status was `200`: the error line ends the stream then.
///
/// Thread: confined to the server's thread (an ``HTTP2RequestHandler``).
final class SoraStreamRequest: HTTP2RequestHandler {
    private let track: SoraConnectionTrack
    private let clock: SoraStreamClock
    private let log: (String) -> Void
    private let peer: String
    private let maxBackdate: UInt64
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    private var shift: Int64?
    private var frames = 0
    /// The connection's result lines (nil: no results, the response comes at the body's end).
    private let results: SoraResultLines?
    /// When the body ended, and when the last result line was taken (`CLOCK_MONOTONIC` ns).
    private var endedAt: UInt64?
    private var lastResultAt: UInt64 = 0
    /// Whether the response's head went out with a result line (the status is 200 then).
    private var streaming = false

    /// How long the response stays open after the body ended without a new result line (ns).
    static let resultLinger: UInt64 = 3_000_000_000
    /// Bytes of streamed response the client may leave unread before lines are held back.
    static let maxUnsentResponse = 64 * 1024

    /// `maxBackdate`: ns a late first packet may be dated back (see ``arrival(due:now:)``).
    /// `results`: the connection's result lines, opened here and closed when the request ends.
    init(
        track: SoraConnectionTrack, clock: SoraStreamClock, peer: String, maxBackdate: UInt64,
        results: SoraResultLines? = nil, log: @escaping (String) -> Void
    ) {
        self.results = results
        results?.open()
        self.maxBackdate = maxBackdate
        self.track = track
        self.clock = clock
        self.peer = peer
        self.log = log
    }

    func receive(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    func endOfBody() { ended = true }

    func service(now: UInt64, unsentResponse: Int) -> HTTP2ServiceResult {
        var result = serviceBody(now: now)
        guard let results else { return result }
        if unsentResponse < Self.maxUnsentResponse || result.response != nil {
            let lines = results.take()
            if !lines.isEmpty {
                lastResultAt = now
                streaming = true
                result.streamed = HTTP2Response(status: 200, contentType: "application/json", body: lines)
            }
        }
        if result.response != nil { results.close() }
        return result
    }

    /// The body's frames due at `now`, and the response once the request is done.
    private func serviceBody(now: UInt64) -> HTTP2ServiceResult {
        var consumed = 0
        while true {
            let parsed = buffer.withUnsafeBytes {
                SoraStreamingFrame.parse(UnsafeRawBufferPointer(rebasing: $0[start...]))
            }
            switch parsed {
            case .frame(let frame):
                if shift == nil {
                    shift = clock.shift(forFirst: frame.timestamp, arrivedAt: now)
                    if shift != 0 {
                        log(
                            "\(subject): its timestamps are \(Double(shift!) / 1e9) s off the room's clock; "
                                + "placed from its arrival instead")
                    }
                }
                let due = clock.dueTime(of: frame.timestamp, shift: shift!)
                if due > Int64(bitPattern: now) {
                    compact()
                    return HTTP2ServiceResult(consumed: consumed, wakeAt: UInt64(due))
                }
                buffer.withUnsafeBytes {
                    let payload = UnsafeRawBufferPointer(
                        rebasing: $0[(start + frame.payloadRange.lowerBound)..<(start + frame.payloadRange.upperBound)])
                    track.deliver(frame, payload: payload, arrival: arrival(due: due, now: now))
                }
                start += frame.size
                consumed += frame.size
                frames += 1
            case .needMore(let need):
                let have = buffer.count - start
                guard ended else {
                    compact()
                    return HTTP2ServiceResult(consumed: consumed)
                }
                if have > 0 { return fail(.truncated(have: have, need: need), consumed: consumed) }
                if endedAt == nil {
                    endedAt = now
                    track.endRequest()
                }
                if results != nil, let endedAt {
                    let until = max(endedAt, lastResultAt) + Self.resultLinger
                    if now < until { return HTTP2ServiceResult(consumed: consumed, wakeAt: until) }
                }
                return HTTP2ServiceResult(
                    consumed: consumed, response: HTTP2Response(status: 200, contentType: "application/json"))
            case .invalid(let failure):
                return fail(failure, consumed: consumed)
            }
        }
    }

    func cancel(serverStopping: Bool) {
        results?.close()
        // The body had ended: the track's audio ended with it.
        guard endedAt == nil else { return }
        // The recording stops: the track's audio ends with it; nothing the client did wrong.
        guard !serverStopping else {
            track.endRequest()
            return
        }
        track.endRequest(cancelled: true)
        log(
            "\(subject): the client ended the request after \(frames) packets; "
                + "the track goes silent until it streams again")
    }

    /// When the track is told a packet arrived: now, except for a request's first packet that
    /// comes after it was due (a sender that started late, a stall on the way): that one is dated
    /// back to when it was due, by at most ``maxBackdate``, so the request is anchored where its
    /// timestamps put it (the record waits `--record-delay` and places it exactly; the live playout
    /// finds the packets after it late and adapts, as it does to a late network).
    private func arrival(due: Int64, now: UInt64) -> UInt64 {
        guard frames == 0, due < Int64(bitPattern: now) else { return now }
        let floor = now > maxBackdate ? now - maxBackdate : 0
        return max(UInt64(max(0, due)), floor)
    }

    private var subject: String { "sora audio streaming: connection \(track.connectionID) (\(peer))" }

    private func fail(_ failure: SoraStreamingFrame.Failure, consumed: Int) -> HTTP2ServiceResult {
        let reason = "after \(frames) packets, \(failure)"
        let answer = streaming ? "ended its response (200, results sent) with an error line" : "answered 400"
        log("\(subject): \(reason); \(answer), the other streams go on")
        track.endRequest(failure: reason)
        let remaining = buffer.count - start
        buffer = []
        start = 0
        let body = JSONValue.object(["type": .string("error"), "reason": .string(reason)]).jsonText + "\n"
        return HTTP2ServiceResult(
            consumed: consumed + remaining, response: HTTP2Response(status: 400, body: Array(body.utf8)))
    }

    /// Drops the bytes already taken once they are most of the buffer.
    private func compact() {
        guard start > 0, start >= buffer.count / 2 || start > 64 * 1024 else { return }
        buffer.removeFirst(start)
        start = 0
    }
}
