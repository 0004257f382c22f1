public import Foundation
import Glibc
public import RoomTapCore
import RoomTapFiles
import RoomTapSync
import Synchronization

/// Writes a track to a 16-bit PCM WAV file at 48 kHz, crash-safe: RIFF, switching to RF64
/// (EBU Tech 3306) past ``Options-swift.struct/rf64Threshold``, with a BWF `bext` chunk
/// (EBU Tech 3285) carrying the room's start time. The layout is drawn in ``WAVHeader``.
///
/// Crash safety: samples go out through a 64 KiB buffer with plain write(2) calls; the header's
/// size fields are rewritten (one pwrite(2) of the whole header) at least once per second of wall
/// time and once per second of audio, always after the data they describe was written, so the
/// header never claims bytes that are not in the file. A process killed with SIGKILL leaves a file
/// every WAV reader opens, missing at most the last second (``WAVRepair`` recovers all but the
/// unwritten buffer). ``finish()`` writes the exact sizes.
///
/// Timeline: file sample `n` is room sample ``Options-swift.struct/timelineOrigin`` + `n`. Silence is
/// written for room time no frame arrived for (frames a queue dropped, a track that joined late),
/// so every file of a room stays sample-aligned; frames before the origin or repeated are ignored.
///
/// Thread: a ``FrameConsumer``; every method runs on one thread at a time (the sink's own, under
/// ``WAVFileSink``), and may block on the disk. ``samplesWritten`` is readable from any thread.
/// A write failure closes the file with a valid header for the audio written so far; every later
/// call throws the same ``WAVError``.
public final class WAVWriter: FrameConsumer {
    /// How the file is created and written.
    public struct Options: Sendable {
        /// False: the file is created with O_CREAT|O_EXCL, and an existing file is an error that
        /// leaves it untouched. True: an existing regular file is truncated and replaced.
        public var overwrite: Bool = false
        /// When the room started; written to bext OriginationDate/Time (UTC) and TimeReference
        /// (samples since that midnight, plus ``timelineOrigin``). Nil: date and time are left empty
        /// and TimeReference is ``timelineOrigin``.
        public var roomStartTime: Date? = nil
        /// bext Description, e.g. "roomtap track alice" (cut to 256 bytes of UTF-8).
        public var description: String = ""
        /// Seconds of wall time, and seconds of audio, between header rewrites. Clamped to 0...1,
        /// the crash-safety promise; 0 rewrites after every frame (tests).
        public var headerRefreshInterval: Double = 1.0
        /// File size (header + data) past which the file becomes RF64, in bytes. At most
        /// 0xFFFFFFFF (larger values are clamped); small values exercise RF64 in tests.
        public var rf64Threshold: UInt64 = 0xFFFF_FFFF
        /// The room sample of the file's first sample. 0 (the default) makes every file of a room
        /// start at the room's start, a late track with leading silence.
        public var timelineOrigin: Int64 = 0
        /// fsync(2) in ``WAVWriter/finish()``, so a finished file survives a power cut.
        public var syncOnFinish: Bool = true
        /// Test hook: writes past this file size fail with ENOSPC, as on a full disk.
        package var simulatedDiskCapacity: Int64? = nil

        /// The defaults.
        public init() {}
    }

    /// Size of the write buffer in bytes: 32 KiB, a third of a second of mono audio per write
    /// (a 1000-track room then holds 32 MiB of write buffers, not 64).
    public static let bufferSize = 32 * 1024

    /// The file written.
    public let path: String
    /// Channels in the file (1 or 2). Frames of another channel count are converted.
    public let channels: Int
    /// The options it was created with.
    public let options: Options

    private enum State {
        case open
        case failed(WAVError)
        case finished
    }

