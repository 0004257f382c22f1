import Foundation
import RoomTapAll
import RoomTapFiles

/// Cuts one track's recorded audio into segment files, `DIR/segments/<track>/<first room
/// sample, 12 digits>.wav`: 48 kHz mono 16-bit PCM WAV (a 44-byte header), each a complete,
/// playable file of the room's own samples. A segment ends at every multiple of the segment
/// length on the room timeline (so the segments of all tracks line up), where a frame is missing
/// (a gap: the next segment starts at the next frame's sample), and when the track ends. Each
/// file is written to a temporary file beside it (an ``OutputFile/Replacement``) as the frames come
/// (through a 96 kB buffer: memory does not grow with `--segment-seconds`), its header completed,
/// and the file fsynced and renamed when whole, then handed to `finished`.
///
/// Thread: the sink's consumer thread (a ``QueuedSink`` worker): never the room clock's.
final class SegmentWriter: FrameConsumer {
    let directory: String
    let segmentSamples: Int64
    private let finished: (String, Int64, Int64) -> Void  // path, first room sample, samples
    /// Samples not written to the open file yet (at most one second).
    private var buffer: [Int16] = []
    private static let bufferSamples = AudioFrame.sampleRate
    /// The open segment: its path and temporary file, first room sample, samples so far.
    private var open: (path: String, file: OutputFile.Replacement, first: Int64, samples: Int64)?

    init(directory: String, segmentSeconds: Int, finished: @escaping (String, Int64, Int64) -> Void) {
        self.directory = directory
        self.segmentSamples = Int64(segmentSeconds) * Int64(AudioFrame.sampleRate)
        self.finished = finished
        buffer.reserveCapacity(Self.bufferSamples)
    }

    deinit {
        open?.file.abandon()
    }

    /// The name of the segment that starts at room sample `first`.
    static func fileName(firstSample first: Int64) -> String {
        let digits = String(first)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + ".wav"
    }

    func consume(_ frame: AudioFrame) throws {
        if let open, frame.roomSample != open.first + open.samples { try closeSegment() }  // a gap
        if open == nil { try openSegment(first: frame.roomSample) }
        buffer.append(contentsOf: frame.samples.prefix(AudioFrame.samplesPerChannel))  // the queue made it mono
        open?.samples += Int64(AudioFrame.samplesPerChannel)
        if buffer.count >= Self.bufferSamples { try flush() }
        let end = frame.roomSample + Int64(AudioFrame.samplesPerChannel)
        if end % segmentSamples == 0 { try closeSegment() }
    }

    func drained() throws {}

    func finish() throws { try closeSegment() }

    private func openSegment(first: Int64) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + Self.fileName(firstSample: first)
        let file: OutputFile.Replacement
        do { file = try OutputFile.Replacement.begin(path: path, overwrite: true) } catch {
            throw Self.failure(error)
        }
        open = (path, file, first, 0)
        try write(Self.header(dataBytes: 0), at: 0)  // completed when the segment closes
    }

    /// Writes the samples held so far to the open file.
    private func flush() throws {
        guard let open, !buffer.isEmpty else { return }
        let offset = 44 + (open.samples - Int64(buffer.count)) * 2
        let bytes = buffer.withUnsafeBytes { Array($0) }  // little-endian host (x86-64, arm64)
        buffer.removeAll(keepingCapacity: true)
        try write(bytes, at: offset)
    }

    /// Completes the open segment (header sizes, rename) and hands it on; nothing when none is open.
    private func closeSegment() throws {
        guard let segment = open else { return }
        defer { open = nil }
        do {
            try flush()
            try write(Self.header(dataBytes: UInt32(segment.samples * 2)), at: 0)
        } catch {
            segment.file.abandon()
            throw error
        }
        guard segment.samples > 0 else {
            segment.file.abandon()
            return
        }
        do { try segment.file.commit() } catch { throw Self.failure(error) }
        finished(segment.path, segment.first, segment.samples)
    }

    private func write(_ bytes: [UInt8], at offset: Int64) throws {
        guard let open else { return }
        let code = bytes.withUnsafeBytes {
            OutputFile.writeAll(fd: open.file.fd, $0.baseAddress!, count: $0.count, at: offset)
        }
        if code != 0 { throw Self.failure(.failed(code, path: open.path, doing: "writing")) }
    }

    /// The one-line error of a segment that could not be written: `cannot write segment <path>: <reason>`.
    private static func failure(_ error: OutputFileError) -> RuntimeError {
        let reason = error.errno.map(OutputFileError.describe) ?? error.message
        return RuntimeError(description: "cannot write segment \(error.path): \(reason)")
    }

    /// The canonical 44-byte header of a 48 kHz mono 16-bit PCM WAV with `dataBytes` of samples.
    static func header(dataBytes: UInt32) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(44)
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        bytes += Array("RIFF".utf8)
        u32(36 + dataBytes)
        bytes += Array("WAVEfmt ".utf8)
        u32(16)
        u16(1)
        u16(1)
        u32(48_000)
        u32(96_000)
        u16(2)
        u16(16)
        bytes += Array("data".utf8)
        u32(dataBytes)
        return bytes
    }
}
