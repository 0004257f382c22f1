public import RoomTapCore
import Synchronization

/// One RTP Opus stream (one SSRC) as a 10 ms ``FrameSource`` on the room timeline: the jitter
/// buffer between a receive thread that pushes packets and the room clock that pulls frames.
///
/// ## Timeline
/// Packets are placed by RTP timestamp (48 kHz units, RFC 7587 §4.1,
/// https://www.rfc-editor.org/rfc/rfc7587#section-4.1), never by arrival. The first packet's
/// arrival, converted to room time by the injected ``RoomTimeMapping`` (`A`), anchors the stream:
/// a packet with extended timestamp `T` has the *timeline position* `P(T) = A + (T − T₀)`, and its
/// first sample plays at room sample `P(T) + lag`. `lag` starts at ``targetDelay`` (default 60 ms),
/// so the first packet plays `targetDelay` after it arrived, and every later packet plays exactly
/// its timestamp distance after it: network jitter never moves audio in the file. `lag` is
/// `delay + sync + drift`: the playout delay (below), a sender-report shift, and drift correction.
///
/// ## Adaptive delay
/// ``DelayEstimator`` (producer) turns arrivals into the delay the stream needs: the latest
/// arrival against the timeline in the last 5 s plus 15 ms, in 10 ms steps, between
/// ``targetDelay`` and ``maxDelay``. The consumer moves the delay toward it one 10 ms step at a
/// time, only where both the frame just played and the next are quiet (silence, DTX, or every
/// sample within ±``quietPeak``, or within 40 dB below the stream's recent peak up to
/// ±``quietPeakCeiling`` for background noise): it repeats the quiet frame just played (silence
/// or comfort noise) without consuming the timeline (grow) or discards 10 ms of it (shrink, at
/// most every ``shrinkInterval`` frames). So speech is never
/// cut or stretched; the audio after a change sits 10 ms later or earlier in the file, and the
/// output is still exactly one frame per tick. `adaptive: false` pins the delay.
///
/// ## Sender reports
/// With a ``SenderClockSync``, the stream's first RTCP sender report after its anchor gives
/// `sync`: the shift that puts its NTP instants on the room's NTP mapping (see there), applied in
/// quiet frames in steps of at most 10 ms like a delay change. Streams placed this way share the
/// largest delay any of them needs.
///
/// ## Drift
/// A sender whose 48 kHz clock runs ±200 ppm against the room slides ±0.72 s an hour against its
/// timestamps. ``DriftEstimator`` follows the slide from arrivals (the minimum of arrival − P(T)
/// over 2 s windows, against the first window). When the wanted `lag` (``targetDelay`` + slide)
/// is more than ``driftDeadband`` samples from the current one, each frame drops or repeats one
/// sample at its quietest point until they agree again (at most 100 samples a second, i.e.
/// ±2083 ppm; ±200 ppm needs about one frame in ten). So audio stays where its arrival put it,
/// within the deadband plus a window's worth of drift, for as long as the stream runs.
///
/// ## Loss, gaps, restarts
/// When a packet is missing at its playout point and a later one has arrived, the gap is decoded
/// from the later packet's in-band FEC (RFC 6716 §2.1.7; libopus conceals all but the last
/// packet-duration) when it carries FEC, else concealed by Opus PLC; the missing packets count as
/// lost. When nothing later has arrived the buffer conceals by PLC for at most ``maxConcealment``
/// samples, then plays silence (after a DTX packet, one of ≤ 2 bytes, it plays silence at once).
/// A timestamp gap without a sequence gap (DTX, a paused sender) is silence. A jump of more than
/// 1000 in sequence number or 10 s in timestamp is a sender restart: the stream is re-anchored at
/// the new packet's arrival, never before the end of audio already placed (no overlap, nothing
/// already rendered moves). Sequence numbers wrap at 2^16 and timestamps at 2^32 freely
/// (RFC 3550 Appendix A.1, https://www.rfc-editor.org/rfc/rfc3550#appendix-A.1).
///
/// ## Threads
/// - Producer (one receive thread): ``insert(sequence:timestamp:payload:arrival:)`` copies the
///   payload into a preallocated ring slot and returns; it never decodes and never blocks.
/// - Consumer (the room clock's thread): `render` decodes exactly the 10 ms asked for; it never
///   waits for the producer (the two meet only through per-slot atomic stamps, see
///   ``JitterPacketRing``).
/// - Any thread: ``statistics``, ``lastArrival``, ``markEnded()``, ``isEnded``.
/// Nothing allocates after init.
public final class OpusJitterBuffer: FrameSource, @unchecked Sendable {
    /// Packets the ring holds (sequence numbers ahead of playout it can accept).
    public static let ringCapacity = 512
    /// A sequence jump larger than this (either way) is a sender restart.
    public static let restartSequenceJump: Int64 = 1000
    /// A timestamp jump larger than this (samples, either way; 10 s) is a sender restart.
    public static let restartTimestampJump: Int64 = 480_000

