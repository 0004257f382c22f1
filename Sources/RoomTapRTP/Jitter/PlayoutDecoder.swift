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
    let maxConcealment: Int
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
    private var concealRun = 0
    private var lastWasDTX = false
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
        self.maxConcealment = maxConcealment
        self.decoder = decoder
        playout = PlayoutBuffer(channels: channels, capacity: bufferCapacity)
        scratch = .allocate(capacity: LiveOpusDecoder.maxFrameSamples * channels)
        scratch.initialize(repeating: 0, count: LiveOpusDecoder.maxFrameSamples * channels)
    }

    deinit { scratch.deallocate() }

    /// Plays silence from now on, as after a DTX packet (the participant left).
    func silenceFollows() { lastWasDTX = true }

    /// Decodes, conceals or fills silence until the buffer reaches timeline `target` (it may pass
    /// it by up to one packet). `underrunIsSilence`: with nothing left to decode, play silence
    /// rather than concealment (the record: it waited the whole record delay for a packet that
    /// did not come, so the sender paused or left; nothing was lost that a later packet shows).
    func fill(upTo target: Int64, underrunIsSilence: Bool = false) {
        while playout.end < target {
            if var packet = ring.packet(at: nextSequence) {
                if packet.startsStream { placeRestart(packet, sequence: nextSequence) }
                packet.position += offset - lead
                if packet.position + Int64(packet.duration) <= playout.end {
                    // Its time was played (an underrun concealed it) before it came.
                    statistics.lateDropCounter.add(1, ordering: .relaxed)
                    nextSequence += 1
                } else if packet.position > playout.end {
                    playout.appendSilence(frames: Int(min(packet.position, target) - playout.end))
                } else {
                    decode(packet)
                    nextSequence += 1
                }
                continue
            }
            guard let (later, packet) = firstPresent(after: nextSequence) else {
                if underrunIsSilence {
                    playout.appendSilence(frames: Int(target - playout.end))
                } else {
                    conceal(upTo: target)  // an underrun: loss at the end, or the sender stopped
                }
                continue
            }
            let gap = packet.position + offset - lead - playout.end
            let missing = later - nextSequence
            if gap <= 0 {
                // Their time is covered already (concealed during an underrun).
                missed(upTo: later)
                continue
            }
            // One missing packet at a time, on the packet grid: its share of the gap.
            let share = gap / missing
            if missing == 1, packet.hasFEC, gap <= Int64(LiveOpusDecoder.maxFrameSamples),
                gap % Int64(decoder.concealmentStep) == 0, gap >= packet.duration
            {
                recover(from: packet, frames: Int(gap))
            } else {
                concealPacket(frames: Int(missing == 1 ? gap : share))
            }
            missed(upTo: nextSequence + 1)
        }
    }

    private func missed(upTo later: Int64) {
        statistics.missedCounter.add(Int(later - nextSequence), ordering: .relaxed)
        nextSequence = later
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

    private func decode(_ packet: JitterPacketRing.Packet) {
        if packet.startsStream { decoder.reset() }
        let n = decoder.decode(packet.payload, into: scratch, frames: packet.duration)
        guard n > 0 else {
            // Passed the TOC check but libopus refused it: conceal its duration.
            concealPacket(frames: max(0, Int(packet.position + Int64(packet.duration) - playout.end)))
            return
        }
        let skip = Int(max(0, playout.end - packet.position))
        if skip < n { playout.append(scratch + skip * channels, frames: n - skip, kind: .audio) }
        lastWasDTX = decoder.isDTX(packet.payload)
        concealRun = 0
    }

    /// Decodes the `frames` before `packet` from its in-band FEC (PLC for all but the last
    /// packet-duration); `frames` is a multiple of 2.5 ms.
    private func recover(from packet: JitterPacketRing.Packet, frames: Int) {
        let n = decoder.decodeFEC(from: packet.payload, into: scratch, frames: frames)
        guard n > 0 else {
            concealPacket(frames: frames)
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

    /// Conceals one missing packet of `frames` samples: one PLC call when it is a whole number of
    /// 2.5 ms steps of at most 120 ms (every real Opus packet), else in 120 ms pieces with the
    /// last rounded up. Silence after DTX or past ``maxConcealment``.
    private func concealPacket(frames: Int) {
        var left = frames
        while left > 0 {
            let n = synthesize(wanted: left, frames: roundUp(min(left, LiveOpusDecoder.maxFrameSamples)))
            guard n > 0 else { return }
            left -= n
        }
    }

    /// An underrun: PLC up to timeline `limit` in 2.5 ms steps (so it may pass it by < 2.5 ms),
    /// or silence after a DTX packet or once ``maxConcealment`` samples have been concealed.
    func conceal(upTo limit: Int64) {
        let wanted = Int(limit - playout.end)
        guard wanted > 0 else { return }
        let frames = min(roundUp(wanted), LiveOpusDecoder.maxFrameSamples, roundUp(maxConcealment - concealRun))
        _ = synthesize(wanted: wanted, frames: frames)
    }

    /// One PLC call of `frames` (a multiple of 2.5 ms) appended as concealment; or `wanted`
    /// samples of silence after DTX, past ``maxConcealment`` or when libopus refuses. Returns the
    /// samples concealed (0: silence was played instead, and nothing more should be concealed).
    private func synthesize(wanted: Int, frames: Int) -> Int {
        let n = lastWasDTX || concealRun >= maxConcealment ? 0 : decoder.conceal(into: scratch, frames: frames)
        guard n > 0 else {
            playout.appendSilence(frames: wanted)
            return 0
        }
        playout.append(scratch, frames: n, kind: .concealed)
        statistics.concealedCounter.add(n, ordering: .relaxed)
        concealRun += n
        return n
    }

    private func roundUp(_ frames: Int) -> Int {
        let g = decoder.concealmentStep
        return max(g, (frames + g - 1) / g * g)
    }
}
