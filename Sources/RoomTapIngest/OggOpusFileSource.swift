public import RoomTapCore
import Synchronization

/// One speaker's Ogg Opus file as a 10 ms ``FrameSource`` on the room timeline.
///
/// The file's playable sample 0 (after pre-skip) plays at room sample ``offset``; alignment is
/// exact to the sample (offsets need not be multiples of 480). Before the offset and after the last
/// playable sample the source renders zeros with status `.silence`; a frame holding some audio is
/// `.normal` (even if part of it is silence), and a frame holding any concealed sample (PLC over a
/// hole, an undecodable packet, the silence filling a long hole) is `.concealed`. Damage never stops the source: see
/// ``OggOpusStreamDecoder`` for how holes keep their time.
///
/// ``isFinished`` becomes true in the tick that rendered the last playable sample (or, for an empty
/// file, the tick that reached the offset), so a room of files ends on exactly the right frame:
/// `ceil((offset + info.durationSamples) / 480)` frames.
///
/// The file is read twice: in full by the preflight at init (headers, length, damage), then
/// streamed while rendering. A stream that can be read only once (standard input, see
/// ``init(streamFrom:name:channels:offset:)``) is inspected for its headers only and decoded as it
/// arrives: its length is known when it ends, and the source is finished in the tick that rendered
/// its last sample, as for a file.
///
/// Thread: create anywhere; after it is handed to a room, `render` and `isFinished` run on the room
/// clock's thread only. `render` does not allocate, lock or log; it reads the file (one 16 KiB
/// chunk at a time, blocking in `read(2)`) when the decoder needs more bytes — fine for an offline
/// room on a virtual clock; for a live room pre-load or buffer the file elsewhere. The counters
/// (``concealedSamples``, ``decodeErrors``, ``holes``) are atomics, readable from any thread, and
/// may lag one frame.
public final class OggOpusFileSource: SizedSource, @unchecked Sendable {
    /// The preflight look at the file (headers, length, damage), taken at init.
    public let info: OggOpusFileInfo
    /// Room sample (48 kHz) at which the file's playable sample 0 plays.
    public let offset: Int64
    /// Channels rendered (1 or 2), whatever the file has (libopus down- or up-mixes).
    public let channels: Int

    // Room clock's thread only.
    private let decoder: OggOpusStreamDecoder
    @exclusivity(unchecked) private var nextFileSample: Int64 = 0
    private let isStream: Bool
    /// A stream's playable length, once it ended (room clock's thread).
    @exclusivity(unchecked) private var streamEnd: Int64?
    // A stream's length and truncation, published when it ended (-1: not yet), and its samples
    // rendered so far.
    private let publishedStreamEnd = Atomic<Int64>(-1)
    private let streamedSamples = Atomic<Int64>(0)
    private let publishedTruncated = Atomic<Bool>(false)
    // Published for any thread.
    private let renderedEnd = Atomic<Int64>(0)
    private let concealedCounter = Atomic<Int>(0)
    private let decodeErrorCounter = Atomic<Int>(0)
    private let holeCounter = Atomic<Int>(0)

    /// Opens `path`, inspects it (``OggOpusFileInfo/inspect(path:)``) and prepares the decoder.
    ///
    /// - Parameters:
    ///   - channels: 1 (default; a stereo file is down-mixed by libopus) or 2.
    ///   - offset: room sample (48 kHz, >= 0) at which the file's first playable sample plays.
    /// - Throws: ``IngestError`` as `inspect` does; nothing is rendered then.
    public convenience init(path: String, channels: Int = 1, offset: Int64 = 0) throws(IngestError) {
        precondition(channels == 1 || channels == 2, "a file source renders 1 or 2 channels")
        precondition(offset >= 0, "offset must be >= 0")
        let info = try OggOpusFileInfo.inspect(path: path)
        let decoder = try OggOpusStreamDecoder(source: FileByteSource(path: path), path: path, channels: channels)
        self.init(info: info, decoder: decoder, offset: offset)
    }

    /// The same source over bytes in memory (tests, the fuzzer): `bytes` must stay valid and
    /// unchanged for the life of the source; `name` is used in errors.
    package convenience init(
        bytes: UnsafeRawBufferPointer, name: String, channels: Int = 1, offset: Int64 = 0
    ) throws(IngestError) {
        precondition(channels == 1 || channels == 2, "a file source renders 1 or 2 channels")
        precondition(offset >= 0, "offset must be >= 0")
        let info = try OggOpusFileInfo.inspect(bytes: bytes, name: name)
        let decoder = try OggOpusStreamDecoder(source: MemoryByteSource(bytes), path: name, channels: channels)
        self.init(info: info, decoder: decoder, offset: offset)
    }

