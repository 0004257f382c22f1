/// Decodes an Ogg Opus stream into contiguous PCM: the file's playable samples in order, from
/// playable sample 0, with every hole already filled.
///
/// Built on ``OggOpusDemuxer`` (timeline) and ``OpusPacketDecoder`` (libopus). Pre-skip is dropped
/// and the end trim applied (RFC 7845 §4, https://www.rfc-editor.org/rfc/rfc7845#section-4). Damage
/// is concealed so that later audio keeps its place on the timeline:
/// - a gap before a page (pages lost to CRC failures or missing) and a packet libopus cannot decode
///   are filled with Opus packet-loss concealment in steps of at most 20 ms, for up to
///   ``maxConcealment`` (200 ms; longer PLC would only stretch a fading guess) and with zeros after
///   that, which also keeps a long hole cheap;
/// - every sample so filled counts in ``concealedSamples`` and is flagged as concealed.
/// In-band FEC (LBRR) of the next packet is not used: offline files rarely carry it.
///
/// Buffering: one scratch buffer of 120 ms (the longest Opus packet, 5760 samples per channel) is
/// allocated at init and doubles as the FIFO: a packet (or PLC step) is decoded into it and read out
/// across as many 10 ms frames as it spans; the next one is decoded only once it is drained.
///
/// Thread: confined to one thread. `read` does not allocate, but may read one chunk (16 KiB) from
/// the byte source when the demuxer needs more data — acceptable for offline files, and the only
/// blocking call on this path.
package final class OggOpusStreamDecoder {
    /// Longest stretch of one gap concealed with PLC; the rest of the gap is zeros (200 ms).
    package static let maxConcealment: Int64 = 9_600
    /// Largest PLC step (20 ms).
    package static let concealmentStep = 960

    /// Where the pages come from.
    package let demuxer: OggOpusDemuxer
    /// Channels of the output (1 or 2).
    package let channels: Int

    private let opus: OpusPacketDecoder
    private let preSkip: Int64
    private let scratch: UnsafeMutablePointer<Int16>
    private let scratchFrames = OpusPacketDecoder.maxFrameSamples
    // The window of `scratch` not yet read, in frames, and whether it is concealment.
    // Confined to one thread, touched every frame: exclusivity is not checked at run time
    // (`@exclusivity(unchecked)`, see docs/notes/offline-path.md).
    @exclusivity(unchecked) private var windowStart = 0
    @exclusivity(unchecked) private var windowEnd = 0
    @exclusivity(unchecked) private var windowConcealed = false
    // Production state.
    @exclusivity(unchecked) private var cursor: Int64 = 0  // stream position of the next sample produced
    // Stream position after which the current page's samples are dropped.
    @exclusivity(unchecked) private var keepEnd: Int64 = 0
    @exclusivity(unchecked) private var packetIndex = 0
    @exclusivity(unchecked) private var pageLoaded = false
    @exclusivity(unchecked) private var gapRemaining: Int64 = 0
    @exclusivity(unchecked) private var gapConcealed: Int64 = 0
    @exclusivity(unchecked) private var finished = false

    /// Playable samples (per channel) handed out by `read` so far.
    @exclusivity(unchecked) package private(set) var samplesRead: Int64 = 0
    /// Samples (per channel) that stand in for lost or undecodable audio: PLC, or zeros in a long
    /// gap. Only samples inside the playable range count.
    @exclusivity(unchecked) package private(set) var concealedSamples = 0
    /// Packets libopus failed to decode (concealed for their duration).
    @exclusivity(unchecked) package private(set) var decodeErrors = 0
    /// Damaged places met so far (see ``OggOpusDemuxer/damageCount``).
    package var holes: Int { demuxer.damageCount }
    /// True once the stream has no more samples.
    package var isAtEnd: Bool { finished && windowStart == windowEnd }

    /// Reads the headers from `source` and prepares a decoder with `channels` output channels.
    /// Throws what ``OggOpusDemuxer/init(source:path:)`` throws, or `.unsupported` if libopus
    /// refuses to create the decoder.
    package init(source: any ByteSource, path: String, channels: Int) throws(IngestError) {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        let demuxer = try OggOpusDemuxer(source: source, path: path)
        guard let opus = OpusPacketDecoder(channels: channels, gainQ8: demuxer.head.outputGainQ8) else {
            throw IngestError(.unsupported, path: path, message: "libopus cannot create a decoder for this stream")
        }
        self.demuxer = demuxer
        self.channels = channels
        self.opus = opus
        preSkip = Int64(demuxer.head.preSkip)
        scratch = .allocate(capacity: OpusPacketDecoder.maxFrameSamples * channels)
        scratch.initialize(repeating: 0, count: OpusPacketDecoder.maxFrameSamples * channels)
    }

    deinit { scratch.deallocate() }

    /// Copies the next `frames` playable samples per channel (interleaved) into `destination`, or
    /// discards them if `destination` is nil. Returns how many were produced (fewer only at the
    /// end of the stream) and whether any of them is concealment.
    package func read(into destination: UnsafeMutablePointer<Int16>?, frames: Int) -> (frames: Int, concealed: Bool) {
        var done = 0
        var concealed = false
        while done < frames {
            if windowStart == windowEnd {
                guard produce() else { break }
                continue
            }
            let n = min(windowEnd - windowStart, frames - done)
            if let destination {
                (destination + done * channels).update(from: scratch + windowStart * channels, count: n * channels)
            }
            if windowConcealed { concealed = true }
            windowStart += n
            done += n
        }
        samplesRead += Int64(done)
        return (done, concealed)
    }

    /// True if another playable sample follows. Decodes ahead (reading, and so maybe blocking,
    /// until the next packet arrives or the data ends) when nothing is decoded yet; `read` then
    /// hands that out first.
    package func hasMoreSamples() -> Bool { windowStart < windowEnd || produce() }

    /// Fills the window with the next non-empty chunk. False at the end of the stream.
    private func produce() -> Bool {
        while !finished {
            if gapRemaining > 0 {
                fillGap()
            } else if pageLoaded && packetIndex < demuxer.packetCount {
                decodeNextPacket()
            } else if demuxer.nextPage() {
                pageLoaded = true
                packetIndex = 0
                cursor = demuxer.pageStart - demuxer.gapBefore
                keepEnd = demuxer.pageEnd
                gapRemaining = demuxer.gapBefore
                gapConcealed = 0
            } else {
                finished = true
            }
            if windowStart < windowEnd { return true }
        }
        return false
    }

    private func fillGap() {
        var step = Int(min(gapRemaining, Int64(scratchFrames)))
        if gapConcealed < Self.maxConcealment {
            step = min(step, Self.concealmentStep)
            let g = OpusPacketDecoder.concealmentGranularity
            let plcFrames = (step + g - 1) / g * g
            if opus.conceal(into: scratch, frames: plcFrames) < 0 {
                scratch.update(repeating: 0, count: step * channels)
            }
        } else {
            scratch.update(repeating: 0, count: step * channels)
        }
        gapConcealed += Int64(step)
        gapRemaining -= Int64(step)
        emit(step, concealed: true)
    }

    private func decodeNextPacket() {
        let i = packetIndex
        packetIndex += 1
        let planned = demuxer.duration(i)
        let n = opus.decode(demuxer.packet(i), into: scratch, maxFrames: scratchFrames)
        if n < 0 {
            decodeErrors += 1
            gapRemaining = Int64(planned)
            gapConcealed = 0
            return
        }
        let kept = min(n, planned)
        emit(kept, concealed: false)
        if planned > kept {
            gapRemaining = Int64(planned - kept)
            gapConcealed = 0
        }
    }

    /// Makes the playable part of the `count` samples now in `scratch` (at stream position
    /// `cursor`) the window, and advances the cursor.
    private func emit(_ count: Int, concealed: Bool) {
        let start = cursor
        let end = cursor + Int64(count)
        cursor = end
        let lo = max(start, preSkip)
        let hi = min(end, keepEnd)
        guard hi > lo else {
            windowStart = 0
            windowEnd = 0
            return
        }
        windowStart = Int(lo - start)
        windowEnd = Int(hi - start)
        windowConcealed = concealed
        if concealed { concealedSamples += windowEnd - windowStart }
    }
}