    // Confined to the consumer thread, touched every frame: exclusivity is not checked at run time
    // (`@exclusivity(unchecked)`, see docs/notes/offline-path.md).
    @exclusivity(unchecked) private var state = State.open
    private var fd: Int32
    private var header: WAVHeader
    private let rf64Threshold: UInt64
    private let refreshSamples: Int64
    private let refreshDuration: Duration
    private let buffer: UnsafeMutableRawBufferPointer
    @exclusivity(unchecked) private var buffered = 0
    private let scratch: UnsafeMutablePointer<Int16>
    /// Data bytes in the file (written by write(2), or a hole the file was extended over).
    @exclusivity(unchecked) private var dataBytesWritten: Int64 = 0
    /// Data bytes the header on disk states.
    @exclusivity(unchecked) private var dataBytesInHeader: Int64 = 0
    @exclusivity(unchecked) private var nextRoomSample: Int64
    @exclusivity(unchecked) private var samplesSinceRefresh: Int64 = 0
    @exclusivity(unchecked) private var lastRefresh: MonotonicClock.Instant
    private let writtenCounter = Atomic<Int64>(0)
    /// End (exclusive room sample) of the last frame offered to the sink, set from the clock's thread.
    private let offeredEnd = Atomic<Int64>(.min)

    /// Creates the file and writes a valid header of an empty file at once.
    ///
    /// Throws ``WAVError``: `.alreadyExists` (and the file is left untouched) unless
    /// `options.overwrite`; `.cannotOpen` for a missing directory, a permission problem or a path
    /// that is not a regular file; `.invalidArgument` for a channel count other than 1 or 2;
    /// `.writeFailed` when even the header cannot be written (the new file is removed).
    public init(path: String, channels: Int, options: Options = .init()) throws(WAVError) {
        guard channels == 1 || channels == 2 else {
            throw WAVError(
                path: path, message: "cannot write \(channels) channels: a roomtap WAV is mono or stereo",
                kind: .invalidArgument)
        }
        let bext = BroadcastExtension(
            description: options.description, channels: channels, roomStartTime: options.roomStartTime,
            timelineOrigin: options.timelineOrigin, sampleRate: AudioFrame.sampleRate)
        let header = WAVHeader(channels: channels, sampleRate: AudioFrame.sampleRate, bext: bext)
        fd = try Self.create(path: path, header: header, options: options)
        self.path = path
        self.channels = channels
        self.options = options
        self.header = header
        rf64Threshold = min(options.rf64Threshold, UInt64(UInt32.max))
        let interval = options.headerRefreshInterval.isFinite ? min(max(options.headerRefreshInterval, 0), 1) : 1
        refreshSamples = Int64(interval * Double(AudioFrame.sampleRate))
        refreshDuration = .nanoseconds(Int64(interval * 1e9))
        nextRoomSample = options.timelineOrigin
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
        scratch = .allocate(capacity: AudioFrame.samplesPerChannel * AudioFrame.maxChannels)
        lastRefresh = .now
    }

    deinit {
        if case .open = state { try? finish() }
        buffer.deallocate()
        scratch.deallocate()
    }

    /// Samples per channel in the file so far (including the part still in the write buffer, and
    /// silence filled in for gaps). After a failure: what the file holds. Any thread.
    public var samplesWritten: Int64 { writtenCounter.load(ordering: .relaxed) }

    /// True once the file has become RF64. The writer's thread.
    public var isRF64: Bool { header.isRF64 }

    /// Offset of the first sample in the file, in bytes.
    public var dataOffset: Int { header.dataOffset }

    // MARK: - FrameConsumer

    /// Appends one frame (after silence for any room time skipped since the last frame), and
    /// rewrites the header when a refresh is due. Frames before the timeline position are ignored.
    public func consume(_ frame: AudioFrame) throws(WAVError) {
        try checkOpen()
        let n = Int64(AudioFrame.samplesPerChannel)
        guard frame.roomSample + n > nextRoomSample else { return }
        if frame.roomSample > nextRoomSample {
            try appendSilence(frames: frame.roomSample - nextRoomSample)
            nextRoomSample = frame.roomSample
        }
        let skip = Int(nextRoomSample - frame.roomSample)  // 0...479: the part already in the file
        // WAV is little endian: on a little-endian host the samples go into the buffer as they are.
        let source: UnsafePointer<Int16>
        if frame.channels == channels, let base = frame.samples.baseAddress {
            source = base
        } else {
            frame.copy(into: scratch, channels: channels)
            source = UnsafePointer(scratch)
        }
        let count = (AudioFrame.samplesPerChannel - skip) * channels
        if buffered + 2 * count > Self.bufferSize { try flush() }
        let out = buffer.baseAddress! + buffered
        let first = skip * channels
        #if _endian(little)
            UnsafeMutableRawPointer(out).copyMemory(from: source + first, byteCount: 2 * count)
        #else
            for i in 0..<count {
                out.storeBytes(of: source[first + i].littleEndian, toByteOffset: 2 * i, as: Int16.self)
            }
        #endif
        buffered += 2 * count
        nextRoomSample = frame.roomSample + n
        advance(by: n - Int64(skip))
        if samplesSinceRefresh >= refreshSamples || MonotonicClock.now - lastRefresh >= refreshDuration {
            try refreshHeader()
        }
    }