    public let channels: Int
    /// Playout delay after the first packet's arrival, in samples (48 kHz): the initial delay and,
    /// when adaptive, the smallest.
    public let targetDelay: Int64
    /// The largest playout delay adaptation may reach, in samples (48 kHz).
    public let maxDelay: Int64
    /// False when the delay is pinned at ``targetDelay`` (`--jitter-fixed`).
    public let isAdaptive: Bool
    /// A frame whose samples all stay within ±this is quiet: where the delay may change.
    public static let quietPeak = 128
    /// The most a quiet frame's peak may be when the stream is loud (its recent peak / 100).
    public static let quietPeakCeiling = 1024
    /// A sender-report shift this small (samples; one frame) is not applied: arrival anchoring
    /// already placed the stream within a frame of where its report puts it.
    public static let senderReportDeadband: Int64 = 480
    /// Frames between two steps that shorten the delay (lower slowly).
    public static let shrinkInterval = 25
    /// Drift correction starts when the wanted and current lag differ by more than this (samples).
    public let driftDeadband: Int64
    /// Longest PLC for one stretch of missing audio with nothing after it yet; silence after.
    public let maxConcealment: Int
    /// Live counters, readable from any thread.
    public let statistics = JitterStatistics()

    private let arrivalToRoom: RoomTimeMapping
    private let ring: JitterPacketRing

    // Shared between the two sides.
    private let firstSequence = Atomic<Int64>(-1)  // producer -> consumer, once
    private let highestSequence = Atomic<Int64>(-1)  // producer -> consumer
    private let readSequence = Atomic<Int64>(-1)  // consumer -> producer: packets below are passed
    private let slide = Atomic<Int64>(.min)  // producer -> consumer; .min = no estimate yet
    private let driftShared = Atomic<Int64>(0)  // consumer -> producer: lag - delay - sync
    private let syncShared = Atomic<Int64>(0)  // consumer -> producer: the sync offset applied
    private let neededDelay: Atomic<Int64>  // producer -> consumer: the delay arrivals call for
    private let syncTarget = Atomic<Int64>(0)  // producer -> consumer: the sync offset wanted
    private let ended = Atomic<Bool>(false)
    private let lastArrivalNanos = Atomic<UInt64>(0)

    // Producer (receive thread) state.
    private var sequences = SequenceUnwrapper()
    private var timestamps = TimestampUnwrapper()
    private var sequenceOffset: Int64 = 0
    private var firstExtended: Int64 = -1
    private var highest: Int64 = -1
    private var anchorRoom: Int64 = 0
    private var anchorTimestamp: Int64 = 0
    private var timelineEnd: Int64 = .min
    private var drift = DriftEstimator()
    private var previousTransit: UInt32?
    private var jitterQ4 = 0
    private var delayEstimator = DelayEstimator()
    private var syncWanted: Int64 = 0
    private let senderClock: SenderClockSync?
    private var report: (ntp: Int64, rtp: UInt32)?
    private var reportApplied = false
    private var published: Int64 = -1

    // Consumer (room clock's thread) state.
    private let decoder: LiveOpusDecoder
    private let playout: PlayoutBuffer
    private let scratch: UnsafeMutablePointer<Int16>
    private var started = false
    private var nextSequence: Int64 = 0
    private var lag: Int64 = 0  // delay + sync + drift correction
    private var delay: Int64 = 0
    private var sync: Int64 = 0
    private var previousQuiet = false
    private var recentPeak = 0
    private let lastQuiet: UnsafeMutablePointer<Int16>  // the quiet frame just played
    private var sinceShrink = 0
    private var correcting = false
    private var concealRun = 0
    private var lastWasDTX = false

