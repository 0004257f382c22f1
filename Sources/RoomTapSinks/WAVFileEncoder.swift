import Glibc
public import RoomTapFiles

/// Writes 16-bit PCM WAV at any rate and channel count: the same layout as ``WAVWriter``
/// (RIFF, RF64 past 4 GiB, BWF `bext`; see ``WAVHeader``) plus, when channel names are given, a
/// `LIST`/`INFO` chunk: `INAM` the title, `ICMT` "channels: alice, bob, carol" (the names in
/// channel order), `ISFT` roomtap. Used for other rates than 48 kHz and for multichannel files;
/// ``WAVWriter`` stays the 48 kHz per-track writer.
///
/// Crash safety as ``WAVWriter``: samples go out through a 64 KiB buffer, and ``checkpoint()``
/// (at least once a second) writes it and rewrites the header's sizes after the data they state.
///
/// Thread: a ``PCMFileEncoder``, one thread at a time.
package final class WAVFileEncoder: PCMFileEncoder {
    public let path: String
    public let channels: Int
    public let sampleRate: Int

    private var fd: Int32
    private var header: WAVHeader
    private let buffer: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var dataBytes: Int64 = 0
    private var failure: OutputFileError?
    private var finished = false
    private let syncOnFinish: Bool
    private static let bufferSize = 64 * 1024

    /// Creates the file with the header of an empty file. Throws ``OutputFileError`` as ``WAVWriter``
    /// (`.invalidArgument` for 0 or more than 65535 channels).
    public init(
        path: String, channels: Int, sampleRate: Int, metadata: AudioFileMetadata = .init(), overwrite: Bool = false,
        syncOnFinish: Bool = true
    ) throws(OutputFileError) {
        guard (1...65_535).contains(channels) else {
            throw OutputFileError(path: path, message: "cannot write \(channels) channels", kind: .invalidArgument)
        }
        let bext = BroadcastExtension(
            description: metadata.title, channels: channels, roomStartTime: metadata.roomStartTime,
            timelineOrigin: metadata.timelineOrigin * Int64(sampleRate) / 48_000, sampleRate: sampleRate)
        header = WAVHeader(
            channels: channels, sampleRate: sampleRate, bext: bext, extraChunks: Self.infoChunk(metadata))
        fd = try OutputFile.create(path: path, overwrite: overwrite)
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        self.syncOnFinish = syncOnFinish
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
        let code = header.bytes.withUnsafeBytes { OutputFile.writeAll(fd: fd, $0.baseAddress!, count: $0.count) }
        if code != 0 {
            _ = Glibc.close(fd)
            if !overwrite { unlink(path) }
            buffer.deallocate()
            throw OutputFileError.failed(code, path: path, doing: "writing the header")
        }
    }

    deinit {
        if !finished && failure == nil { try? finish() }
        if fd >= 0 { _ = Glibc.close(fd) }
        buffer.deallocate()
    }

    public func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(OutputFileError) {
        if let failure { throw failure }
        var bytes = UnsafeRawPointer(samples)
        var remaining = frames * channels * 2
        while remaining > 0 {
            if buffered == Self.bufferSize { try flush() }
            let n = min(remaining, Self.bufferSize - buffered)
            #if _endian(little)
                (buffer.baseAddress! + buffered).copyMemory(from: bytes, byteCount: n)
            #else
                #error("WAVFileEncoder writes little-endian hosts only")
            #endif
            buffered += n
            bytes += n
            remaining -= n
        }
    }

    /// Writes the buffer and rewrites the header's sizes.
    public func checkpoint() throws(OutputFileError) {
        if let failure { throw failure }
        try flush()
        let total = UInt64(header.dataOffset) + UInt64(dataBytes)
        header.setSizes(dataBytes: UInt64(dataBytes), rf64: total > UInt64(UInt32.max))
        let code = header.bytes.withUnsafeBytes { PosixFile.pwriteAll(fd: fd, $0, at: 0) }
        if code != 0 { throw fail(code, doing: "rewriting the header") }
    }

    public func finish() throws(OutputFileError) {
        if let failure { throw failure }
        guard !finished else { return }
        try checkpoint()
        finished = true
        let synced = syncOnFinish ? OutputFile.sync(fd: fd) : 0
        if synced != 0 { throw fail(synced, doing: "fsync") }
        let closed = OutputFile.close(fd: fd)
        fd = -1
        if closed != 0 { throw fail(closed, doing: "closing") }
    }

    private func flush() throws(OutputFileError) {
        let code = OutputFile.writeAll(fd: fd, buffer.baseAddress!, count: buffered)
        if code != 0 { throw fail(code, doing: "writing") }
        dataBytes += Int64(buffered)
        buffered = 0
    }

    private func fail(_ code: Int32, doing what: String) -> OutputFileError {
        let error = OutputFileError.failed(code, path: path, doing: what)
        failure = error
        return error
    }

    /// The `LIST`/`INFO` chunk naming the channels (empty without channel names).
    static func infoChunk(_ metadata: AudioFileMetadata) -> [UInt8] {
        guard !metadata.channelNames.isEmpty else { return [] }
        var body = Array("INFO".utf8)
        func item(_ id: String, _ text: String) {
            var value = Array(text.utf8) + [0]
            if value.count % 2 == 1 { value.append(0) }
            body += Array(id.utf8)
            body.appendLE32(UInt32(value.count))
            body += value
        }
        if !metadata.title.isEmpty { item("INAM", metadata.title) }
        item("ICMT", "channels: " + metadata.channelNames.joined(separator: ", "))
        item("ISFT", "roomtap")
        var chunk = Array("LIST".utf8)
        chunk.appendLE32(UInt32(body.count))
        return chunk + body
    }
}
