/// Decodes one playout's packets from the stream's ``JitterPacketRing`` into its ``PlayoutBuffer``,
/// packet by packet on the packet grid (RFC 6716, https://www.rfc-editor.org/rfc/rfc6716).
///
/// Each playout (live and record) has its own: its own decoder (libopus for Opus, a
/// ``PCMPayloadDecoder`` for the PBX codecs; see ``PayloadDecoder``), buffer and read position,
/// so what one conceals never changes what the other decodes. A decoder whose output runs behind
/// its packets (a resampler's ``PayloadDecoder/lead``) has every packet placed that much earlier.
///
/// - A present packet is decoded whole (its start trimmed only where audio is already buffered
///   there, i.e. after an underrun).
/// - A missing packet with a later one present is lost: its duration (the timestamp gap shared
///   evenly among the missing packets) is concealed with **one** libopus PLC call, or, for the
///   last missing packet before one that carries in-band FEC (LBRR), decoded from that FEC
///   (RFC 6716 §2.1.7). So a lost 20 ms packet costs exactly one `opus_decode(NULL, 960)`, as a
///   decoder that was handed the same packets would do.
/// - Only a true underrun (nothing later has arrived) conceals incrementally, in 2.5 ms steps up
///   to ``maxConcealment`` samples in a row, then silence; after a DTX packet (≤ 2 bytes) silence
///   at once. The record plays silence on an underrun (see ``fill(upTo:underrunIsSilence:)``).
/// - A timestamp gap without a sequence gap (DTX, a paused sender) is silence.
///
/// What to do next is a ``PlayoutDecision``, a pure function of plain numbers (table-tested
/// without libopus); this class gathers its inputs and performs it.
///
/// Thread: confined to the room clock's thread. Nothing allocates after init.
final class PlayoutDecoder {
    /// Where packets of this playout sit: their timeline position plus ``offset``.
    enum Placement {
        /// As the inserter placed them (the live playout; its lag does the rest).
        case asPlaced
        /// Shifted onto the stream's least-delayed packets (the record playout; see
        /// ``RecordPlayout``): each new sender is re-placed when its first packet is decoded.
        case leastSkew
    }

    let channels: Int
    let playout: PlayoutBuffer
    let statistics: PlayoutStatistics
    /// Longest PLC of one underrun, in samples; silence after.
    var maxConcealment: Int { concealment.limit }
    /// The next packet (extended sequence number) this playout wants.
    var nextSequence: Int64 = 0
    /// Added to every packet's timeline position (samples).
    var offset: Int64 = 0
    /// Set by the owner: where a new sender's first packet goes (see ``Placement``).
    let placement: Placement

    private let ring: JitterPacketRing
    private let state: JitterStreamState
    private let decoder: any PayloadDecoder
    /// The decoder's ``PayloadDecoder/lead``, subtracted from every packet's position.
    private let lead: Int64
    private let scratch: UnsafeMutablePointer<Int16>
    /// After DTX, and how much was concealed in a row (reset by every packet decoded).
    private var concealment: PlayoutDecision.Concealment
    private var placedRestart: Int64 = -1

    /// Nil if the codec's library cannot create a decoder.
    init?(
        channels: Int, codec: AudioCodec = .opus, ring: JitterPacketRing, state: JitterStreamState,
        statistics: PlayoutStatistics, placement: Placement, maxConcealment: Int, bufferCapacity: Int
    ) {
        guard let decoder = makePayloadDecoder(codec: codec, channels: channels) else { return nil }
        lead = Int64(decoder.lead)
        self.channels = channels
        self.ring = ring
        self.state = state
        self.statistics = statistics
        self.placement = placement
        concealment = PlayoutDecision.Concealment(limit: maxConcealment, step: decoder.concealmentStep)
        self.decoder = decoder
        playout = PlayoutBuffer(channels: channels, capacity: bufferCapacity)
        scratch = .allocate(capacity: LiveOpusDecoder.maxFrameSamples * channels)
        scratch.initialize(repeating: 0, count: LiveOpusDecoder.maxFrameSamples * channels)
    }

    deinit { scratch.deallocate() }

    /// Plays silence from now on, as after a DTX packet (the participant left).
    func silenceFollows() { concealment.afterDTX = true }

