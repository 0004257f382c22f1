/// A preflight look at an Ogg Opus file, taken before any output is created: headers, playable
/// length and damage.
///
/// ``inspect(path:)`` reads the whole file once through libogg (16 KiB at a time, so an hour-long
/// file costs a few megabytes of reading and no more memory) without decoding audio: it walks the
/// pages exactly as the decoder will (see ``OggOpusDemuxer``), so `durationSamples` is the number
/// of samples ``OggOpusFileSource`` renders.
///
/// Thread: a value; `inspect` may be called from any thread (it does blocking file I/O).
public struct OggOpusFileInfo: Sendable {
    /// The path as given.
    public let path: String
    /// The identification header (RFC 7845 §5.1).
    public let head: OpusHead
    /// The comment header (RFC 7845 §5.2), or nil if it is malformed.
    public let tags: OpusTags?
    /// Playable samples at 48 kHz per channel: after pre-skip and end trim. For a clean file that
    /// starts at granule 0 this is the final page's granule position minus the pre-skip
    /// (RFC 7845 §4). Holes in the middle keep their length (they are concealed).
    public let durationSamples: Int64
    /// Damaged places: pages rejected by their CRC (or junk skipped by the Ogg sync layer) and
    /// holes in the page sequence of the Opus stream. Concealed when decoding; each damaged region
    /// counts once.
    public let corruptPages: Int
    /// The file ends mid-page or without an end-of-stream page: everything complete is decoded,
    /// the rest is missing (the caller decides whether that is acceptable).
    public let isTruncated: Bool
    /// Audio pages of the Opus stream that were read.
    public let audioPages: Int
    /// Audio packets of the Opus stream that were read.
    public let audioPackets: Int
    /// True for a stream read as it arrives (standard input): only its headers were read, and
    /// `durationSamples`, `corruptPages`, `isTruncated` and the counts are 0 or false; the source
    /// knows them once the stream ended (``OggOpusFileSource/durationSamples``).
    public var isStream = false

    /// The playable length in seconds.
    public var durationSeconds: Double { Double(durationSamples) / 48_000 }

    /// Reads the headers and walks every page of `path`.
    ///
    /// Throws ``IngestError``: `.fileNotFound`, `.unreadable` (a directory, no permission, an I/O
    /// error), `.notOgg`, `.notOpus`, `.badHeader`, `.unsupported` (more than two channels), or
    /// `.truncated` when the file stops inside or right after the headers, before any audio page.
    /// Idempotent: the file is only read.
    public static func inspect(path: String) throws(IngestError) -> OggOpusFileInfo {
        let source = try FileByteSource(path: path)
        let info = try inspect(source: source, path: path)
        if source.lastError != 0 {
            throw IngestError(
                .unreadable, path: path,
                message: "cannot be read (\(FileByteSource.describe(source.lastError))); check the disk and the file")
        }
        return info
    }

    /// ``inspect(path:)`` on bytes in memory (tests, the fuzzer); `name` is used in errors.
    package static func inspect(bytes: UnsafeRawBufferPointer, name: String) throws(IngestError) -> OggOpusFileInfo {
        try inspect(source: MemoryByteSource(bytes), path: name)
    }

    /// Reads only the headers (OpusHead, OpusTags) of a stream that can be read once: what is
    /// known of it before its audio arrives (``isStream``).
    static func inspectHeaders(source: any ByteSource, path: String) throws(IngestError) -> OggOpusFileInfo {
        let demuxer = try OggOpusDemuxer(source: source, path: path)
        var info = OggOpusFileInfo(
            path: path, head: demuxer.head, tags: demuxer.tags, durationSamples: 0, corruptPages: 0,
            isTruncated: false, audioPages: 0, audioPackets: 0)
        info.isStream = true
        return info
    }

    static func inspect(source: any ByteSource, path: String) throws(IngestError) -> OggOpusFileInfo {
        let demuxer = try OggOpusDemuxer(source: source, path: path)
        while demuxer.nextPage() {}
        if demuxer.audioPages == 0 && !demuxer.sawEndOfStream {
            throw IngestError(
                .truncated, path: path,
                message: "ends right after the Opus headers (no audio pages); the file is truncated, "
                    + "re-copy or re-record it")
        }
        return OggOpusFileInfo(
            path: path, head: demuxer.head, tags: demuxer.tags,
            durationSamples: max(0, demuxer.position - Int64(demuxer.head.preSkip)),
            corruptPages: demuxer.damageCount, isTruncated: !demuxer.sawEndOfStream,
            audioPages: demuxer.audioPages, audioPackets: demuxer.audioPackets)
    }
}
