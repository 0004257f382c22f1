import Foundation
import RoomTap

/// `DIR/room.json`: what was recorded. The schema is documented in docs/CLI.md.
struct RoomReport: Codable {
    struct Source: Codable {
        var kind: String
        var path: String
        var offsetSamples: Int64
        var offsetSeconds: Double
        var durationSamples: Int64
        var truncated: Bool
        var corruptPages: Int
    }

    /// Live tracks: what the network delivered (RFC 3550 counters) and what the jitter buffer did.
    struct RTPStatistics: Codable {
        var port: UInt16
        var ssrc: UInt32?
        var packets: Int
        var bytes: Int
        var lost: Int
        var recoveredByFEC: Int
        var concealedMs: Int
        var late: Int
        var duplicates: Int
        var reordered: Int
        var restarts: Int
        var invalid: Int
        var jitterMs: Double
        var driftCorrectedSamples: Int
        /// Playout delay now / smallest / largest, ms, and the steps it took.
        var delayMs: Double
        var minDelayMs: Double
        var maxDelayMs: Double
        var delayAdaptations: Int
        /// Whether RTCP sender reports placed the track, and the shift they applied (ms).
        var senderReportTiming: Bool
        var senderReportCorrectionMs: Double
        var leaves: Int
        var leftAtEnd: Bool
        /// What the record playout (the files) did; nil without a record delay.
        var record: PlayoutFigures?
        /// What the live playout (what was heard) did; nil when nothing listened live.
        var live: PlayoutFigures?
        /// The record delay (ms) and how much earlier than its first packet's arrival the record
        /// placed the stream (its least-delayed packets, or its sender report), ms.
        var recordDelayMs: Double?
        var recordAnchorMs: Double?
    }

    /// One playout's figures: `lost` never arrived, `late` arrived after its place was played;
    /// `concealedMs` is their duration less what FEC recovered.
    struct PlayoutFigures: Codable {
        var lost: Int
        var late: Int
        var recoveredByFEC: Int
        var concealedMs: Double
        var driftCorrectedSamples: Int

        init(_ s: PlayoutStatistics) {
            lost = s.lost
            late = s.late
            recoveredByFEC = s.recoveredByFEC
            concealedMs = (s.concealedMilliseconds * 100).rounded() / 100
            driftCorrectedSamples = s.driftCorrectedSamples
        }
    }

    /// Live rooms: the receive side.
    struct Network: Codable {
        var listen: [String]
        var datagrams: Int
        var rtpPackets: Int
        var rtcpPackets: Int
        var invalidRTP: Int
        var droppedUnknownPayloadType: Int
        var droppedTooManyTracks: Int
        var droppedUnlistedPort: Int
        var lateTicks: Int
        var maxTickLatenessMs: Double
    }

    struct FrameCounts: Codable {
        var normal: Int
        var concealed: Int
        var silence: Int
        var muted: Int
    }

    struct Track: Codable {
        var id: UInt32
        var name: String
        var kind: String
        var file: String
        var channels: Int
        var samples: Int64
        var samplesWritten: Int64
        var frames: FrameCounts
        var concealedMs: Int
        var silentMs: Int
        var droppedFrames: Int
        var holes: Int?
        var decodeErrors: Int?
        var source: Source?
        var inputs: [String]?
        var rtp: RTPStatistics?
    }

    /// ALSA playback (--play).
    struct Playback: Codable {
        var device: String
        var track: String
        var underruns: Int
        var droppedFrames: Int
    }

    var roomtap: String
    var startTime: String
    var clock: String
    var sampleRate: Int
    var frameSamples: Int
    var durationSamples: Int64
    var durationSeconds: Double
    var stoppedEarly: Bool
    var tracks: [Track]
    var network: Network?
    /// Every control change (mute, volume, solo) with the room time it took effect; present when
    /// the control socket was open.
    var controls: [ControlLog.Change]?
    var playback: Playback?
    /// The Realtime agent (--agent): settings (never the key) and what it did.
    var agent: RoomAgent.Report?

