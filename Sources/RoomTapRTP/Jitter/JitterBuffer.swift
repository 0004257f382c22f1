public import RoomTapCore
import Synchronization

/// One RTP audio stream (one SSRC) as a track's source on the room timeline: the jitter buffer
/// between a receive thread that pushes packets and the room clock that pulls frames.
///
/// Opus by default; the PBX codecs (G.711, G.722, L16: ``AudioCodec``) play through the same
/// buffer: the inserter converts their timestamps to 48 kHz and each playout decodes them with a
/// ``PCMPayloadDecoder`` (see ``PayloadDecoder``). Everything below is the same for every codec,
/// except that only Opus has in-band FEC and DTX.
///
/// Built the NetEq way, so the types say which thread touches what:
/// - ``JitterInserter`` (receive thread): validates, numbers and places packets by RTP timestamp
///   (48 kHz units, RFC 7587 §4.1, https://www.rfc-editor.org/rfc/rfc7587#section-4.1), measures
///   the network, copies each packet into the ``JitterPacketRing``;
/// - two clock-side playouts over that ring, each with its own libopus decoder
///   (``PlayoutDecoder``):
///   - ``RecordPlayout``, the files: a fixed *record delay* after the stream's least-delayed
///     packets, nothing ever adapts, every packet that arrives within the delay decoded, a lost
///     one concealed whole. ``render(into:at:)`` renders it.
///   - ``LivePlayout``, what is heard now: starts `targetDelay` after the first packet and adapts
///     to the network (``renderLive(into:at:)``);
/// - ``JitterStreamState``: the atomics they share.
///
/// Without a record delay (`recordDelayMilliseconds: nil`) there is one playout, the live one,
/// and ``render(into:at:)`` renders it. With one but no live consumer (`livePlayout: false`)
/// there is only the record: one decoder per track.
///
/// Loss, gaps, restarts: see ``PlayoutDecoder`` and ``JitterInserter``. Sequence numbers wrap at
/// 2^16 and timestamps at 2^32 freely (RFC 3550 Appendix A.1).
///
/// Thread: ``insert(sequence:timestamp:payload:arrival:)`` and
/// ``noteSenderReport(ntp:rtpTimestamp:)`` on one receive thread; `render` and `renderLive` on the
/// room clock's thread; ``statistics``, ``lastArrival``, ``markEnded()``, ``isEnded`` anywhere.
/// Nothing allocates after init.
public final class JitterBuffer: LivePlayoutSource, StaggeredSource, @unchecked Sendable {
    /// Packets the ring holds without a record delay (sequence numbers ahead of playout).
    public static let ringCapacity = 512
    /// A sequence jump larger than this (either way) is a sender restart.
    public static let restartSequenceJump: Int64 = 1000
    /// A timestamp jump larger than this (samples, either way; 10 s) is a sender restart.
    public static let restartTimestampJump: Int64 = 480_000
    /// A frame whose samples all stay within ±this is quiet: where the live delay may change.
    public static let quietPeak = 128
    /// The most a quiet frame's peak may be when the stream is loud (its recent peak / 100).
    public static let quietPeakCeiling = 1024
    /// A sender-report shift this small (samples; one frame) is not applied to the live playout:
    /// arrival anchoring already placed the stream within a frame of where its report puts it.
    public static let senderReportDeadband: Int64 = 480
    /// Frames between two steps that shorten the live delay (lower slowly).
    public static let shrinkInterval = 25
    /// Packets sent before the first one that arrived which the record still takes (reordered
    /// at the very start), if they arrive before the record starts.
    public static let earlyPackets: Int64 = 32
    /// The record's drift dead band (samples, 20 ms).
    public static let recordDriftDeadband: Int64 = 960

    public let channels: Int
    /// The stream's codec.
    public let codec: AudioCodec
    /// Live playout delay after the first packet's arrival, in samples (48 kHz): the initial delay
    /// and, when adaptive, the smallest.
    public let targetDelay: Int64
    /// The largest live playout delay adaptation may reach, in samples (48 kHz).
    public let maxDelay: Int64
    /// False when the live delay is pinned at ``targetDelay`` (`--jitter-fixed`).
    public let isAdaptive: Bool
    /// The record delay after the stream's least-delayed packets, in samples; nil: no record
    /// playout.
    public let recordDelay: Int64?
    /// Live drift correction starts when the wanted and current lag differ by more than this.
    public let driftDeadband: Int64
    /// Longest PLC for one stretch of missing audio with nothing after it yet; silence after.
    public let maxConcealment: Int
    /// Live counters, readable from any thread.
    public let statistics: JitterStatistics

    private let state: JitterStreamState
    private let ring: JitterPacketRing
    private let inserter: JitterInserter
    private let live: LivePlayout?
    private let record: RecordPlayout?

