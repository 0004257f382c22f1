import COpus

/// The audio pages of an Ogg Opus stream, each placed on the stream's timeline.
///
/// Reads and validates the two header packets (RFC 7845 §5, https://www.rfc-editor.org/rfc/rfc7845),
/// then hands out one page at a time: its packets, the duration of each (from the TOC byte,
/// `opus_packet_get_nb_samples`), and where its first sample goes. Both ``OggOpusFileInfo`` (which
/// only counts) and ``OggOpusStreamDecoder`` (which decodes) walk the file through this type, so the
/// length the preflight reports is exactly the length the decoder renders.
///
/// Positions are *stream positions*: samples at 48 kHz per channel from the first decoded sample
/// (pre-skip included), i.e. granule position minus the stream's starting granule (RFC 7845 §4,
/// https://www.rfc-editor.org/rfc/rfc7845#section-4; nonzero for streams cut from a live source).
/// Playable sample `s` of the file is stream position `s + preSkip`.
///
/// Placing a page (granule `G` of a page is the end of the last packet completing on it):
/// - normally a page follows the previous one without a gap;
/// - when `G` says the page's packets start later, at `G - (their summed durations)`, they are put
///   there and the gap before them is for the decoder to conceal. That is what a hole looks like
///   (pages lost to a CRC failure, or missing by sequence number: libogg's `ogg_stream_packetout`
///   returns -1), and also a gap a muxer left on purpose. A forward jump is believed only if the
///   pages missing by sequence number, plus one, could have held it (255 packets of 120 ms each per
///   page); otherwise the page follows on, so a corrupt granule cannot stretch a file to years;
/// - a granule that points backwards is ignored: audio is never moved back over what was played;
/// - on the end-of-stream page a granule smaller than the page's end trims the end (RFC 7845 §4.4);
///   if a hole comes right before that page, the trim cannot be told from the hole and the page is
///   placed as if untrimmed (at most one packet early);
/// - a packet whose duration cannot be read (invalid TOC) counts as long as the last valid packet
///   (20 ms until one is seen); the decoder conceals it.
/// The first audio page sets the starting granule (RFC 7845 §4.5) unless a hole precedes it, in
/// which case the stream is taken to start at granule 0.
///
/// Thread: confined to one thread. No allocation after init (see ``OggPacketReader``).
package final class OggOpusDemuxer {
    /// Most samples (per channel, 48 kHz) one page can hold: 255 packets of 120 ms.
    package static let maxSamplesPerPage: Int64 = 255 * 5760
    /// Duration assumed for an unreadable packet before any valid one was seen (20 ms).
    package static let defaultPacketDuration = 960

    /// The identification header.
    package let head: OpusHead
    /// The comment header, or nil if it is malformed (the audio is still decoded).
    package let tags: OpusTags?
    /// The path or name used in errors.
    package let path: String

    private let reader: OggPacketReader
    private let durations: UnsafeMutableBufferPointer<Int32>
    // Confined to one thread, read every frame by the decoder: exclusivity is not checked at run
    // time (`@exclusivity(unchecked)`, see docs/notes/offline-path.md).
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var startGranule: Int64 = 0
    @exclusivity(unchecked) private var lastValidDuration = OggOpusDemuxer.defaultPacketDuration
    @exclusivity(unchecked) private var pendingHole = false
    @exclusivity(unchecked) private var pendingMissing: Int64 = 0
    @exclusivity(unchecked) private var unexplainedHoles = 0

    /// Stream position just after the last page handed out (the end of the timeline so far).
    @exclusivity(unchecked) package private(set) var position: Int64 = 0
    /// True once the end-of-stream page was handed out or the data ended.
    @exclusivity(unchecked) package private(set) var ended = false
    /// True if the selected stream's end-of-stream page was seen.
    @exclusivity(unchecked) package private(set) var sawEndOfStream = false
    /// Audio pages handed out.
    @exclusivity(unchecked) package private(set) var audioPages = 0
    /// Audio packets handed out.
    @exclusivity(unchecked) package private(set) var audioPackets = 0

    // The current page (valid after `nextPage()` returned true, until the next call):
    /// Stream position of the first sample of the page's first packet.
    @exclusivity(unchecked) package private(set) var pageStart: Int64 = 0
    /// Stream position after the last sample to keep from this page (less than the decoded end
    /// only on a trimmed end-of-stream page).
    @exclusivity(unchecked) package private(set) var pageEnd: Int64 = 0
    /// Samples missing between the previous page's end and `pageStart` (to conceal).
    @exclusivity(unchecked) package private(set) var gapBefore: Int64 = 0

    /// Reads and checks the headers. Throws ``IngestError`` for anything that is not a usable Ogg
    /// Opus stream (see ``IngestError/Reason``). Reads only the first pages.
    package init(source: any ByteSource, path: String) throws(IngestError) {
        self.path = path
        let reader = OggPacketReader(source: source)
        self.reader = reader
        (head, tags) = try Self.readHeaders(reader, path: path)
        durations = .allocate(capacity: OggPacketReader.maxPacketsPerPage + 1)
        durations.initialize(repeating: 0)
        if reader.isEndOfStream {
            ended = true
            sawEndOfStream = true
        }
    }

    deinit { durations.deallocate() }

    /// Places on the timeline: sync losses (CRC failures, junk) plus holes in this stream that no
    /// sync loss explains (pages cut out cleanly). Each damaged region counts once.
    package var damageCount: Int { reader.syncLosses + unexplainedHoles }

    /// Packet `i` of the current page.
    @inline(__always)
    package func packet(_ i: Int) -> UnsafeRawBufferPointer { reader.packet(i) }

    /// Packets of the current page.
    package var packetCount: Int { reader.packetCount }

    /// Duration of packet `i` of the current page, in samples per channel at 48 kHz.
    @inline(__always)
    package func duration(_ i: Int) -> Int { Int(durations[i]) }

    /// Advances to the next audio page with at least one packet and places it on the timeline.
    /// Returns false at the end of the stream (end-of-stream page done, or the data ended).
    package func nextPage() -> Bool {
        guard !ended else { return false }
        while true {
            guard reader.nextPage() else {
                ended = true
                return false
            }
            if reader.hole || reader.missingPages > 0 {
                if reader.syncLossesBeforePage == 0 { unexplainedHoles += 1 }
                pendingHole = true
                pendingMissing = min(pendingMissing + reader.missingPages, 1 << 32)
            }
            if reader.packetCount > 0 {
                place()
                audioPages += 1
                audioPackets += reader.packetCount
                if reader.isEndOfStream {
                    ended = true
                    sawEndOfStream = true
                }
                return true
            }
            if reader.isEndOfStream {
                ended = true
                sawEndOfStream = true
                return false
            }
        }
    }

    private func place() {
        var total: Int64 = 0
        for i in 0..<reader.packetCount {
            let p = reader.packet(i)
            var n: Int32 = -1
            if let base = p.baseAddress?.assumingMemoryBound(to: UInt8.self), p.count > 0 {
                n = opus_packet_get_nb_samples(base, Int32(clamping: p.count), 48_000)
            }
            if n > 0 {
                lastValidDuration = Int(n)
            } else {
                n = Int32(lastValidDuration)
            }
            durations[i] = n
            total += Int64(n)
        }
        let granule = reader.granulePosition
        if !started {
            started = true
            startGranule = !pendingHole && granule >= total ? granule - total : 0
        }
        var start = position
        let granuleEnd: Int64? = granule >= startGranule ? granule - startGranule : nil
        if let granuleEnd, granuleEnd - total > position {
            let jump = granuleEnd - total - position
            if jump <= (pendingMissing + 1) * Self.maxSamplesPerPage { start = granuleEnd - total }
        }
        let (sum, overflow) = start.addingReportingOverflow(total)
        var end = overflow ? Int64.max : sum
        if reader.isEndOfStream, let granuleEnd, granuleEnd < end { end = max(start, granuleEnd) }
        gapBefore = start - position
        pageStart = start
        pageEnd = end
        position = end
        pendingHole = false
        pendingMissing = 0
    }

    /// Selects the Opus stream, parses OpusHead and OpusTags.
    private static func readHeaders(
        _ reader: OggPacketReader, path: String
    ) throws(IngestError) -> (OpusHead, OpusTags?) {
        let lead = reader.leadingBytes()
        if reader.readFailed { throw unreadable(reader, path: path) }
        if lead.count == 0 {
            throw IngestError(.notOgg, path: path, message: "the file is empty; give an Ogg Opus file (.opus)")
        }
        guard lead.isCapturePattern else {
            throw IngestError(
                .notOgg, path: path,
                message: "not an Ogg file (no OggS capture pattern at the start); give an Ogg Opus file (.opus)")
        }
        switch reader.selectStream(where: OpusHead.hasMagic) {
        case .selected:
            break
        case .damaged:
            throw IngestError(
                .badHeader, path: path,
                message: "the first Ogg page is damaged (CRC mismatch), so the Opus headers cannot be read; "
                    + "re-copy or re-encode the file")
        case .notFound(let sawPage):
            if reader.readFailed { throw unreadable(reader, path: path) }
            if !sawPage {
                throw IngestError(
                    .truncated, path: path,
                    message: "ends inside its first Ogg page; the file is truncated, re-copy or re-record it")
            }
            throw IngestError(
                .notOpus, path: path,
                message: "an Ogg file but not Opus (first packet is not OpusHead); roomtap reads Ogg Opus (RFC 7845)")
        }
        guard reader.packetCount > 0 else {
            throw IngestError(
                .badHeader, path: path,
                message: "OpusHead does not fit on the first Ogg page as RFC 7845 requires; re-encode the file")
        }
        let head: OpusHead
        switch OpusHead.validate(reader.packet(0)) {
        case .success(let h):
            head = h
        case .failure(.notOpusHead):
            throw IngestError(
                .notOpus, path: path,
                message: "an Ogg file but not Opus (first packet is not OpusHead); roomtap reads Ogg Opus (RFC 7845)")
        case .failure(let problem):
            throw IngestError(.badHeader, path: path, message: problem.message)
        }
        guard head.isDecodableWithSingleStreamDecoder else {
            throw IngestError(
                .unsupported, path: path,
                message: "channel mapping family \(head.mappingFamily) with \(head.channelCount) channels "
                    + "(\(head.streamCount) streams) is not supported, roomtap reads mono or stereo Opus; "
                    + "down-mix it first, e.g. ffmpeg -i IN -ac 2 -c:a libopus OUT.opus")
        }
        if reader.isEndOfStream {
            throw IngestError(
                .badHeader, path: path,
                message: "the stream ends on its OpusHead page (no OpusTags); the file is damaged, re-encode it")
        }
        // RFC 7845 §3: OpusTags follows, possibly over several pages, and ends its page.
        while true {
            guard reader.nextPage() else {
                if reader.readFailed { throw unreadable(reader, path: path) }
                throw IngestError(
                    .truncated, path: path,
                    message: "ends inside the Opus headers (OpusTags incomplete); the file is truncated, "
                        + "re-copy or re-record it")
            }
            if reader.hole {
                throw IngestError(
                    .badHeader, path: path,
                    message: "the page holding the OpusTags header is missing or damaged; re-copy or re-encode the file"
                )
            }
            if reader.packetCount > 0 { break }
        }
        let tagsPacket = reader.packet(0)
        guard tagsPacket.count >= 8, zip(tagsPacket.prefix(8), OpusTags.magic).allSatisfy({ $0 == $1 }) else {
            throw IngestError(
                .badHeader, path: path,
                message: "the second packet is not OpusTags (RFC 7845 §5.2); the file is damaged or not plain Ogg Opus")
        }
        // Packets after OpusTags on the same page are invalid (audio starts on a fresh page): ignored.
        return (head, OpusTags.parse(tagsPacket))
    }

    private static func unreadable(_ reader: OggPacketReader, path: String) -> IngestError {
        IngestError(.unreadable, path: path, message: "cannot be read (I/O error); check the disk and the file")
    }
}