    /// Rewrites the header if the refresh interval of wall time has passed and there is audio the
    /// header does not state yet. Does nothing once finished; throws the failure once failed.
    public func drained() throws(WAVError) {
        switch state {
        case .finished: return
        case .failed(let error): throw error
        case .open: break
        }
        guard buffered > 0 || dataBytesWritten != dataBytesInHeader else { return }
        if MonotonicClock.now - lastRefresh >= refreshDuration { try refreshHeader() }
    }

    /// Flushes the buffer, writes the exact final sizes, fsyncs (see ``Options-swift.struct/syncOnFinish``)
    /// and closes the file. Idempotent once it succeeded; after a failure it throws that failure.
    public func finish() throws(WAVError) {
        switch state {
        case .finished: return
        case .failed(let error): throw error
        case .open: break
        }
        let end = offeredEnd.load(ordering: .acquiring)
        if end > nextRoomSample {  // the queue dropped the last frames: the file still ends where the room did
            try appendSilence(frames: end - nextRoomSample)
            nextRoomSample = end
        }
        try refreshHeader(force: true)
        if options.syncOnFinish {
            let synced = OutputFile.sync(fd: fd)
            if synced != 0 { throw fail(synced, doing: "fsync") }
        }
        let code = OutputFile.close(fd: fd)
        fd = -1
        state = .finished
        if code != 0 {
            let error = WAVError(
                path: path, message: "closing failed: \(PosixFile.describe(code)); the file may be incomplete",
                kind: .writeFailed, errno: code)
            state = .failed(error)
            throw error
        }
    }

    /// Writes out the buffer and rewrites the header's sizes now (switching to RF64 if the file
    /// passed the threshold). The writer's thread; a no-op when the header is already current.
    public func refreshHeader() throws(WAVError) {
        try checkOpen()
        try refreshHeader(force: false)
    }

    /// Records that a frame ending at room sample `end` (exclusive) was offered to the sink in front
    /// of this writer, so that ``finish()`` pads silence up to it if the queue dropped the last
    /// frames. Any thread; does not allocate or block.
    public func noteOffered(end: Int64) { offeredEnd.store(end, ordering: .releasing) }

    // MARK: - Internals

    private func checkOpen() throws(WAVError) {
        switch state {
        case .open: return
        case .failed(let error): throw error
        case .finished:
            throw WAVError(
                path: path, message: "the file is already finished; nothing more can be written",
                kind: .invalidArgument)
        }
    }

    private func advance(by samples: Int64) {
        samplesSinceRefresh += samples
        writtenCounter.add(samples, ordering: .relaxed)
    }

    private func refreshHeader(force: Bool) throws(WAVError) {
        try flush()
        let total = UInt64(header.dataOffset) + UInt64(dataBytesWritten)
        let becomesRF64 = !header.isRF64 && total > rf64Threshold
        if force || becomesRF64 || dataBytesWritten != dataBytesInHeader {
            header.setSizes(dataBytes: UInt64(dataBytesWritten), rf64: becomesRF64)
            let code = header.bytes.withUnsafeBytes { PosixFile.pwriteAll(fd: fd, $0, at: 0) }
            if code != 0 { throw fail(code, doing: "rewriting the header") }
            dataBytesInHeader = dataBytesWritten
        }
        samplesSinceRefresh = 0
        lastRefresh = .now
    }