    /// An Ogg Opus stream read once, as it arrives, from `descriptor` (standard input: 0), which
    /// stays open. Only the headers are read here (they must arrive; this blocks until they do);
    /// the audio is read while rendering, blocking in `read(2)` until it arrives — fine on a
    /// virtual clock; on a real-time clock the stream must keep up with real time. `name` is used
    /// in errors and as ``OggOpusFileInfo/path``.
    ///
    /// - Throws: ``IngestError`` for headers that are not Ogg Opus (as ``OggOpusFileInfo/inspect(path:)``).
    public convenience init(streamFrom descriptor: CInt, name: String, channels: Int = 1, offset: Int64 = 0)
        throws(IngestError)
    {
        precondition(channels == 1 || channels == 2, "a file source renders 1 or 2 channels")
        precondition(offset >= 0, "offset must be >= 0")
        let bytes = ReplayingByteSource(FileByteSource(descriptor: descriptor))
        let info = try OggOpusFileInfo.inspectHeaders(source: bytes, path: name)
        bytes.rewind()
        let decoder = try OggOpusStreamDecoder(source: bytes, path: name, channels: channels)
        self.init(info: info, decoder: decoder, offset: offset)
    }

    private init(info: OggOpusFileInfo, decoder: OggOpusStreamDecoder, offset: Int64) {
        self.info = info
        self.decoder = decoder
        self.channels = decoder.channels
        self.offset = offset
        isStream = info.isStream
    }

    /// Playable samples at 48 kHz per channel: the file's (`info.durationSamples`), or for a
    /// stream, those it had when it ended (until then, those rendered so far). Any thread.
    public var durationSamples: Int64 {
        guard isStream else { return info.durationSamples }
        let end = publishedStreamEnd.load(ordering: .acquiring)
        return end >= 0 ? end : streamedSamples.load(ordering: .relaxed)
    }

    /// The file's playable samples: what rendering it decodes (the room balances by it); nil for a
    /// stream, whose length is known only when it ends.
    public var renderWork: Int64? { isStream ? nil : info.durationSamples }

    /// The file ends mid-page or without an end-of-stream page (a stream: known once it ended).
    /// Any thread.
    public var isTruncated: Bool { isStream ? publishedTruncated.load(ordering: .acquiring) : info.isTruncated }

    /// Room sample just after the file's last playable sample (`offset + durationSamples`).
    public var endRoomSample: Int64 { offset + durationSamples }

    /// True once every playable sample has been rendered (and the offset reached); for a stream,
    /// once it ended too.
    public var isFinished: Bool {
        if isStream && publishedStreamEnd.load(ordering: .acquiring) < 0 { return false }
        return renderedEnd.load(ordering: .acquiring) >= endRoomSample
    }

    /// Samples (per channel) that stand in for lost or undecodable audio (Opus PLC; zeros past
    /// 200 ms of one hole).
    public var concealedSamples: Int { concealedCounter.load(ordering: .relaxed) }
    /// Packets libopus could not decode (each concealed for its duration).
    public var decodeErrors: Int { decodeErrorCounter.load(ordering: .relaxed) }
    /// Damaged places met so far: CRC-rejected pages and holes in the page sequence.
    public var holes: Int { holeCounter.load(ordering: .relaxed) }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frames = AudioFrame.samplesPerChannel
        let out = samples.baseAddress!
        assert(samples.count >= frames * channels, "a frame holds 480 samples per channel")
        let fileStart = roomSample - offset
        let lo = max(fileStart, nextFileSample)
        let hi = min(fileStart + Int64(frames), isStream ? streamEnd ?? .max : info.durationSamples)
        guard hi > lo else {
            renderedEnd.store(roomSample + Int64(frames), ordering: .releasing)
            out.update(repeating: 0, count: frames * channels)
            return .silence
        }
        if lo > nextFileSample {
            let skipped = decoder.read(into: nil, frames: Int(lo - nextFileSample)).frames
            if isStream && skipped < Int(lo - nextFileSample) { endStream(at: nextFileSample + Int64(skipped)) }
        }
        let head = Int(lo - fileStart)
        let wanted = Int(hi - lo)
        out.update(repeating: 0, count: head * channels)
        let (got, concealed) = decoder.read(into: out + head * channels, frames: wanted)
        let tail = head + got
        (out + tail * channels).update(repeating: 0, count: (frames - tail) * channels)
        nextFileSample = hi
        if isStream && streamEnd == nil {
            streamedSamples.store(lo + Int64(got), ordering: .relaxed)
            if got < wanted || !decoder.hasMoreSamples() { endStream(at: lo + Int64(got)) }
        }
        renderedEnd.store(roomSample + Int64(frames), ordering: .releasing)
        concealedCounter.store(decoder.concealedSamples, ordering: .relaxed)
        decodeErrorCounter.store(decoder.decodeErrors, ordering: .relaxed)
        holeCounter.store(decoder.holes, ordering: .relaxed)
        if got == 0 { return .silence }
        return concealed ? .concealed : .normal
    }

    /// A stream ended: `length` playable samples. Room clock's thread.
    private func endStream(at length: Int64) {
        guard streamEnd == nil else { return }
        streamEnd = length
        nextFileSample = min(nextFileSample, length)
        publishedTruncated.store(!decoder.demuxer.sawEndOfStream, ordering: .relaxed)
        publishedStreamEnd.store(length, ordering: .releasing)
    }
}
