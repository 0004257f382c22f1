import Foundation
import Glibc
import RoomTapAll
import RoomTapFiles
import RoomTapJSON

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
        /// The stream's codec as an rtpmap names it: `opus/48000/2`, `PCMU/8000`, `L16/16000/1`.
        var codec: String
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
        /// RTP packets on a port described with SSRCs from an SSRC nobody described (without --discover).
        var droppedUndescribedSSRC: Int
        var lateTicks: Int
        var maxTickLatenessMs: Double
        /// Datagrams (RTP and RTCP) each listen address received, in the order of `listen`; 0 means
        /// nothing ever arrived there (see ``RoomRecording/nothingReceivedAfter``).
        var received: [ListenReceived]?
    }

    /// One listen address and the datagrams it received.
    struct ListenReceived: Codable {
        var listen: String
        var packets: Int
        /// Datagrams from a source neither --allow nor the room file's allow lets in; nil when nothing restricts it.
        var notAllowed: Int?
        /// Datagrams that failed SRTP/SRTCP authentication or replay protection; nil on a plain-RTP address.
        var srtpRejected: Int?
    }

    /// Something that went wrong while recording: a file that could not be created or written
    /// (its name in DIR, when there is one) and the one-line error.
    struct Failure: Codable {
        var file: String?
        var error: String
    }

    /// `state`: how far the recording got.
    enum State: String {
        /// The recorder was running when this was written; a room.json still saying so after the
        /// recorder has gone was cut short (kill -9, power loss): `roomtap repair DIR` brings it up
        /// to what the files hold.
        case recording
        /// The recorder ended and wrote this as its final report.
        case complete
        /// `roomtap repair DIR` rewrote it from the files of a recording that was cut short.
        case repaired
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
        /// `"mix"` for derived tracks, else `"speaker"` (the role, coarse: what older readers know).
        var kind: String
        /// The track's ``TrackRole`` (`"speaker-file"`, `"mix"`, `"agent-voice"`, ...); nil in a
        /// room.json written before roles.
        var role: String? = nil
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
        /// The file's format and rate when not 48 kHz WAV (`--format`, `--rate`, `export`).
        var format: String? = nil
        var fileSampleRate: Int? = nil
        /// Integrated loudness and true peak of the file's audio (`--loudness`, `export`).
        var loudness: Loudness? = nil
        /// `export --normalize`: the gain this speaker got in the mix, dB.
        var mixGainDB: Double? = nil
        /// A recording's packets (a Janus .mjr) as the jitter buffer played them.
        var recording: RecordingStatistics?
        /// A microphone (`--mic`): where its samples and the room's clock did not meet.
        var capture: CaptureStatistics? = nil

        /// The room's mix (``TrackRole/mix``; in a room.json written before roles, the derived
        /// track named `mix`), not the agent's hearing.
        var isRoomMix: Bool { role.map { $0 == TrackRole.mix.rawValue } ?? (kind == "mix" && name == "mix") }
    }

    /// A microphone's capture (see ``ALSACapture``): ticks that found too little captured (silence
    /// in the file, the first ones while the device starts included), samples dropped to bound the
    /// latency, and device overruns. All zero after the start: the file holds the device's samples
    /// unchanged.
    struct CaptureStatistics: Codable {
        var underflows: Int
        var droppedSamples: Int
        var overruns: Int

        init(_ capture: ALSACapture) {
            underflows = capture.underflows
            droppedSamples = capture.droppedSamples
            overruns = capture.overruns
        }
    }

    /// A recording's packets (see ``RecordedStreamSource``): what its jitter buffer did to them.
    struct RecordingStatistics: Codable {
        var packets: Int
        var lost: Int
        var recoveredByFEC: Int
        var concealedMs: Int
        var duplicates: Int
        var reordered: Int
        var restarts: Int
        /// Packets without a valid Opus payload, and frames that were not RTP.
        var skipped: Int

        init(_ source: RecordedStreamSource, skippedFrames: Int) {
            let s = source.statistics
            packets = s.packets
            lost = s.lost
            recoveredByFEC = s.recoveredByFEC
            concealedMs = s.concealedSamples / 48
            duplicates = s.duplicates
            reordered = s.reordered
            restarts = s.restarts
            skipped = skippedFrames + s.invalid + s.overflow
        }
    }

    /// EBU R 128 integrated loudness (LUFS; nil: silence, below the -70 LUFS gate) and the highest
    /// true peak of any channel (dBTP; nil: digital silence), measured at 48 kHz by libebur128.
    struct Loudness: Codable {
        var integratedLUFS: Double?
        var truePeakDBTP: Double?

        init(_ result: LoudnessMeter.Result) {
            integratedLUFS = result.integratedLUFS.map { ($0 * 100).rounded() / 100 }
            truePeakDBTP = result.truePeakDBTP.map { ($0 * 100).rounded() / 100 }
        }
    }

    /// One file with a channel per speaker (`--multichannel`).
    struct Multichannel: Codable {
        var file: String
        var format: String
        var sampleRate: Int
        /// The speakers, in channel order.
        var channels: [String]
    }

    /// What `roomtap export` made, and from what.
    struct Export: Codable {
        /// The recording's directory.
        var from: String
        var format: String
        var sampleRate: Int
        var bitrate: Int?
        /// `--normalize`: the integrated loudness each speaker was brought to in the mix, LUFS.
        var normalizeLUFS: Double?
    }

    /// ALSA playback (--play).
    struct Playback: Codable {
        var device: String
        var track: String
        var underruns: Int
        var droppedFrames: Int
    }

    var roomtap: String
    /// "recording", "complete" or "repaired" (see ``State``); absent in reports of older versions.
    var state: String?
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
    /// What went wrong (files that could not be written); empty when nothing did. Absent in
    /// reports of older versions.
    var errors: [Failure]?
    /// `--multichannel`: the file with a channel per speaker.
    var multichannel: Multichannel? = nil
    /// Present in the report `roomtap export` writes.
    var export: Export? = nil
    /// With `record --upload` or after `roomtap upload`: what is uploaded, pending, failed.
    var upload: UploadReport? = nil
    /// With `--join`/`--whep`: the room joined over WebRTC and each publisher's connection.
    var join: JoinReport? = nil
    /// With `--sora-audio-streaming`: the listener and each Sora connection recorded.
    var soraAudioStreaming: SoraStreamingReport? = nil
    /// With `--sora-recording`: the recording, its connections and files (``SoraSection``).
    var sora: SoraSection? = nil
    /// With `--transcribe`: per-speaker transcription (settings, never the key; audio sent per
    /// speaker against the room's length; each speaker's sessions).
    var transcription: RoomTranscriber.Report? = nil
    /// Lines in transcript.jsonl (with `--agent` or `--transcribe`).
    var transcriptLines: Int? = nil
    /// A second stop (Ctrl-C again) ended a network room at once: the audio still on its way (up
    /// to the record delay) is not in the files, which are finalized up to the room's end.
    var stoppedAtOnce: Bool? = nil

    /// A room joined over WebRTC (never a pin or token).
    struct JoinReport: Codable {
        /// `janus`, `whep` or `sora`.
        var kind: String
        /// Janus's API base, or nil for WHEP (each publisher's id is its URL).
        var server: String?
        var room: String?
        var publishers: [Publisher]
        /// What roomtap published into the room (`--agent-publish`): RTP packets sent and not sent.
        var published: [Published]?
        /// A Sora join: our connection, redirects, re-offers, pings, reconnects, notify and push
        /// events (never the metadata).
        var sora: SoraReport?
        /// The line that ended the join mid-room, if one did.
        var failure: String?

        struct Published: Codable {
            var rtpSent: Int
            var rtpUnsent: Int
        }

        struct Publisher: Codable {
            /// The track name.
            var name: String
            /// Janus's feed id or the WHEP URL.
            var publisherID: String
            var present: Bool
            var connections: Int
            /// Each connection's set-up time (request to DTLS up), ms.
            var setUpMs: [Double]
            var rtpPackets: Int
            var rtcpPackets: Int
            var droppedDatagrams: Int
            var receiverReportsSent: Int
            /// Sora's `client_id`, when the server gave one.
            var clientID: String?
            /// When the publisher was in the room (Unix seconds); a gap between two spans is a gap
            /// in its track.
            var presence: [Span]?
        }

        struct Span: Codable {
            var joined: Double
            var left: Double?
        }

        init(_ join: RoomJoin) {
            switch join.target {
            case .janus(let target):
                kind = "janus"
                server = target.base
                room = target.room
            case .whep:
                kind = "whep"
            case .sora(let target):
                kind = "sora"
                server = target.signalingURL
                room = target.channelID
            }
            sora = join.soraReport
            failure = join.failure
            let published = join.published.map { Published(rtpSent: $0.counts.rtpSent, rtpUnsent: $0.counts.rtpUnsent) }
            self.published = published.isEmpty ? nil : published
            publishers = join.publishers.map { publisher in
                let counts = Optional(publisher.counts)
                return Publisher(
                    name: publisher.name, publisherID: publisher.publisherID, present: publisher.isPresent,
                    connections: publisher.connections,
                    setUpMs: publisher.setUpSeconds.map { ($0 * 10_000).rounded() / 10 },
                    rtpPackets: counts?.rtpPackets ?? 0, rtcpPackets: counts?.rtcpPackets ?? 0,
                    droppedDatagrams: counts?.dropped ?? 0, receiverReportsSent: counts?.reportsSent ?? 0,
                    clientID: publisher.clientID,
                    presence: publisher.presence.isEmpty
                        ? nil
                        : publisher.presence.map {
                            Span(joined: $0.joined.timeIntervalSince1970, left: $0.left?.timeIntervalSince1970)
                        })
            }
        }
    }

    static func make(
        plan: RecordingPlan, state: State, startTime: Date, roomSamples: Int64,
        outcomes: [RoomRecording.TrackOutcome], interrupted: Bool, clock: RealTimeClock?, live: LiveRoom?,
        controls: [ControlLog.Change]? = nil, playback: Playback? = nil, agent: RoomAgent.Report? = nil,
        errors: [Failure] = []
    ) -> RoomReport {
        let specs = Dictionary(plan.inputs.map { ($0.wavPath, $0) }, uniquingKeysWith: { a, _ in a })
        let tracks = outcomes.map { outcome -> Track in
            let stats = outcome.track.statistics
            let input = specs[outcome.path]
            let source = outcome.source
            let mixInputs = outcome.track.mixer?.inputs.map(\.name)
            var track = Track(
                id: outcome.track.id.rawValue,
                name: outcome.track.name,
                kind: outcome.track.role.kind,
                role: outcome.track.role.rawValue,
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
                        kind: $0.kind, path: plan.options.inputOrigins[$0.spec.path] ?? $0.spec.path,
                        offsetSamples: $0.offsetSamples,
                        offsetSeconds: Double($0.offsetSamples) / 48_000,
                        durationSamples: source?.durationSamples ?? $0.durationSamples,
                        truncated: source?.isTruncated ?? $0.isTruncated,
                        corruptPages: $0.info.map { $0.isStream ? source?.holes ?? 0 : $0.corruptPages } ?? 0)
                },
                inputs: mixInputs,
                rtp: outcome.live.map(rtpStatistics),
                recording: (outcome.track.source as? RecordedStreamSource).map {
                    RecordingStatistics($0, skippedFrames: input?.recording?.skippedFrames ?? 0)
                } ?? (outcome.track.source as? SegmentedRecordingSource).map(RecordingStatistics.init))
            if !plan.options.output.isDefault {
                track.format = plan.options.output.format.rawValue
                track.fileSampleRate = plan.options.output.sampleRate
            }
            track.loudness = outcome.loudness.map(Loudness.init)
            track.capture = (outcome.track.source as? ALSACapture).map(CaptureStatistics.init)
            return track
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var report = RoomReport(
            roomtap: CommandDispatch.version, state: state.rawValue, startTime: formatter.string(from: startTime),
            clock: clock == nil ? "virtual" : "realtime",
            sampleRate: AudioFrame.sampleRate, frameSamples: AudioFrame.samplesPerChannel,
            durationSamples: roomSamples, durationSeconds: Double(roomSamples) / 48_000, stoppedEarly: interrupted,
            tracks: tracks, network: live.map { network($0, clock: clock) }, controls: controls, playback: playback,
            agent: agent, errors: errors)
        report.sora = plan.sora.map(SoraSection.init)
        return report
    }

    private static func rtpStatistics(_ participant: LiveParticipant) -> RTPStatistics {
        let s = participant.buffer.statistics
        return RTPStatistics(
            port: participant.port, ssrc: participant.ssrc, codec: participant.buffer.codec.description,
            packets: s.packets, bytes: s.bytes, lost: s.lost,
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
            droppedUndescribedSSRC: live.dropped(.undescribedSSRC),
            lateTicks: clock?.lateTicks ?? 0, maxTickLatenessMs: Double(clock?.maxLatenessNanoseconds ?? 0) / 1e6,
            received: zip(live.receiver.sockets, live.receiver.guards).map { socket, guardian in
                ListenReceived(
                    listen: socket.address.description, packets: socket.datagramsReceived,
                    notAllowed: guardian?.allow == nil ? nil : guardian?.notAllowed,
                    srtpRejected: guardian?.srtp == nil ? nil : guardian?.srtpRejected)
            })
    }

    /// The report as room.json holds it: pretty-printed JSON with sorted keys and a final newline,
    /// by the one writer (``JSONNodeEncoder``, ``JSONValue/Layout/pretty``: the text
    /// `JSONEncoder` wrote before). Throws a one-line error for a value JSON cannot hold (a
    /// figure that is not a number). Any thread; pure.
    func encoded() throws -> Data {
        let value: JSONValue
        do { value = try JSONNodeEncoder().encode(self) } catch {
            throw RuntimeError(description: "cannot write room.json: \(error)")
        }
        var bytes: [UInt8] = []
        value.write(to: &bytes, layout: .pretty)
        bytes.append(0x0A)
        return Data(bytes)
    }

    /// Reads a room.json (``RoomJSONFile``); nil when there is none at `path`. Throws a one-line
    /// error for a file that cannot be read or is not a report.
    static func read(from path: String) throws -> RoomReport? {
        try RoomJSONFile.read(RoomReport.self, from: path)
    }

    /// Writes the report atomically (see ``writeAtomically(_:to:overwrite:)``).
    func write(to path: String, overwrite: Bool) throws {
        try Self.writeAtomically(try encoded(), to: path, overwrite: overwrite)
    }

    /// Writes `data` to `path` so that a reader (or a crash) never sees half of it, through
    /// ``OutputFile/writeAtomically(path:bytes:overwrite:)`` (temporary file beside it, fsync,
    /// rename over `path`, which replaces a link rather than writing through it, directory fsync).
    /// Without `overwrite` an existing `path` is an error. One-line errors naming `path`, never the
    /// temporary file, which never stays behind. Any thread, one writer per path at a time.
    static func writeAtomically(_ data: Data, to path: String, overwrite: Bool) throws {
        do {
            try OutputFile.writeAtomically(path: path, bytes: [UInt8](data), overwrite: overwrite)
        } catch  where error.kind == .alreadyExists {
            throw RuntimeError(description: "\(path) already exists; pass --force to overwrite it")
        } catch {
            let reason = error.errno.map(OutputFileError.describe) ?? error.message
            throw RuntimeError(description: "cannot write \(path): \(reason)")
        }
    }
}
