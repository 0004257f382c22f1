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
/// streamed while rendering.
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

    private init(info: OggOpusFileInfo, decoder: OggOpusStreamDecoder, offset: Int64) {
        self.info = info
        self.decoder = decoder
        self.channels = decoder.channels
        self.offset = offset
    }

    /// The file's playable samples: what rendering it decodes (the room balances by it).
    public var renderWork: Int64 { info.durationSamples }

    /// Room sample just after the file's last playable sample (`offset + info.durationSamples`).
    public var endRoomSample: Int64 { offset + info.durationSamples }

    /// True once every playable sample has been rendered (and the offset reached).
    public var isFinished: Bool { renderedEnd.load(ordering: .acquiring) >= endRoomSample }

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
        let hi = min(fileStart + Int64(frames), info.durationSamples)
        renderedEnd.store(roomSample + Int64(frames), ordering: .releasing)
        guard hi > lo else {
            out.update(repeating: 0, count: frames * channels)
            return .silence
        }
        if lo > nextFileSample { _ = decoder.read(into: nil, frames: Int(lo - nextFileSample)) }
        let head = Int(lo - fileStart)
        let wanted = Int(hi - lo)
        out.update(repeating: 0, count: head * channels)
        let (got, concealed) = decoder.read(into: out + head * channels, frames: wanted)
        let tail = head + got
        (out + tail * channels).update(repeating: 0, count: (frames - tail) * channels)
        nextFileSample = hi
        concealedCounter.store(decoder.concealedSamples, ordering: .relaxed)
        decodeErrorCounter.store(decoder.decodeErrors, ordering: .relaxed)
        holeCounter.store(decoder.holes, ordering: .relaxed)
        if got == 0 { return .silence }
        return concealed ? .concealed : .normal
    }
}
