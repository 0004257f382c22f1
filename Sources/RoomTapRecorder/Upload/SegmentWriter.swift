import Foundation
import RoomTap

/// Cuts one track's recorded audio into segment files, `DIR/segments/<track>/<first room
/// sample, 12 digits>.wav`: 48 kHz mono 16-bit PCM WAV (a 44-byte header), each a complete,
/// playable file of the room's own samples. A segment ends at every multiple of the segment
/// length on the room timeline (so the segments of all tracks line up), where a frame is missing
/// (a gap: the next segment starts at the next frame's sample), and when the track ends. Each
/// file is written as `.tmp` as the frames come (through a 96 kB buffer: memory does not grow
/// with `--segment-seconds`), its header completed and the file renamed when whole, then handed
/// to `finished`.
///
/// Thread: the sink's consumer thread (a ``QueuedSink`` worker): never the room clock's.
final class SegmentWriter: FrameConsumer {
    let directory: String
    let segmentSamples: Int64
    private let finished: (String, Int64, Int64) -> Void  // path, first room sample, samples
    /// Samples not written to the open file yet (at most one second).
    private var buffer: [Int16] = []
    private static let bufferSamples = AudioFrame.sampleRate
    /// The open segment: its path (without `.tmp`), descriptor, first room sample, samples so far.
    private var open: (path: String, fd: Int32, first: Int64, samples: Int64)?

    init(directory: String, segmentSeconds: Int, finished: @escaping (String, Int64, Int64) -> Void) {
        self.directory = directory
        self.segmentSamples = Int64(segmentSeconds) * Int64(AudioFrame.sampleRate)
        self.finished = finished
        buffer.reserveCapacity(Self.bufferSamples)
    }

    deinit {
        if let open {
            close(open.fd)
            unlink(open.path + ".tmp")
        }
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
        let fd = Glibc.open(path + ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw RuntimeError(description: "cannot write segment \(path): \(String(cString: strerror(errno)))")
        }
        open = (path, fd, first, 0)
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
            close(segment.fd)
            unlink(segment.path + ".tmp")
            throw error
        }
        close(segment.fd)
        guard segment.samples > 0 else {
            unlink(segment.path + ".tmp")
            return
        }
        guard rename(segment.path + ".tmp", segment.path) == 0 else {
            throw RuntimeError(
                description: "cannot write segment \(segment.path): \(String(cString: strerror(errno)))")
        }
        finished(segment.path, segment.first, segment.samples)
    }

    private func write(_ bytes: [UInt8], at offset: Int64) throws {
        guard let open else { return }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes {
                pwrite(open.fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + done)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw RuntimeError(
                    description: "cannot write segment \(open.path): \(String(cString: strerror(errno)))")
            }
            done += n
        }
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