    /// write(2) of the buffer, all of it.
    private func flush() throws(WAVError) {
        var done = 0
        while done < buffered {
            let n = systemWrite(buffer.baseAddress! + done, count: buffered - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw fail(errno, doing: "writing")
            }
            done += n
            dataBytesWritten += Int64(n)
        }
        buffered = 0
    }

    private func appendSilence(frames: Int64) throws(WAVError) {
        let bytes = frames * Int64(header.blockAlign)
        if bytes > Int64(Self.bufferSize - buffered) { try flush() }
        if bytes <= Int64(Self.bufferSize - buffered) {
            (buffer.baseAddress! + buffered).initializeMemory(as: UInt8.self, repeating: 0, count: Int(bytes))
            buffered += Int(bytes)
        } else {
            // Longer than the buffer: extend the file over a hole, which reads back as zeros.
            let end = Int64(header.dataOffset) + dataBytesWritten + bytes
            if ftruncate(fd, off_t(end)) != 0 { throw fail(errno, doing: "extending the file over silence") }
            if lseek(fd, off_t(end), SEEK_SET) < 0 { throw fail(errno, doing: "seeking") }
            dataBytesWritten += bytes
        }
        advance(by: frames)
    }

    /// write(2), honouring ``Options-swift.struct/simulatedDiskCapacity``.
    private func systemWrite(_ bytes: UnsafeRawPointer, count: Int) -> Int {
        var count = count
        if let capacity = options.simulatedDiskCapacity {
            let room = capacity - (Int64(header.dataOffset) + dataBytesWritten)
            if room <= 0 {
                errno = ENOSPC
                return -1
            }
            count = Int(min(Int64(count), room))
        }
        return Glibc.write(fd, bytes, count)
    }

    /// Enters the failed state: cuts a partial sample frame, states the sizes of what the file
    /// holds, closes it. Returns the error to throw.
    private func fail(_ code: Int32, doing what: String) -> WAVError {
        let block = Int64(header.blockAlign)
        let complete = dataBytesWritten / block * block
        if fd >= 0 {
            _ = ftruncate(fd, off_t(Int64(header.dataOffset) + complete))
            let total = UInt64(header.dataOffset) + UInt64(complete)
            header.setSizes(dataBytes: UInt64(complete), rf64: !header.isRF64 && total > rf64Threshold)
            _ = header.bytes.withUnsafeBytes { PosixFile.pwriteAll(fd: fd, $0, at: 0) }
            _ = Glibc.close(fd)
            fd = -1
        }
        dataBytesWritten = complete
        dataBytesInHeader = complete
        writtenCounter.store(complete / block, ordering: .relaxed)
        let seconds = Double(complete / block) / Double(AudioFrame.sampleRate)
        let hint = code == ENOSPC || code == EDQUOT ? "free disk space, then record again" : "check the disk"
        let error = WAVError(
            path: path,
            message: "\(what) failed after \(String(format: "%.2f", seconds)) s of audio: "
                + "\(PosixFile.describe(code)); the file keeps the audio written until then; \(hint)",
            kind: .writeFailed, errno: code)
        state = .failed(error)
        return error
    }

    /// Opens the file (O_CREAT|O_EXCL, or O_TRUNC with `overwrite`; never through a symbolic link)
    /// and writes `header`; returns the descriptor, positioned at the first sample.
    private static func create(path: String, header: WAVHeader, options: Options) throws(WAVError) -> Int32 {
        let fd: Int32
        do { fd = try OutputFile.create(path: path, overwrite: options.overwrite) } catch { throw WAVError(error) }
        var code: Int32 = 0
        if let capacity = options.simulatedDiskCapacity, capacity < Int64(header.bytes.count) {
            code = ENOSPC
        } else {
            code = header.bytes.withUnsafeBytes { OutputFile.writeAll(fd: fd, $0.baseAddress!, count: $0.count) }
        }
        if code != 0 {
            _ = Glibc.close(fd)
            if !options.overwrite { _ = unlink(path) }
            throw WAVError(
                path: path, message: "cannot write the header: \(PosixFile.describe(code)); check the disk",
                kind: .writeFailed, errno: code)
        }
        return fd
    }
}