    static func make(
        plan: RecordingPlan, startTime: Date, roomSamples: Int64, outcomes: [RoomRecording.TrackOutcome],
        interrupted: Bool, clock: RealTimeClock?, live: LiveRoom?, controls: [ControlLog.Change]? = nil,
        playback: Playback? = nil, agent: RoomAgent.Report? = nil
    ) -> RoomReport {
        let specs = Dictionary(plan.inputs.map { ($0.wavPath, $0) }, uniquingKeysWith: { a, _ in a })
        let tracks = outcomes.map { outcome -> Track in
            let stats = outcome.track.statistics
            let input = specs[outcome.path]
            let source = outcome.source
            let mixInputs = (outcome.track.source as? Mixer)?.inputs.map(\.name)
            return Track(
                id: outcome.track.id.rawValue,
                name: outcome.track.name,
                kind: outcome.track.isDerived ? "mix" : "speaker",
                file: (outcome.path as NSString).lastPathComponent,
                channels: outcome.track.channels,
                samples: roomSamples,
                samplesWritten: outcome.samplesWritten,
                frames: FrameCounts(
                    normal: stats.frames(.normal), concealed: stats.frames(.concealed),
                    silence: stats.frames(.silence), muted: stats.frames(.muted)),
                concealedMs: SummaryTable.concealedMilliseconds(outcome),
                silentMs: SummaryTable.silentMilliseconds(outcome, roomSamples: roomSamples),
                droppedFrames: outcome.droppedFrames,
                holes: source?.holes,
                decodeErrors: source?.decodeErrors,
                source: input.map {
                    Source(
                        kind: "ogg-opus-file", path: $0.spec.path, offsetSamples: $0.spec.offsetSamples,
                        offsetSeconds: Double($0.spec.offsetSamples) / 48_000,
                        durationSamples: source?.durationSamples ?? $0.info.durationSamples,
                        truncated: source?.isTruncated ?? $0.info.isTruncated,
                        corruptPages: $0.info.isStream ? source?.holes ?? 0 : $0.info.corruptPages)
                },
                inputs: mixInputs,
                rtp: outcome.live.map(rtpStatistics))
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return RoomReport(
            roomtap: CommandDispatch.version, startTime: formatter.string(from: startTime),
            clock: clock == nil ? "virtual" : "realtime",
            sampleRate: AudioFrame.sampleRate, frameSamples: AudioFrame.samplesPerChannel,
            durationSamples: roomSamples, durationSeconds: Double(roomSamples) / 48_000, stoppedEarly: interrupted,
            tracks: tracks, network: live.map { network($0, clock: clock) }, controls: controls, playback: playback,
            agent: agent)
    }

    private static func rtpStatistics(_ participant: LiveParticipant) -> RTPStatistics {
        let s = participant.buffer.statistics
        return RTPStatistics(
            port: participant.port, ssrc: participant.ssrc, packets: s.packets, bytes: s.bytes, lost: s.lost,
            recoveredByFEC: s.recoveredByFEC, concealedMs: s.concealedSamples / 48, late: s.late,
            duplicates: s.duplicates, reordered: s.reordered, restarts: s.restarts, invalid: s.invalid,
            jitterMs: (s.jitterMilliseconds * 100).rounded() / 100, driftCorrectedSamples: s.driftCorrectedSamples,
            delayMs: s.delayMilliseconds, minDelayMs: s.minDelayMilliseconds, maxDelayMs: s.maxDelayMilliseconds,
            delayAdaptations: s.delayAdaptations, senderReportTiming: s.senderReportTimingUsed,
            senderReportCorrectionMs: (s.senderReportCorrectionMilliseconds * 100).rounded() / 100,
            leaves: participant.leaves, leftAtEnd: participant.hasLeft, record: s.record.map(PlayoutFigures.init),
            live: participant.buffer.hasLivePlayout || s.record == nil ? PlayoutFigures(s.live) : nil,
            recordDelayMs: participant.buffer.recordDelay.map { Double($0) / 48 },
            recordAnchorMs: participant.buffer.recordDelay == nil
                ? nil : Double(participant.buffer.recordOffset) / 48)
    }

    private static func network(_ live: LiveRoom, clock: RealTimeClock?) -> Network {
        let r = live.receiver.statistics
        return Network(
            listen: live.receiver.sockets.map(\.address.description), datagrams: r.datagrams, rtpPackets: r.rtpPackets,
            rtcpPackets: r.rtcpPackets, invalidRTP: r.invalidTotal,
            droppedUnknownPayloadType: live.dropped(.unknownPayloadType),
            droppedTooManyTracks: live.dropped(.tooManyTracks), droppedUnlistedPort: live.dropped(.unlistedPort),
            lateTicks: clock?.lateTicks ?? 0, maxTickLatenessMs: Double(clock?.maxLatenessNanoseconds ?? 0) / 1e6)
    }

    /// Writes the report through a temporary file and a rename, so a reader never sees half of it.
    func write(to path: String, overwrite: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(self) + Data("\n".utf8)
        if !overwrite && FileManager.default.fileExists(atPath: path) {
            throw RuntimeError(description: "\(path) already exists; pass --force to overwrite it")
        }
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data) else {
            throw RuntimeError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw RuntimeError(description: "cannot write \(path): \(reason)")
        }
    }
}
