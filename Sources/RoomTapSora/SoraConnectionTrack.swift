import COpus
public import RoomTapRTP
import RoomTapSync

/// One Sora connection's track of the live room: every request Sora makes for that connection id
/// feeds it, as RTP packets of a ``JoinedStream``, so it has the exact record path of every live
/// track (placed by timestamp, a lost packet concealed by one libopus PLC call, a pause silent).
///
/// A Sora frame becomes an RTP packet (RFC 3550, Opus at 48 kHz per RFC 7587 §4.1): the low 16
/// bits of Sora's sequence number (the jitter buffer unwraps them) and a 48 kHz timestamp from
/// ``SoraTimestampMapping``. Every packet placed at its own timestamp also tells the jitter
/// buffer, as an RTCP sender report would, that this RTP timestamp is that instant of Sora's
/// clock (NTP), so every connection lands on one timeline: the distance between two tracks is
/// the distance between their timestamps, to the sample.
///
/// The end of a request ends the track's audio (``JoinedStream/leave()``: the record plays out
/// what it holds, then silence); a later request for the same connection id continues the track.
///
/// Thread: ``deliver(_:payload:arrival:)``, ``beginRequest(_:)`` and ``endRequest(failure:)`` on the
/// audio-streaming server's thread only; ``report`` and the names anywhere.
public final class SoraConnectionTrack: @unchecked Sendable {
    /// What room.json says about the connection.
    public struct Report: Sendable, Equatable {
        /// Sora's `sora-connection-id`.
        public var connectionID: String
        /// The track's name.
        public var track: String
        /// `sora-channel-id`, `sora-session-id`, `sora-audio-streaming-language-code` of the
        /// latest request (nil when absent).
        public var channelID: String?
        public var sessionID: String?
        public var languageCode: String?
        /// Requests received for the connection.
        public var requests = 0
        /// Frames handed to the track.
        public var packets = 0
        /// Payload bytes handed to the track.
        public var bytes = 0
        /// Requests ended by a malformed body (answered 400).
        public var malformed = 0
        /// Requests the client reset or abandoned before their end.
        public var cancelled = 0
        /// Why the latest malformed request was refused.
        public var lastError: String?
        /// Whether a request is streaming now.
        public var streaming = false
        /// Result lines (`--transcribe`) sent in the connection's responses, and those dropped
        /// (no request open when they came, or a client that did not read them).
        public var resultLines = 0
        public var droppedResultLines = 0
    }

    /// Sora's connection id.
    public let connectionID: String
    /// The track's name in the room.
    public let name: String
    /// The track's stream.
    public let stream: JoinedStream
    /// The SSRC its RTP packets carry (fixed per connection).
    let ssrc: UInt32
    private let state: Locked<Report>

    // Server thread only.
    private var mapping = SoraTimestampMapping()
    private var scratch = [UInt8](repeating: 0, count: RTPPacket.fixedHeaderSize + SoraStreamingFrame.maxPayload)

    init(connectionID: String, name: String, stream: JoinedStream) {
        self.connectionID = connectionID
        self.name = name
        self.stream = stream
        // FNV-1a of the id: any fixed value would do; a stable one reads better in logs.
        var hash: UInt32 = 0x811C_9DC5
        for byte in connectionID.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        ssrc = hash
        state = Locked(Report(connectionID: connectionID, track: name))
    }

    /// The connection's result lines on their way to its open response.
    let results = SoraResultLines()

    /// The connection's figures now. Any thread.
    public var report: Report {
        var report = state.withLock { $0 }
        (report.resultLines, report.droppedResultLines) = results.counts
        return report
    }

    /// Whether a request of this connection is open. Any thread.
    var isStreaming: Bool { state.withLock { $0.streaming } }

    /// A request for the connection begins (its Sora headers noted). Server thread.
    func beginRequest(_ head: HTTP2RequestHead) {
        mapping.reset()
        state.withLock {
            $0.requests += 1
            $0.streaming = true
            $0.channelID = head.field("sora-channel-id")
            $0.sessionID = head.field("sora-session-id")
            $0.languageCode = head.field("sora-audio-streaming-language-code")
        }
    }

    /// The request ended (`failure`: why it was refused; `cancelled`: the client reset it): the
    /// track's audio ends here until the next request. Server thread.
    func endRequest(failure: String? = nil, cancelled: Bool = false) {
        state.withLock {
            $0.streaming = false
            if let failure {
                $0.malformed += 1
                $0.lastError = failure
            }
            if cancelled { $0.cancelled += 1 }
        }
        stream.leave()
    }

    /// Hands one frame to the track at `arrival` (`CLOCK_MONOTONIC` ns). Server thread.
    func deliver(_ frame: SoraStreamingFrame, payload: UnsafeRawBufferPointer, arrival: UInt64) {
        let samples = payload.baseAddress.map {
            opus_packet_get_nb_samples($0.assumingMemoryBound(to: UInt8.self), Int32(payload.count), 48_000)
        }
        let duration = UInt32(max(0, samples ?? 0))
        let (timestamp, placed) = mapping.rtpTimestamp(of: frame, duration: duration)
        let size = RTPPacket.fixedHeaderSize + payload.count
        scratch.withUnsafeMutableBytes { out in
            out[0] = 0x80
            out[1] = 111
            let sequence = UInt16(truncatingIfNeeded: frame.sequence)
            out[2] = UInt8(sequence >> 8)
            out[3] = UInt8(truncatingIfNeeded: sequence)
            for i in 0..<4 { out[4 + i] = UInt8(truncatingIfNeeded: timestamp >> UInt32(24 - 8 * i)) }
            for i in 0..<4 { out[8 + i] = UInt8(truncatingIfNeeded: ssrc >> UInt32(24 - 8 * i)) }
            out.baseAddress!.advanced(by: RTPPacket.fixedHeaderSize).copyMemory(
                from: payload.baseAddress!, byteCount: payload.count)
            if let packet = RTPPacket.parse(UnsafeRawBufferPointer(rebasing: out[0..<size])).packet {
                stream.receive(packet, arrival: arrival)
            }
        }
        if placed {
            stream.participant.buffer.noteSenderReport(
                ntp: SoraTimestampMapping.ntp(of: frame.timestamp), rtpTimestamp: timestamp)
        }
        state.withLock {
            $0.packets += 1
            $0.bytes += payload.count
        }
    }
}