    /// Creates a buffer for one stream.
    ///
    /// - Parameters:
    ///   - channels: channels rendered (1 or 2; libopus down- or up-mixes the stream, and so
    ///     does the PBX decoder).
    ///   - codec: the stream's codec (default Opus).
    ///   - targetDelayMilliseconds: live playout delay after the first packet's arrival (default
    ///     60); the smallest delay when adaptive.
    ///   - maxDelayMilliseconds: the largest live delay adaptation may reach (default 200; raised
    ///     to `targetDelayMilliseconds` if below).
    ///   - adaptive: false pins the live delay at `targetDelayMilliseconds`.
    ///   - recordDelayMilliseconds: the record playout's delay after the least-delayed packets
    ///     (see ``RecordPlayout``); nil: no record playout, `render` is the live one.
    ///   - livePlayout: with a record delay, whether to run the live playout too (a second
    ///     decoder); without one the live view is the record.
    ///   - recordLookahead: the record decodes one frame ahead at first (a room sets it per render
    ///     thread with ``decodeAhead(_:)``; see ``RecordPlayout/lookahead``).
    ///   - senderClock: the room's sender-report mapping; nil: arrival anchoring only.
    ///   - driftDeadbandSamples: the live drift correction dead band (default 240 = 5 ms).
    ///   - maxConcealmentMilliseconds: longest open-ended PLC (default 200 ms).
    ///   - arrivalToRoom: converts an arrival time (`CLOCK_MONOTONIC` ns) to a room sample
    ///     (``RealTimeClock/roomTimeMapping`` live; any function in tests). Called on the
    ///     receive thread.
    /// Returns nil if the codec's library cannot create a decoder.
    public init?(
        channels: Int = 1, codec: AudioCodec = .opus, targetDelayMilliseconds: Int = 60,
        maxDelayMilliseconds: Int = 200,
        adaptive: Bool = true, recordDelayMilliseconds: Int? = nil, livePlayout: Bool = true,
        recordLookahead: Bool = false,
        senderClock: SenderClockSync? = nil, driftDeadbandSamples: Int64 = 240,
        maxConcealmentMilliseconds: Int = 200, arrivalToRoom: @escaping RoomTimeMapping
    ) {
        precondition(channels == 1 || channels == 2, "a jitter buffer renders 1 or 2 channels")
        precondition(targetDelayMilliseconds >= 0, "the target delay is not negative")
        precondition((recordDelayMilliseconds ?? 0) >= 0, "the record delay is not negative")
        self.channels = channels
        self.codec = codec
        targetDelay = Int64(targetDelayMilliseconds) * 48
        maxDelay = Int64(max(maxDelayMilliseconds, targetDelayMilliseconds)) * 48
        isAdaptive = adaptive
        recordDelay = recordDelayMilliseconds.map { Int64($0) * 48 }
        driftDeadband = driftDeadbandSamples
        maxConcealment = maxConcealmentMilliseconds * 48
        let hasRecord = recordDelayMilliseconds != nil
        let hasLive = !hasRecord || livePlayout
        statistics = JitterStatistics(hasRecord: hasRecord)
        state = JitterStreamState(initialDelay: targetDelay, hasRecord: hasRecord)
        if !hasLive { state.liveRead.store(.max, ordering: .relaxed) }
        ring = JitterPacketRing(
            capacity: Self.ringCapacity(recordDelayMilliseconds: recordDelayMilliseconds),
            arenaBytes: recordDelayMilliseconds.map(Self.arenaBytes(recordDelayMilliseconds:)))
        inserter = JitterInserter(
            targetDelay: targetDelay, maxDelay: maxDelay, adaptive: adaptive, codec: codec, senderClock: senderClock,
            ring: ring,
            state: state, statistics: statistics, arrivalToRoom: arrivalToRoom)
        let capacity = 2 * LiveOpusDecoder.maxFrameSamples + AudioFrame.samplesPerChannel
        if hasLive {
            guard
                let line = PlayoutDecoder(
                    channels: channels, codec: codec, ring: ring, state: state, statistics: statistics.live,
                    placement: .asPlaced,
                    maxConcealment: maxConcealment, bufferCapacity: capacity)
            else { return nil }
            live = LivePlayout(
                targetDelay: targetDelay, maxDelay: maxDelay, adaptive: adaptive, driftDeadband: driftDeadbandSamples,
                senderClock: senderClock, line: line, state: state, statistics: statistics)
        } else {
            live = nil
        }
        if let recordDelay, let recordStatistics = statistics.record {
            guard
                let line = PlayoutDecoder(
                    channels: channels, codec: codec, ring: ring, state: state, statistics: recordStatistics,
                    placement: .leastSkew, maxConcealment: maxConcealment, bufferCapacity: capacity)
            else { return nil }
            record = RecordPlayout(
                lag: recordDelay, driftDeadband: Self.recordDriftDeadband,
                lookahead: recordLookahead ? Int64(AudioFrame.samplesPerChannel) : 0, line: line, ring: ring,
                state: state)
        } else {
            record = nil
        }
        statistics.delaySamples.store(targetDelay, ordering: .relaxed)
        statistics.minDelaySamples.store(targetDelay, ordering: .relaxed)
        statistics.maxDelaySamples.store(targetDelay, ordering: .relaxed)
    }

