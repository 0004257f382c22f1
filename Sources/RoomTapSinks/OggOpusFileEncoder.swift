import COgg
import COpus
import Glibc
public import RoomTapFiles

/// Writes 16-bit PCM as an Ogg Opus file (RFC 7845) through libopus and libogg, like `opusenc`:
/// 20 ms packets, OpusHead with the encoder's lookahead as pre-skip (in 48 kHz samples), OpusTags
/// with ``AudioFileMetadata/vorbisComments(sampleRate:)``, a granule position on every page, and
/// the last page's granule cut to pre-skip + the input's length, so a decoder returns exactly
/// the samples written (at 48 kHz: `frames × 48000 / sampleRate`).
///
/// Crash safety: ``checkpoint()`` flushes the packets encoded so far as a page; a killed
/// recorder leaves a file (without the end-of-stream flag) that decoders play up to the last
/// checkpoint.
///
/// Thread: a ``PCMFileEncoder``, one thread at a time.
package final class OggOpusFileEncoder: PCMFileEncoder {
    public let path: String
    public let channels: Int
    /// The rate of the PCM given to libopus (8000, 12000, 16000, 24000 or 48000); OpusHead's input
    /// sample rate. Opus itself always decodes at 48 kHz.
    public let sampleRate: Int
    /// Target bitrate, bits per second.
    public let bitrate: Int

    private let encoder: OpaquePointer
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private var fd: Int32
    private let frameSize: Int  // 20 ms at sampleRate
    private let lookahead: Int  // at sampleRate
    private let preSkip: Int64  // at 48 kHz
    private let pending: UnsafeMutablePointer<Int16>
    private var pendingFrames = 0
    private let packet: UnsafeMutablePointer<UInt8>
    private static let maxPacket = 4_000
    private var held: [UInt8] = []  // the last packet, held back for the end-of-stream flag
    private var heldGranule: Int64 = 0
    private var hasHeld = false
    private var packetNumber: Int64 = 2
    private var inputFrames: Int64 = 0
    private var encodedFrames: Int64 = 0
    private var failure: OutputFileError?
    private var finished = false
    private let syncOnFinish: Bool

    /// Creates the file and writes its two header pages. Throws ``OutputFileError`` (`.invalidArgument`
    /// for a rate or channel count Opus does not take, and as ``FLACFileEncoder``).
    public init(
        path: String, channels: Int, sampleRate: Int, bitrate: Int = 32_000, metadata: AudioFileMetadata = .init(),
        overwrite: Bool = false, syncOnFinish: Bool = true
    ) throws(OutputFileError) {
        guard channels == 1 || channels == 2, [8_000, 12_000, 16_000, 24_000, 48_000].contains(sampleRate) else {
            throw OutputFileError(
                path: path,
                message: "Opus takes 1 or 2 channels at 8, 12, 16, 24 or 48 kHz, not \(channels) at \(sampleRate) Hz",
                kind: .invalidArgument)
        }
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(sampleRate), Int32(channels), OPUS_APPLICATION_AUDIO, &error),
            error == OPUS_OK
        else {
            throw OutputFileError(
                path: path, message: "libopus cannot create an encoder (\(error))", kind: .invalidArgument)
        }
        guard roomtap_opus_encoder_set_bitrate(encoder, Int32(bitrate)) == OPUS_OK else {
            opus_encoder_destroy(encoder)
            throw OutputFileError(
                path: path, message: "libopus refuses a bitrate of \(bitrate) bit/s; give 6000...510000",
                kind: .invalidArgument)
        }
        let fd: Int32
        do { fd = try OutputFile.create(path: path, overwrite: overwrite) } catch {
            opus_encoder_destroy(encoder)
            throw error
        }
        var look: Int32 = 0
        _ = roomtap_opus_encoder_get_lookahead(encoder, &look)
        self.path = path
        self.channels = channels
        self.sampleRate = sampleRate
        self.bitrate = bitrate
        self.encoder = encoder
        self.fd = fd
        self.syncOnFinish = syncOnFinish
        frameSize = sampleRate / 50
        lookahead = Int(look)
        preSkip = Int64(look) * Int64(48_000 / sampleRate)
        pending = .allocate(capacity: frameSize * channels)
        packet = .allocate(capacity: Self.maxPacket)
        stream = .allocate(capacity: 1)
        ogg_stream_init(stream, Int32(bitPattern: 0x5254_4150))
        let head = Self.opusHead(channels: channels, preSkip: Int(preSkip), inputRate: sampleRate)
        let tags = Self.opusTags(metadata.vorbisComments(sampleRate: sampleRate))
        do {
            try submit(head, granule: 0, bos: true, eos: false)
            try flushPages()
            try submit(tags, granule: 0, bos: false, eos: false)
            try flushPages()
        } catch {
            if !overwrite { unlink(path) }
            throw error
        }
    }

    deinit {
        if !finished && failure == nil { try? finish() }
        if fd >= 0 { _ = Glibc.close(fd) }
        opus_encoder_destroy(encoder)
        ogg_stream_clear(stream)
        stream.deallocate()
        pending.deallocate()
        packet.deallocate()
    }

    public func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(OutputFileError) {
        if let failure { throw failure }
        var done = 0
        while done < frames {
            let n = min(frameSize - pendingFrames, frames - done)
            (pending + pendingFrames * channels).update(from: samples + done * channels, count: n * channels)
            pendingFrames += n
            done += n
            if pendingFrames == frameSize { try encodePending() }
        }
        inputFrames += Int64(frames)
    }

    /// Writes the packets encoded so far as a page (the held one stays held: at most 20 ms).
    public func checkpoint() throws(OutputFileError) {
        if let failure { throw failure }
        try flushPages()
    }

    public func finish() throws(OutputFileError) {
        if let failure { throw failure }
        guard !finished else { return }
        // Encode until the decoded stream covers pre-skip + every input sample.
        let needed = Int64(lookahead) + inputFrames
        while encodedFrames < needed {
            (pending + pendingFrames * channels).update(repeating: 0, count: (frameSize - pendingFrames) * channels)
            pendingFrames = frameSize
            try encodePending()
        }
        let end = preSkip + inputFrames * Int64(48_000 / sampleRate)
        if hasHeld {
            try submit(held, granule: end, bos: false, eos: true)
            hasHeld = false
        }
        try flushPages()
        finished = true
        let synced = syncOnFinish ? OutputFile.sync(fd: fd) : 0
        if synced != 0 { throw fail(synced, doing: "fsync") }
        let closed = OutputFile.close(fd: fd)
        fd = -1
        if closed != 0 { throw fail(closed, doing: "closing") }
    }

    // MARK: - Internals

    private func encodePending() throws(OutputFileError) {
        let n = opus_encode(encoder, pending, Int32(frameSize), packet, Int32(Self.maxPacket))
        guard n > 0 else {
            let error = OutputFileError(path: path, message: "libopus failed to encode (\(n))", kind: .writeFailed)
            failure = error
            throw error
        }
        pendingFrames = 0
        encodedFrames += Int64(frameSize)
        if hasHeld { try submit(held, granule: heldGranule, bos: false, eos: false) }
        held = Array(UnsafeBufferPointer(start: packet, count: Int(n)))
        heldGranule = encodedFrames * Int64(48_000 / sampleRate)
        hasHeld = true
    }

    private func submit(_ bytes: [UInt8], granule: Int64, bos: Bool, eos: Bool) throws(OutputFileError) {
        var copy = bytes
        let packetNumber = self.packetNumber
        copy.withUnsafeMutableBufferPointer { buffer in
            var op = ogg_packet()
            op.packet = buffer.baseAddress
            op.bytes = buffer.count
            op.b_o_s = bos ? 1 : 0
            op.e_o_s = eos ? 1 : 0
            op.granulepos = granule
            op.packetno = packetNumber
            _ = ogg_stream_packetin(stream, &op)
        }
        self.packetNumber += 1
        var page = ogg_page()
        while ogg_stream_pageout(stream, &page) != 0 { try writePage(page) }
    }

    private func flushPages() throws(OutputFileError) {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try writePage(page) }
    }

    private func writePage(_ page: ogg_page) throws(OutputFileError) {
        var code = OutputFile.writeAll(fd: fd, page.header, count: page.header_len)
        if code == 0 { code = OutputFile.writeAll(fd: fd, page.body, count: page.body_len) }
        if code != 0 { throw fail(code, doing: "writing") }
    }

    private func fail(_ code: Int32, doing what: String) -> OutputFileError {
        let error = OutputFileError.failed(code, path: path, doing: what)
        failure = error
        return error
    }

    /// RFC 7845 §5.1: the identification header, channel mapping family 0.
    static func opusHead(channels: Int, preSkip: Int, inputRate: Int) -> [UInt8] {
        var b = Array("OpusHead".utf8)
        b.append(1)
        b.append(UInt8(channels))
        b.appendLE16(UInt16(preSkip))
        b.appendLE32(UInt32(inputRate))
        b.appendLE16(0)
        b.append(0)
        return b
    }

    /// RFC 7845 §5.2: the comment header.
    static func opusTags(_ comments: [(String, String)]) -> [UInt8] {
        var b = Array("OpusTags".utf8)
        let vendor = Array("roomtap (\(String(cString: opus_get_version_string())))".utf8)
        b.appendLE32(UInt32(vendor.count))
        b += vendor
        b.appendLE32(UInt32(comments.count))
        for (name, value) in comments {
            let entry = Array("\(name)=\(value)".utf8)
            b.appendLE32(UInt32(entry.count))
            b += entry
        }
        return b
    }
}
