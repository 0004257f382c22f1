import CFLAC
import Glibc
public import RoomTapFiles

/// Writes 16-bit PCM as a FLAC file through libFLAC's stream encoder
/// (https://xiph.org/flac/format.html), with the start time in a VORBIS_COMMENT block
/// (``AudioFileMetadata/vorbisComments(sampleRate:)``).
///
/// Crash safety: libFLAC writes every frame (4096 samples per channel at the default level,
/// 85 ms at 48 kHz) with write(2) as soon as its block is full; STREAMINFO at the start says
/// "total samples unknown" until ``finish()`` rewrites it (total samples, frame sizes, MD5) through
/// the seek callback. So a killed recorder leaves a file `flac -d` decodes up to the last whole
/// frame; ``FLACRepair`` fills in STREAMINFO afterwards.
///
/// Thread: a ``PCMFileEncoder``, one thread at a time.
package final class FLACFileEncoder: PCMFileEncoder {
    public let path: String
    public let channels: Int
    public let sampleRate: Int
    /// libFLAC's compression level, 0 (fastest) ... 8 (smallest).
    public let compressionLevel: Int

    private let encoder: UnsafeMutablePointer<FLAC__StreamEncoder>
    private let output: UnsafeMutablePointer<roomtap_flac_output>
    private var comments: UnsafeMutablePointer<FLAC__StreamMetadata>?
    private let scratch: UnsafeMutablePointer<Int32>
    private static let chunkFrames = 4_096
    private var failure: OutputFileError?
    private var finished = false
    private let syncOnFinish: Bool

    /// Creates the file and writes its metadata blocks. `channels` 1...8, `sampleRate` any FLAC
    /// allows. Throws ``OutputFileError`` (`.alreadyExists` unless `overwrite`, `.cannotOpen`,
    /// `.invalidArgument`, `.writeFailed`).
    public init(
        path: String, channels: Int, sampleRate: Int, metadata: AudioFileMetadata = .init(),
        compressionLevel: Int = 5, overwrite: Bool = false, syncOnFinish: Bool = true
    ) throws(OutputFileError) {
        guard (1...8).contains(channels) else {
            throw OutputFileError(
                path: path, message: "FLAC holds at most 8 channels, not \(channels); write a WAV instead",
                kind: .invalidArgument)
        }
        let fd = try OutputFile.create(path: path, overwrite: overwrite)
        guard let encoder = FLAC__stream_encoder_new() else {
            _ = Glibc.close(fd)
            if !overwrite { unlink(path) }
            throw OutputFileError(path: path, message: "libFLAC: out of memory", kind: .writeFailed)
        }
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        self.compressionLevel = max(0, min(8, compressionLevel))
        self.syncOnFinish = syncOnFinish
        self.encoder = encoder
        output = .allocate(capacity: 1)
        output.initialize(to: roomtap_flac_output(fd: fd, error: 0))
        scratch = .allocate(capacity: Self.chunkFrames * channels)
        _ = FLAC__stream_encoder_set_channels(encoder, UInt32(channels))
        _ = FLAC__stream_encoder_set_bits_per_sample(encoder, 16)
        _ = FLAC__stream_encoder_set_sample_rate(encoder, UInt32(sampleRate))
        _ = FLAC__stream_encoder_set_compression_level(encoder, UInt32(self.compressionLevel))
        if let block = FLAC__metadata_object_new(FLAC__METADATA_TYPE_VORBIS_COMMENT) {
            for (name, value) in metadata.vorbisComments(sampleRate: sampleRate) {
                _ = roomtap_flac_add_comment(block, name, value)
            }
            comments = block
            var blocks: [UnsafeMutablePointer<FLAC__StreamMetadata>?] = [block]
            _ = FLAC__stream_encoder_set_metadata(encoder, &blocks, 1)  // libFLAC copies the array
        }
        let status = roomtap_flac_init_fd(encoder, output)
        if status != FLAC__STREAM_ENCODER_INIT_STATUS_OK {
            let code = output.pointee.error
            _ = Glibc.close(fd)
            output.pointee.fd = -1
            if !overwrite { unlink(path) }
            throw code != 0
                ? OutputFileError.failed(code, path: path, doing: "writing the FLAC header")
                : OutputFileError(
                    path: path, message: "libFLAC cannot start an encoder (status \(status.rawValue))",
                    kind: .invalidArgument)
        }
    }

    deinit {
        if !finished && failure == nil { try? finish() }
        FLAC__stream_encoder_delete(encoder)
        if output.pointee.fd >= 0 { _ = Glibc.close(output.pointee.fd) }
        if let comments { FLAC__metadata_object_delete(comments) }
        output.deallocate()
        scratch.deallocate()
    }

    public func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(OutputFileError) {
        if let failure { throw failure }
        var done = 0
        while done < frames {
            let n = min(Self.chunkFrames, frames - done)
            let base = samples + done * channels
            for i in 0..<(n * channels) { scratch[i] = Int32(base[i]) }
            if FLAC__stream_encoder_process_interleaved(encoder, scratch, UInt32(n)) == 0 {
                throw fail(doing: "encoding")
            }
            done += n
        }
    }

    /// Nothing to do: libFLAC writes each frame as soon as it is whole.
    public func checkpoint() throws(OutputFileError) {
        if let failure { throw failure }
    }

    public func finish() throws(OutputFileError) {
        if let failure { throw failure }
        guard !finished else { return }
        finished = true
        let ok = FLAC__stream_encoder_finish(encoder) != 0
        let fd = output.pointee.fd
        defer {
            _ = Glibc.close(fd)
            output.pointee.fd = -1
        }
        if !ok { throw fail(doing: "finishing") }
        let synced = syncOnFinish ? OutputFile.sync(fd: fd) : 0
        if synced != 0 {
            let error = OutputFileError.failed(synced, path: path, doing: "fsync")
            failure = error
            throw error
        }
    }

    private func fail(doing what: String) -> OutputFileError {
        let code = output.pointee.error
        let error: OutputFileError
        if code != 0 {
            error = OutputFileError.failed(code, path: path, doing: what)
        } else {
            let state = FLAC__stream_encoder_get_resolved_state_string(encoder).map { String(cString: $0) } ?? "?"
            error = OutputFileError(path: path, message: "libFLAC failed \(what): \(state)", kind: .writeFailed)
        }
        failure = error
        return error
    }
}