    /// Slots of the packet ring: without a record delay ``ringCapacity``; with one, enough for
    /// the record delay plus 300 ms of 10 ms packets, as a power of two (256 at 2 s).
    static func ringCapacity(recordDelayMilliseconds: Int?) -> Int {
        guard let ms = recordDelayMilliseconds else { return ringCapacity }
        let wanted = (ms + 300) / 10
        var capacity = 64
        while capacity < wanted { capacity *= 2 }
        return capacity
    }

    /// Payload bytes the ring keeps with a record delay: the delay plus 300 ms at 224 kbit/s
    /// (Opus speech is 16–64 kbit/s, full-band music 96–128), at least 64 KiB (64 KiB at 2 s). A
    /// stream above that rate overflows (counted in `overflow`) rather than growing the ring.
    static func arenaBytes(recordDelayMilliseconds ms: Int) -> Int {
        max(64 * 1024, (ms + 300) * 28)
    }

    /// Monotonic time (ns) of the last `insert` call, 0 before the first. For the receiver's
    /// "participant left" timeout. Any thread.
    public var lastArrival: UInt64 { state.lastArrivalNanos.load(ordering: .relaxed) }

    /// True after ``markEnded()`` until a packet arrives again.
    public var isEnded: Bool { state.ended.load(ordering: .relaxed) }

    /// A live stream is never finished: the room runs until it is stopped.
    public var isFinished: Bool { false }

    /// True when the live playout runs beside the record (``renderLive(into:at:)`` differs).
    public var hasLivePlayout: Bool { record != nil && live != nil }

    /// The record's anchor refinement (samples: how much earlier than its first packet's arrival
    /// the stream was placed, as a negative number); 0 before the record started. Any thread
    /// (room.json is rewritten while the room runs).
    public var recordOffset: Int64 { record?.offset ?? 0 }

    /// Moves the record's decodes one frame earlier (true) or back (false): the room staggers the
    /// streams each render thread owns (see ``StaggeredSource``). What the record holds does not
    /// change; a packet must arrive that much earlier to make it. Room clock's thread.
    public func decodeAhead(_ ahead: Bool) { record?.lookahead = ahead ? Int64(AudioFrame.samplesPerChannel) : 0 }

    /// Marks the participant as gone (timeout, RTCP BYE): the live playout renders silence from
    /// the next frame on; the record plays out what it holds, then silence (no concealment). A
    /// packet arriving later re-opens the stream as a sender restart (re-anchored at its
    /// arrival). Idempotent; any thread.
    public func markEnded() { state.ended.store(true, ordering: .sequentiallyConsistent) }

    /// Stores one RTP packet's payload for playout. Receive thread only; copies `payload`
    /// (at most 1500 bytes) and returns at once; never decodes, blocks or allocates.
    ///
    /// - Parameters:
    ///   - sequence: the RTP sequence number.
    ///   - timestamp: the RTP timestamp (the codec's clock: 48 kHz for Opus, RFC 7587).
    ///   - payload: the RTP payload without padding (an Opus packet, G.711 bytes, ...).
    ///   - arrival: when it arrived, `CLOCK_MONOTONIC` nanoseconds.
    @discardableResult
    public func insert(
        sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrival: UInt64
    ) -> InsertResult {
        inserter.insert(sequence: sequence, timestamp: timestamp, payload: payload, arrival: arrival)
    }

    /// Records an RTCP sender report of this stream (RFC 3550 §6.4.1,
    /// https://www.rfc-editor.org/rfc/rfc3550#section-6.4.1): its sender's wall clock `ntp` is RTP
    /// timestamp `rtpTimestamp`. The first report after the stream's anchor places the stream on
    /// the room's ``SenderClockSync`` mapping (bounded by ``maxDelay``): the live playout shifts
    /// in quiet frames; the record, if it has not started yet, starts there. Later reports are
    /// not used (drift correction follows the clock from arrivals). Receive thread only; no-op
    /// without a ``SenderClockSync``.
    public func noteSenderReport(ntp: NTPTimestamp, rtpTimestamp: UInt32) {
        inserter.noteSenderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    /// Renders the 10 ms at room sample `roomSample` of the record (or, without one, of the live
    /// playout). Room clock's thread only; never blocks, locks or allocates. `.silence` before the
    /// first packet, after ``markEnded()`` and in gaps; `.concealed` when any sample is PLC.
    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        assert(samples.count >= AudioFrame.samplesPerChannel * channels, "a frame holds 480 samples per channel")
        if let record { return record.render(into: samples.baseAddress!, at: roomSample) }
        return live!.render(into: samples.baseAddress!, at: roomSample)
    }

    /// Renders the live playout's 10 ms at room sample `roomSample` (the record's when there is
    /// no live playout). Room clock's thread only, after ``render(into:at:)`` of the same tick.
    public func renderLive(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        guard let live else { return render(into: samples, at: roomSample) }
        return live.render(into: samples.baseAddress!, at: roomSample)
    }
}