    /// Creates a buffer for one stream.
    ///
    /// - Parameters:
    ///   - channels: channels rendered (1 or 2; libopus down- or up-mixes the stream).
    ///   - targetDelayMilliseconds: playout delay after the first packet's arrival (default 60);
    ///     the smallest delay when adaptive.
    ///   - maxDelayMilliseconds: the largest delay adaptation may reach (default 200; raised to
    ///     `targetDelayMilliseconds` if below).
    ///   - adaptive: false pins the delay at `targetDelayMilliseconds`.
    ///   - senderClock: the room's sender-report mapping (see ``noteSenderReport(ntp:rtpTimestamp:)``);
    ///     nil: arrival anchoring only.
    ///   - driftDeadbandSamples: drift correction dead band (default 240 = 5 ms).
    ///   - maxConcealmentMilliseconds: longest open-ended PLC (default 200 ms).
    ///   - arrivalToRoom: converts an arrival time (`CLOCK_MONOTONIC` ns) to a room sample
    ///     (``RealTimeClock/roomTimeMapping`` live; any function in tests). Called on the
    ///     producer thread.
    /// Returns nil if libopus cannot create a decoder.
    public init?(
        channels: Int = 1, targetDelayMilliseconds: Int = 60, maxDelayMilliseconds: Int = 200,
        adaptive: Bool = true, senderClock: SenderClockSync? = nil, driftDeadbandSamples: Int64 = 240,
        maxConcealmentMilliseconds: Int = 200, arrivalToRoom: @escaping RoomTimeMapping
    ) {
        precondition(channels == 1 || channels == 2, "a jitter buffer renders 1 or 2 channels")
        precondition(targetDelayMilliseconds >= 0, "the target delay is not negative")
        guard let decoder = LiveOpusDecoder(channels: channels) else { return nil }
        self.channels = channels
        self.targetDelay = Int64(targetDelayMilliseconds) * 48
        self.maxDelay = Int64(max(maxDelayMilliseconds, targetDelayMilliseconds)) * 48
        self.isAdaptive = adaptive
        self.senderClock = senderClock
        neededDelay = Atomic(Int64(targetDelayMilliseconds) * 48)
        statistics.delaySamples.store(targetDelay, ordering: .relaxed)
        statistics.minDelaySamples.store(targetDelay, ordering: .relaxed)
        statistics.maxDelaySamples.store(targetDelay, ordering: .relaxed)
        self.driftDeadband = driftDeadbandSamples
        self.maxConcealment = maxConcealmentMilliseconds * 48
        self.arrivalToRoom = arrivalToRoom
        self.decoder = decoder
        ring = JitterPacketRing(capacity: Self.ringCapacity)
        playout = PlayoutBuffer(channels: channels, capacity: 4 * LiveOpusDecoder.maxFrameSamples)
        scratch = .allocate(capacity: LiveOpusDecoder.maxFrameSamples * channels)
        scratch.initialize(repeating: 0, count: LiveOpusDecoder.maxFrameSamples * channels)
        lastQuiet = .allocate(capacity: AudioFrame.samplesPerChannel * channels)
        lastQuiet.initialize(repeating: 0, count: AudioFrame.samplesPerChannel * channels)
    }

    deinit {
        scratch.deallocate()
        lastQuiet.deallocate()
    }

    /// Monotonic time (ns) of the last `insert` call, 0 before the first. For the receiver's
    /// "participant left" timeout. Any thread.
    public var lastArrival: UInt64 { lastArrivalNanos.load(ordering: .relaxed) }

    /// True after ``markEnded()`` until a packet arrives again.
    public var isEnded: Bool { ended.load(ordering: .relaxed) }

    /// A live stream is never finished: the room runs until it is stopped.
    public var isFinished: Bool { false }

    /// Marks the participant as gone (timeout, RTCP BYE): from the next frame on the track renders
    /// silence, keeping its place on the timeline. A packet arriving later re-opens the stream as
    /// a sender restart (re-anchored at its arrival). Idempotent; any thread.
    public func markEnded() { ended.store(true, ordering: .sequentiallyConsistent) }

    // MARK: - Producer (receive thread)

