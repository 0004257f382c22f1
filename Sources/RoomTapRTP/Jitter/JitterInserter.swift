import RoomTapCore

/// The receive side of one stream's jitter buffer (NetEq's "packet inserter"): validates each
/// RTP packet, numbers it (16-bit sequence and 32-bit timestamp unwrapped, RFC 3550 Appendix A.1,
/// https://www.rfc-editor.org/rfc/rfc3550#appendix-A.1), places it on the stream's timeline,
/// measures the network (delay, jitter, drift, least skew) and copies it into the packet ring.
///
/// Placement: the first packet's arrival `A` (room time, by the injected ``RoomTimeMapping``)
/// anchors the stream: packet `T` has timeline position `P(T) = A + (T − T₀)`, the timestamp
/// distance converted from the codec's RTP clock to 48 kHz (×6 for G.711 and G.722's 8000,
/// rounded down for a rate that does not divide 48000), and a duration of the 48 kHz samples
/// between its start and end. Each playout adds
/// its own lag (and the record its anchor refinement, from ``JitterStreamState/leastSkew``). A
/// jump of more than 1000 in sequence number or 10 s in timestamp is a sender restart: the stream
/// is re-anchored at the new packet's arrival, never before the end of audio already placed.
///
/// Late packets: one that arrives after a playout has passed its place is counted late for that
/// playout; it is stored while the other (the record, which waits longer) still wants it.
///
/// Thread: confined to one receive thread; it never decodes, blocks or allocates.
final class JitterInserter {
    let targetDelay: Int64
    let maxDelay: Int64
    let isAdaptive: Bool
    /// The stream's codec: how long a payload is, and the RTP clock rate.
    let codec: AudioCodec
    private let ring: JitterPacketRing
    private let state: JitterStreamState
    private let statistics: JitterStatistics
    private let arrivalToRoom: RoomTimeMapping
    private let senderClock: SenderClockSync?

    private var sequences = SequenceUnwrapper()
    private var timestamps = TimestampUnwrapper()
    private var sequenceOffset: Int64 = 0
    private var firstExtended: Int64 = -1
    private var highest: Int64 = -1
    private var anchorRoom: Int64 = 0
    private var anchorTimestamp: Int64 = 0
    private var timelineEnd: Int64 = .min
    private var leastSkew: Int64 = .max
    private var drift = DriftEstimator()
    private var previousTransit: UInt32?
    private var jitterQ4 = 0
    private var delayEstimator = DelayEstimator()
    private var syncWanted: Int64 = 0
    private var report: (ntp: Int64, rtp: UInt32)?
    private var reportApplied = false
    private var published: Int64 = -1

    init(
        targetDelay: Int64, maxDelay: Int64, adaptive: Bool, codec: AudioCodec = .opus, senderClock: SenderClockSync?,
        ring: JitterPacketRing, state: JitterStreamState, statistics: JitterStatistics,
        arrivalToRoom: @escaping RoomTimeMapping
    ) {
        self.codec = codec
        self.targetDelay = targetDelay
        self.maxDelay = maxDelay
        self.isAdaptive = adaptive
        self.senderClock = senderClock
        self.ring = ring
        self.state = state
        self.statistics = statistics
        self.arrivalToRoom = arrivalToRoom
    }