    /// Decodes, conceals or fills silence until the buffer reaches timeline `target` (it may pass
    /// it by up to one packet). `underrunIsSilence`: with nothing left to decode, play silence
    /// rather than concealment (the record: it waited the whole record delay for a packet that
    /// did not come, so the sender paused or left; nothing was lost that a later packet shows).
    ///
    /// Each step gathers the ``PlayoutDecision/Inputs``, takes the ``PlayoutDecision`` and
    /// performs it.
    func fill(upTo target: Int64, underrunIsSilence: Bool = false) {
        while playout.end < target {
            var inputs = PlayoutDecision.Inputs(
                end: playout.end, target: target, sequence: nextSequence, underrunIsSilence: underrunIsSilence,
                concealment: concealment)
            // The packet the decision is about: the wanted one, else the first later one held
            // (decode and recoverFromFEC are decided only when it is there).
            let held: JitterPacketRing.Packet?
            if let wanted = wantedPacket() {
                held = wanted
                inputs.wanted = placed(wanted)
            } else if let (later, packet) = firstPresent(after: nextSequence) {
                held = packet
                inputs.later = PlayoutDecision.Later(sequence: later, packet: placed(packet))
            } else {
                held = nil
            }
            switch PlayoutDecision(inputs) {
            case .decode(let skip):
                decode(held!, skip: skip)
                nextSequence += 1
            case .dropLate:
                // Its time was played (an underrun concealed it) before it came.
                statistics.lateDropCounter.add(1, ordering: .relaxed)
                nextSequence += 1
            case .silenceBeforePacket(let frames), .silenceUnderrun(let frames):
                playout.appendSilence(frames: frames)
            case .skipCovered(let later):
                missed(upTo: later)
            case .recoverFromFEC(let frames):
                recover(from: held!, frames: frames)
                missed(upTo: nextSequence + 1)
            case .concealLost(let frames):
                concealLost(frames: frames)
                missed(upTo: nextSequence + 1)
            case .concealUnderrun(let frames, let wanted):
                let n = decoder.conceal(into: scratch, frames: frames)
                if n > 0 { appendConcealed(n) } else { playout.appendSilence(frames: wanted) }
            }
        }
    }

    private func missed(upTo later: Int64) {
        statistics.missedCounter.add(Int(later - nextSequence), ordering: .relaxed)
        nextSequence = later
    }

    /// The packet at ``nextSequence`` if held; a new sender's first packet is placed first.
    private func wantedPacket() -> JitterPacketRing.Packet? {
        guard let packet = ring.packet(at: nextSequence) else { return nil }
        if packet.startsStream { placeRestart(packet, sequence: nextSequence) }
        return packet
    }

    /// `packet` as the decision sees it: on this playout's timeline.
    private func placed(_ packet: JitterPacketRing.Packet) -> PlayoutDecision.Packet {
        PlayoutDecision.Packet(
            position: packet.position + offset - lead, duration: packet.duration, hasFEC: packet.hasFEC)
    }

    /// A new sender's first packet: the record playout places it on its least-delayed packets,
    /// never before audio already buffered.
    private func placeRestart(_ packet: JitterPacketRing.Packet, sequence: Int64) {
        guard placement == .leastSkew, placedRestart != sequence else { return }
        placedRestart = sequence
        let least = state.leastSkew.load(ordering: .relaxed)
        let wanted = least == .max ? 0 : min(0, least)
        offset = max(wanted, playout.end - packet.position)
    }

    /// The first packet held after `sequence`, if any has arrived.
    private func firstPresent(after sequence: Int64) -> (Int64, JitterPacketRing.Packet)? {
        let newest = state.highestSequence.load(ordering: .acquiring)
        guard newest > sequence else { return nil }
        var s = sequence + 1
        let last = min(newest, sequence + Int64(ring.capacity) - 1)
        while s <= last {
            if let packet = ring.packet(at: s) { return (s, packet) }
            s += 1
        }
        return nil
    }

    /// Decodes `packet` and appends all but its first `skip` samples (already buffered).
    private func decode(_ packet: JitterPacketRing.Packet, skip: Int) {
        if packet.startsStream { decoder.reset() }
        let n = decoder.decode(packet.payload, into: scratch, frames: packet.duration)
        guard n > 0 else {
            // Passed the TOC check but libopus refused it: conceal the rest of its duration.
            concealLost(frames: packet.duration - skip)
            return
        }
        if skip < n { playout.append(scratch + skip * channels, frames: n - skip, kind: .audio) }
        concealment.afterDTX = decoder.isDTX(packet.payload)
        concealment.run = 0
    }

    /// Decodes the `frames` before `packet` from its in-band FEC (PLC for all but the last
    /// packet-duration); `frames` is a multiple of 2.5 ms.
    private func recover(from packet: JitterPacketRing.Packet, frames: Int) {
        let n = decoder.decodeFEC(from: packet.payload, into: scratch, frames: frames)
        guard n > 0 else {
            concealLost(frames: frames)
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
        concealment.run = 0
    }

    /// Conceals one missing packet of `frames` samples, piece by piece as
    /// ``PlayoutDecision/lostPiece(left:_:)`` decides: one PLC call when it is a whole number of
    /// 2.5 ms steps of at most 120 ms (every real Opus packet), else in 120 ms pieces with the
    /// last rounded up; silence after DTX, past ``maxConcealment`` or when the decoder refuses.
    private func concealLost(frames: Int) {
        var left = frames
        while left > 0 {
            switch PlayoutDecision.lostPiece(left: left, concealment) {
            case .silence(let frames):
                playout.appendSilence(frames: frames)
                return
            case .plc(let frames):
                let n = decoder.conceal(into: scratch, frames: frames)
                guard n > 0 else {
                    playout.appendSilence(frames: left)
                    return
                }
                appendConcealed(n)
                left -= n
            }
        }
    }

    /// Appends the `n` samples of PLC in the scratch buffer as concealment.
    private func appendConcealed(_ n: Int) {
        playout.append(scratch, frames: n, kind: .concealed)
        statistics.concealedCounter.add(n, ordering: .relaxed)
        concealment.run += n
    }
}