    /// Stores one RTP packet's Opus payload for playout. Producer (receive thread) only; copies
    /// `payload` (at most 1500 bytes) and returns at once; never decodes, blocks or allocates.
    ///
    /// - Parameters:
    ///   - sequence: the RTP sequence number.
    ///   - timestamp: the RTP timestamp (48 kHz units, RFC 7587).
    ///   - payload: the Opus packet (RTP payload without padding).
    ///   - arrival: when it arrived, `CLOCK_MONOTONIC` nanoseconds.
    @discardableResult
    public func insert(
        sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrival: UInt64
    ) -> InsertResult {
        let stats = statistics
        stats.packetCounter.add(1, ordering: .relaxed)
        stats.byteCounter.add(payload.count, ordering: .relaxed)
        lastArrivalNanos.store(arrival, ordering: .relaxed)
        guard payload.count <= JitterPacketRing.maxPayload, let duration = LiveOpusDecoder.duration(of: payload)
        else {
            stats.invalidCounter.add(1, ordering: .relaxed)
            return .invalid
        }
        let arrivalRoom = arrivalToRoom(arrival)
        var reopened = false
        if ended.load(ordering: .sequentiallyConsistent) {
            ended.store(false, ordering: .sequentiallyConsistent)
            reopened = true
        }
        if firstExtended < 0 {
            return anchorFirst(
                sequence: sequence, timestamp: timestamp, payload: payload, arrivalRoom: arrivalRoom,
                duration: duration)
        }

        var (extended, distance) = sequences.peek(sequence)
        extended += sequenceOffset
        var extendedTimestamp = timestamps.extend(timestamp)
        let timestampDistance = extendedTimestamp - (timestamps.reference ?? extendedTimestamp)
        var startsStream = false
        if reopened || abs(distance) > Self.restartSequenceJump || abs(timestampDistance) > Self.restartTimestampJump {
            restart(sequence: sequence, timestamp: timestamp, arrivalRoom: arrivalRoom)
            startsStream = true
            extended = highest + 1
            extendedTimestamp = timestamps.extend(timestamp)
        }

        let read = max(readSequence.load(ordering: .acquiring), firstExtended)
        if ring.stamp(at: extended) == extended {
            stats.duplicateCounter.add(1, ordering: .relaxed)
            return .duplicate
        }
        let position = anchorRoom + (extendedTimestamp - anchorTimestamp)
        observeDelay(arrivalRoom: arrivalRoom, position: position)
        if extended < read - Int64(ring.capacity) {
            stats.lateCounter.add(1, ordering: .relaxed)
            return .tooOld
        }
        let isReordered = extended < highest
        if isReordered { stats.reorderedCounter.add(1, ordering: .relaxed) }
        if extended < read {
            stats.lateCounter.add(1, ordering: .relaxed)
            return .late
        }
        if extended >= read + Int64(ring.capacity) {
            stats.overflowCounter.add(1, ordering: .relaxed)
            return .overflow
        }
        _ = sequences.unwrap(sequence)
        if extended > highest {
            highest = extended
            timestamps.setReference(extendedTimestamp)
        }
        store(
            extended: extended, timestamp: timestamp, position: position, duration: duration, payload: payload,
            arrivalRoom: arrivalRoom, startsStream: startsStream)
        return .accepted
    }

    private func anchorFirst(
        sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrivalRoom: Int64, duration: Int
    ) -> InsertResult {
        let extended = sequences.unwrap(sequence)
        let extendedTimestamp = timestamps.extend(timestamp)
        timestamps.setReference(extendedTimestamp)
        anchorTimestamp = extendedTimestamp
        anchorRoom = arrivalRoom
        highest = extended
        firstExtended = extended
        observeDelay(arrivalRoom: arrivalRoom, position: arrivalRoom)
        store(
            extended: extended, timestamp: timestamp, position: arrivalRoom, duration: duration, payload: payload,
            arrivalRoom: arrivalRoom, startsStream: false)
        firstSequence.store(extended, ordering: .releasing)
        applySenderReport()
        return .accepted
    }