    /// See ``JitterBuffer/insert(sequence:timestamp:payload:arrival:)``.
    func insert(
        sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrival: UInt64
    ) -> JitterBuffer.InsertResult {
        let stats = statistics
        stats.packetCounter.add(1, ordering: .relaxed)
        stats.byteCounter.add(payload.count, ordering: .relaxed)
        state.lastArrivalNanos.store(arrival, ordering: .relaxed)
        guard payload.count <= JitterPacketRing.maxPayload, let units = timestampUnits(of: payload) else {
            stats.invalidCounter.add(1, ordering: .relaxed)
            return .invalid
        }
        let arrivalRoom = arrivalToRoom(arrival)
        var reopened = false
        if state.ended.load(ordering: .sequentiallyConsistent) {
            state.ended.store(false, ordering: .sequentiallyConsistent)
            reopened = true
        }
        if firstExtended < 0 {
            return anchorFirst(
                sequence: sequence, timestamp: timestamp, payload: payload, arrivalRoom: arrivalRoom,
                duration: Int(roomSamples(Int64(units))))
        }

        var (extended, distance) = sequences.peek(sequence)
        extended += sequenceOffset
        var extendedTimestamp = timestamps.extend(timestamp)
        let timestampDistance = extendedTimestamp - (timestamps.reference ?? extendedTimestamp)
        var startsStream = false
        if reopened || abs(distance) > JitterBuffer.restartSequenceJump
            || abs(roomSamples(timestampDistance)) > JitterBuffer.restartTimestampJump
        {
            restart(sequence: sequence, timestamp: timestamp, arrivalRoom: arrivalRoom)
            startsStream = true
            extended = highest + 1
            extendedTimestamp = timestamps.extend(timestamp)
        }

        let liveRead = state.liveRead.load(ordering: .acquiring)
        let recordRead = state.recordRead.load(ordering: .acquiring)
        // Before the record starts it still takes packets sent before the first that arrived.
        let floor = recordRead < 0 ? max(0, firstExtended - JitterBuffer.earlyPackets) : firstExtended
        let read = max(min(liveRead, recordRead), floor)
        if ring.stamp(at: extended) == extended {
            stats.duplicateCounter.add(1, ordering: .relaxed)
            return .duplicate
        }
        let sinceAnchor = extendedTimestamp - anchorTimestamp
        let position = anchorRoom + roomSamples(sinceAnchor)
        let duration = Int(roomSamples(sinceAnchor + Int64(units)) - roomSamples(sinceAnchor))
        observeDelay(arrivalRoom: arrivalRoom, position: position)
        // Late for a playout that has passed it (each counts its own).
        if extended < liveRead && liveRead != .max { stats.live.lateArrivalCounter.add(1, ordering: .relaxed) }
        if extended < recordRead { stats.record?.lateArrivalCounter.add(1, ordering: .relaxed) }
        if extended < read - Int64(ring.capacity) { return .tooOld }
        let isReordered = extended < highest
        if isReordered { stats.reorderedCounter.add(1, ordering: .relaxed) }
        if extended < read { return .late }
        if extended >= read + Int64(ring.capacity)
            || !ring.hasRoom(for: payload.count, read: read, highest: max(highest, extended))
        {
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

    /// The payload's length in RTP timestamp units, or nil when it is not a valid payload of the
    /// codec.
    private func timestampUnits(of payload: UnsafeRawBufferPointer) -> Int? {
        codec.isOpus ? LiveOpusDecoder.duration(of: payload) : PCMPayload.timestampUnits(of: payload, codec: codec)
    }

    /// `ticks` of the codec's RTP clock as 48 kHz samples, rounded down.
    private func roomSamples(_ ticks: Int64) -> Int64 {
        let rate = Int64(codec.clockRate)
        if rate == 48_000 { return ticks }
        let scaled = ticks * 48_000
        return scaled >= 0 ? scaled / rate : -((-scaled + rate - 1) / rate)
    }

    private func anchorFirst(
        sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrivalRoom: Int64, duration: Int
    ) -> JitterBuffer.InsertResult {
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
        state.firstSequence.store(extended, ordering: .releasing)
        applySenderReport()
        return .accepted
    }

    /// See ``JitterBuffer/noteSenderReport(ntp:rtpTimestamp:)``.
    func noteSenderReport(ntp: NTPTimestamp, rtpTimestamp: UInt32) {
        guard senderClock != nil, !reportApplied else { return }
        report = (SenderClockSync.samples(ntp), rtpTimestamp)
        applySenderReport()
    }

    /// Places the anchored stream on the sender-report mapping once a report is known.
    private func applySenderReport() {
        guard let senderClock, let report, !reportApplied, firstExtended >= 0 else { return }
        reportApplied = true
        let distance = Int64(Int32(bitPattern: report.rtp &- UInt32(truncatingIfNeeded: anchorTimestamp)))
        let applied = state.liveSync.load(ordering: .relaxed)
        let room = senderClock.roomSample(ofNTP: report.ntp - distance, proposal: anchorRoom + applied)
        var wanted = room - anchorRoom
        guard abs(wanted - applied) <= maxDelay else { return }
        if !isAdaptive {
            // A fixed delay cannot grow to cover a longer path: play earlier only as far as it leaves.
            wanted = max(wanted, applied - max(0, targetDelay - DelayEstimator.guardSamples))
        }
        statistics.syncUsedFlag.store(true, ordering: .relaxed)
        published = -1
        // The record takes the exact place; the live playout skips shifts within the dead band.
        state.recordSync.store(wanted, ordering: .relaxed)
        state.syncKnown.store(true, ordering: .releasing)
        guard abs(wanted - applied) > JitterBuffer.senderReportDeadband else { return }
        syncWanted = wanted
        state.syncTarget.store(wanted, ordering: .relaxed)
    }

    /// A new sender behind the same stream: number its packets on from the old ones and anchor
    /// its timestamps at this arrival (shifted by the live playout's drift correction so it plays
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
        let applied = state.liveSync.load(ordering: .relaxed)
        anchorRoom = max(arrivalRoom - state.liveDrift.load(ordering: .relaxed) - applied, timelineEnd)
        syncWanted = applied
        state.syncTarget.store(applied, ordering: .relaxed)
        state.syncKnown.store(false, ordering: .relaxed)
        leastSkew = .max
        state.leastSkew.store(.max, ordering: .relaxed)
        report = nil
        reportApplied = false
        previousTransit = nil
        // The new anchor steps the skew: not a drifting clock (DriftEstimator.restart).
        drift.restart()
    }

    /// Feeds the delay estimator with a packet placed at timeline `position` that arrived at room
    /// sample `arrivalRoom`, and publishes the delay it calls for (within the bounds).
    private func observeDelay(arrivalRoom: Int64, position: Int64) {
        guard isAdaptive else { return }
        let relative = arrivalRoom - position - state.liveDrift.load(ordering: .relaxed) - syncWanted
        let estimate = delayEstimator.observe(relativeArrival: relative, arrival: arrivalRoom)
        let needed = min(maxDelay, max(targetDelay, estimate))
        state.neededDelay.store(needed, ordering: .relaxed)
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
            hasFEC: codec.isOpus && LiveOpusDecoder.hasFEC(payload), startsStream: startsStream)
        state.highestSequence.store(highest, ordering: .sequentiallyConsistent)
        timelineEnd = max(timelineEnd, position + Int64(duration))
        let skew = arrivalRoom - position
        if skew < leastSkew {
            leastSkew = skew
            state.leastSkew.store(skew, ordering: .relaxed)
        }
        // RFC 3550 §6.4.1 / Appendix A.8: J += (|D| - J) / 16, in 48 kHz units (the timestamp
        // units of Opus), kept scaled by 16. The transit is arrival − position: arrival −
        // timestamp up to a constant of the sender.
        let transit = UInt32(truncatingIfNeeded: arrivalRoom - position)
        if let previous = previousTransit {
            let d = abs(Int(Int32(bitPattern: transit &- previous)))
            jitterQ4 += d - ((jitterQ4 + 8) >> 4)
            statistics.jitterQ4.store(jitterQ4, ordering: .relaxed)
        }
        previousTransit = transit
        if let estimate = drift.observe(skew: skew, arrival: arrivalRoom) {
            state.slide.store(estimate, ordering: .relaxed)
        }
    }
}