    /// Records an RTCP sender report of this stream (RFC 3550 §6.4.1): its sender's wall clock
    /// `ntp` is RTP timestamp `rtpTimestamp`. The first report of a stream's anchor places the
    /// stream on the room's ``SenderClockSync`` mapping: the shift (bounded by ``maxDelay``;
    /// a larger one means an unrelated wall clock and is ignored; one within
    /// ``senderReportDeadband`` is not needed) is applied in quiet frames like a delay change. Later reports are not applied (drift correction follows the clock from
    /// arrivals). Producer (the receive thread of the stream's port) only; no-op without a
    /// ``SenderClockSync``.
    public func noteSenderReport(ntp: NTPTimestamp, rtpTimestamp: UInt32) {
        guard senderClock != nil, !reportApplied else { return }
        report = (SenderClockSync.samples(ntp), rtpTimestamp)
        applySenderReport()
    }

    /// Places the anchored stream on the sender-report mapping once a report is known.
    private func applySenderReport() {
        guard let senderClock, let report, !reportApplied, firstExtended >= 0 else { return }
        reportApplied = true
        let distance = Int64(Int32(bitPattern: report.rtp &- UInt32(truncatingIfNeeded: anchorTimestamp)))
        let applied = syncShared.load(ordering: .relaxed)
        let room = senderClock.roomSample(ofNTP: report.ntp - distance, proposal: anchorRoom + applied)
        var wanted = room - anchorRoom
        guard abs(wanted - applied) <= maxDelay else { return }
        if !isAdaptive {
            // A fixed delay cannot grow to cover a longer path: play earlier only as far as it leaves.
            wanted = max(wanted, applied - max(0, targetDelay - DelayEstimator.guardSamples))
        }
        statistics.syncUsedFlag.store(true, ordering: .relaxed)
        published = -1
        guard abs(wanted - applied) > Self.senderReportDeadband else { return }
        syncWanted = wanted
        syncTarget.store(wanted, ordering: .relaxed)
    }

    /// A new sender behind the same stream: number its packets on from the old ones and anchor
    /// its timestamps at this arrival (shifted by the consumer's drift correction so it plays
    /// `targetDelay` after arriving), never before the end of what was placed already.
    private func restart(sequence: UInt16, timestamp: UInt32, arrivalRoom: Int64) {
        statistics.restartCounter.add(1, ordering: .relaxed)
        sequences.reset()
        let raw = sequences.unwrap(sequence)
        sequenceOffset = highest + 1 - raw
        timestamps.reset()
        let extendedTimestamp = timestamps.extend(timestamp)
        timestamps.setReference(extendedTimestamp)
        anchorTimestamp = extendedTimestamp
        // Played at anchor + delay + sync + drift: `delay` after this arrival, wherever it was.
        let applied = syncShared.load(ordering: .relaxed)
        anchorRoom = max(arrivalRoom - driftShared.load(ordering: .relaxed) - applied, timelineEnd)
        syncWanted = applied
        syncTarget.store(applied, ordering: .relaxed)
        report = nil
        reportApplied = false
        previousTransit = nil
    }

    /// Feeds the delay estimator with a packet placed at timeline `position` that arrived at room
    /// sample `arrivalRoom`, and publishes the delay it calls for (within the bounds).
    private func observeDelay(arrivalRoom: Int64, position: Int64) {
        guard isAdaptive else { return }
        let relative = arrivalRoom - position - driftShared.load(ordering: .relaxed) - syncWanted
        let estimate = delayEstimator.observe(relativeArrival: relative, arrival: arrivalRoom)
        let needed = min(maxDelay, max(targetDelay, estimate))
        neededDelay.store(needed, ordering: .relaxed)
        if needed != published, let senderClock, statistics.senderReportTimingUsed {
            published = needed
            _ = senderClock.update(ObjectIdentifier(self), needs: needed)
        }
    }

    private func store(
        extended: Int64, timestamp: UInt32, position: Int64, duration: Int, payload: UnsafeRawBufferPointer,
        arrivalRoom: Int64, startsStream: Bool
    ) {
        ring.write(
            extended: extended, payload: payload, position: position, duration: duration,
            hasFEC: LiveOpusDecoder.hasFEC(payload), startsStream: startsStream)
        highestSequence.store(highest, ordering: .sequentiallyConsistent)
        timelineEnd = max(timelineEnd, position + Int64(duration))
        // RFC 3550 §6.4.1 / Appendix A.8: J += (|D| - J) / 16, in timestamp units, kept scaled by 16.
        let transit = UInt32(truncatingIfNeeded: arrivalRoom) &- timestamp
        if let previous = previousTransit {
            let d = abs(Int(Int32(bitPattern: transit &- previous)))
            jitterQ4 += d - ((jitterQ4 + 8) >> 4)
            statistics.jitterQ4.store(jitterQ4, ordering: .relaxed)
        }
        previousTransit = transit
        if let estimate = drift.observe(skew: arrivalRoom - position, arrival: arrivalRoom) {
            slide.store(estimate, ordering: .relaxed)
        }
    }

    // MARK: - Consumer (room clock's thread)

    /// Renders the 10 ms at room sample `roomSample`: decodes, recovers (FEC), conceals (PLC) or
    /// fills silence exactly as far as this frame needs. Consumer (room clock's thread) only; never
    /// blocks, locks or allocates. `.silence` before the first packet, after ``markEnded()`` and in
    /// gaps; `.concealed` when any sample is PLC. Frames are expected at consecutive room samples
    /// (480 apart); after a jump the playout cursor is re-placed so audio keeps its room position.
    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frames = AudioFrame.samplesPerChannel
        let out = samples.baseAddress!
        assert(samples.count >= frames * channels, "a frame holds 480 samples per channel")
        if !started {
            let first = firstSequence.load(ordering: .acquiring)
            guard first >= 0 else {
                out.update(repeating: 0, count: frames * channels)
                return .silence
            }
            started = true
            nextSequence = first
            delay = isAdaptive ? wantedDelay() : targetDelay
            sync = syncTarget.load(ordering: .relaxed)
            lag = delay + sync
            publishDelay()
            playout.reset(at: roomSample - lag)
        }
        let newest = highestSequence.load(ordering: .sequentiallyConsistent)
        if ended.load(ordering: .sequentiallyConsistent) {
            // Gone: silence on the timeline; skip whatever is left, so a return starts fresh.
            nextSequence = max(nextSequence, newest + 1)
            lastWasDTX = true
            // Silence either way: take the wanted delay and sync at once.
            let drift = lag - delay - sync
            if isAdaptive { delay = wantedDelay() }
            sync = syncTarget.load(ordering: .relaxed)
            lag = delay + sync + drift
            publishDelay()
            playout.reset(at: roomSample + Int64(frames) - lag)
            readSequence.store(nextSequence, ordering: .releasing)
            out.update(repeating: 0, count: frames * channels)
            return .silence
        }
        if playout.start != roomSample - lag {
            playout.reset(at: roomSample - lag)  // the room skipped frames: keep the timeline
        }
        sinceShrink += 1
        let step = adaptationStep()
        if step == 0 {
            // Measured only while a change waits.
            previousQuiet = false
            recentPeak = 0
        }
        if step > 0, let status = lengthen(by: Int(step), into: out) {
            readSequence.store(nextSequence, ordering: .releasing)
            return status
        }
        if step < 0 { shorten(by: Int(-step)) }
        let adjust = driftAdjustment()
        lag += Int64(adjust)
        fill(upTo: playout.start + Int64(frames - adjust))
        let status = playout.play(into: out, adjust: adjust)
        readSequence.store(nextSequence, ordering: .releasing)
        driftShared.store(lag - delay - sync, ordering: .relaxed)
        if step != 0 { measure(out) }
        return status
    }

    // MARK: - Delay adaptation (consumer)

    /// The change of lag this frame would like (samples; 0 when delay and sync are where they are
    /// wanted): a growing step first (a whole frame of delay, or up to a frame of sync), then a
    /// shrinking one at most every ``shrinkInterval`` frames.
    private func adaptationStep() -> Int64 {
        let frame = Int64(AudioFrame.samplesPerChannel)
        let wantedDelay = self.wantedDelay()
        let wantedSync = syncTarget.load(ordering: .relaxed)
        if wantedDelay > delay { return frame }
        if wantedSync > sync { return min(frame, wantedSync - sync) }
        guard sinceShrink >= Self.shrinkInterval else { return 0 }
        if wantedDelay < delay { return -frame }
        if wantedSync < sync { return -min(frame, sync - wantedSync) }
        return 0
    }

    /// Plays `step` samples of silence before this frame's audio (the delay or the sync offset
    /// grows by `step`) when both the last frame and this one are quiet; nil (nothing played)
    /// otherwise.
    private func lengthen(by step: Int, into out: UnsafeMutablePointer<Int16>) -> FrameStatus? {
        let frames = AudioFrame.samplesPerChannel
        fill(upTo: playout.start + Int64(frames))
        guard previousQuiet, playout.isQuiet(frames: frames, peak: quietLimit) else {
            previousQuiet = false  // re-measured on the frame played below
            return nil
        }
        apply(Int64(step))
        out.update(from: lastQuiet, count: step * channels)
        let status = playout.play(into: out + step * channels, frames: frames - step)
        driftShared.store(lag - delay - sync, ordering: .relaxed)
        measure(out)
        return status
    }

    /// Drops the next `step` samples of the timeline (the delay or the sync offset shrinks by
    /// `step`) when the last frame was quiet and they are too; else nothing.
    private func shorten(by step: Int) {
        let frames = AudioFrame.samplesPerChannel
        guard previousQuiet else { return }
        fill(upTo: playout.start + Int64(step + frames + 1))
        guard playout.isQuiet(frames: step, peak: quietLimit) else { return }
        playout.discard(step)
        apply(-Int64(step))
        sinceShrink = 0
    }

    /// Moves lag by `step`, booking it on the delay when the delay wants to move that way, else
    /// on the sync offset; counts the adaptation.
    private func apply(_ step: Int64) {
        let wantedDelay = self.wantedDelay()
        if (step > 0 && wantedDelay > delay) || (step < 0 && wantedDelay < delay) {
            delay += step
        } else {
            sync += step
        }
        lag += step
        statistics.adaptationCounter.add(1, ordering: .relaxed)
        publishDelay()
    }

    /// The delay arrivals call for; for a stream placed by sender reports, the largest any such
    /// stream needs (they share one delay to stay aligned).
    private func wantedDelay() -> Int64 {
        guard isAdaptive else { return delay }
        let own = neededDelay.load(ordering: .relaxed)
        guard let senderClock, statistics.senderReportTimingUsed else { return own }
        return min(maxDelay, max(own, senderClock.sharedDelay))
    }

    private func publishDelay() {
        let stats = statistics
        stats.delaySamples.store(delay, ordering: .relaxed)
        if delay < stats.minDelaySamples.load(ordering: .relaxed) {
            stats.minDelaySamples.store(delay, ordering: .relaxed)
        }
        if delay > stats.maxDelaySamples.load(ordering: .relaxed) {
            stats.maxDelaySamples.store(delay, ordering: .relaxed)
        }
        stats.syncSamples.store(sync, ordering: .relaxed)
        syncShared.store(sync, ordering: .relaxed)
        driftShared.store(lag - delay - sync, ordering: .relaxed)
    }

    /// The peak below which a frame is quiet now.
    private var quietLimit: Int { min(Self.quietPeakCeiling, max(Self.quietPeak, recentPeak / 100)) }

    /// Notes the frame just played: its peak, whether it was quiet (and keeps it if so).
    private func measure(_ out: UnsafeMutablePointer<Int16>) {
        let count = AudioFrame.samplesPerChannel * channels
        var peak = 0
        for i in 0..<count { peak = max(peak, abs(Int(out[i]))) }
        recentPeak = max(peak, recentPeak - recentPeak >> 8)
        previousQuiet = peak <= quietLimit
        if previousQuiet { lastQuiet.update(from: out, count: count) }
    }

    /// +1 (repeat a sample, lag grows), -1 (drop one, lag shrinks) or 0 for this frame.
    private func driftAdjustment() -> Int {
        let estimate = slide.load(ordering: .relaxed)
        guard estimate != .min else { return 0 }
        let error = delay + sync + estimate - lag
        if correcting {
            if error == 0 {
                correcting = false
                return 0
            }
        } else if abs(error) > driftDeadband {
            correcting = true
        } else {
            return 0
        }
        statistics.driftCorrectionCounter.add(1, ordering: .relaxed)
        return error > 0 ? 1 : -1
    }

    /// Decodes, conceals or fills silence until the playout buffer reaches timeline `target`.
    private func fill(upTo target: Int64) {
        while playout.end < target {
            if let packet = ring.packet(at: nextSequence) {
                if packet.position + Int64(packet.duration) <= playout.end {
                    // Its time has been played (concealed) already.
                    statistics.lateCounter.add(1, ordering: .relaxed)
                    nextSequence += 1
                } else if packet.position > playout.end {
                    // A timestamp gap with no sequence gap: DTX, a paused sender.
                    playout.appendSilence(frames: Int(min(packet.position, target) - playout.end))
                } else {
                    decode(packet)
                    nextSequence += 1
                }
                continue
            }
            guard let (later, packet) = firstPresent(after: nextSequence) else {
                conceal(upTo: target)  // nothing after it yet: an underrun (loss, or the sender stopped)
                continue
            }
            let gap = packet.position - playout.end
            if gap <= 0 {
                declareLost(upTo: later)
            } else if packet.hasFEC && gap <= Int64(LiveOpusDecoder.maxFrameSamples) && gap >= packet.duration {
                recover(from: packet, frames: Int(gap))
                declareLost(upTo: later)
            } else {
                let fecReserve = packet.hasFEC ? Int64(LiveOpusDecoder.maxFrameSamples) : 0
                conceal(upTo: min(target, max(playout.end + 1, packet.position - fecReserve)))
                if playout.end >= packet.position { declareLost(upTo: later) }
            }
        }
    }

    private func declareLost(upTo later: Int64) {
        statistics.lostCounter.add(Int(later - nextSequence), ordering: .relaxed)
        nextSequence = later
    }

    /// The first packet held after `sequence`, if any has arrived.
    private func firstPresent(after sequence: Int64) -> (Int64, JitterPacketRing.Packet)? {
        let newest = highestSequence.load(ordering: .acquiring)
        guard newest > sequence else { return nil }
        var s = sequence + 1
        let last = min(newest, sequence + Int64(ring.capacity) - 1)
        while s <= last {
            if let packet = ring.packet(at: s) { return (s, packet) }
            s += 1
        }
        return nil
    }

    private func decode(_ packet: JitterPacketRing.Packet) {
        if packet.startsStream { decoder.reset() }
        let n = decoder.decode(packet.payload, into: scratch, maxFrames: LiveOpusDecoder.maxFrameSamples)
        guard n > 0 else {
            // Passed the TOC check but libopus refused it: conceal its duration.
            concealRun = 0
            conceal(upTo: max(playout.end, packet.position + Int64(packet.duration)))
            return
        }
        let skip = Int(max(0, playout.end - packet.position))
        if skip < n { playout.append(scratch + skip * channels, frames: n - skip, kind: .audio) }
        lastWasDTX = packet.payload.count <= 2
        concealRun = 0
    }

    /// Decodes the `frames` before `packet` from its in-band FEC (PLC for all but the last
    /// packet-duration).
    private func recover(from packet: JitterPacketRing.Packet, frames: Int) {
        let rounded = roundUp(frames)
        let n = decoder.decodeFEC(from: packet.payload, into: scratch, frames: rounded)
        guard n > 0 else {
            conceal(upTo: playout.end + Int64(frames))
            return
        }
        let fec = min(packet.duration, n)
        let plc = n - fec
        if plc > 0 {
            playout.append(scratch, frames: plc, kind: .concealed)
            statistics.concealedCounter.add(plc, ordering: .relaxed)
        }
        playout.append(scratch + plc * channels, frames: fec, kind: .audio)
        statistics.fecCounter.add(1, ordering: .relaxed)
        concealRun = 0
    }

    /// PLC up to timeline `limit` (in 2.5 ms steps, so it may pass it by < 2.5 ms), or silence
    /// after a DTX packet or once ``maxConcealment`` samples have been concealed in a row.
    private func conceal(upTo limit: Int64) {
        let wanted = Int(limit - playout.end)
        guard wanted > 0 else { return }
        if lastWasDTX || concealRun >= maxConcealment {
            playout.appendSilence(frames: wanted)
            return
        }
        let frames = min(roundUp(wanted), LiveOpusDecoder.maxFrameSamples, roundUp(maxConcealment - concealRun))
        let n = decoder.conceal(into: scratch, frames: frames)
        guard n > 0 else {
            playout.appendSilence(frames: wanted)
            return
        }
        playout.append(scratch, frames: n, kind: .concealed)
        statistics.concealedCounter.add(n, ordering: .relaxed)
        concealRun += n
    }

    private func roundUp(_ frames: Int) -> Int {
        let g = LiveOpusDecoder.granularity
        return max(g, (frames + g - 1) / g * g)
    }
}
