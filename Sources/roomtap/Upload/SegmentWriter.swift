import Foundation
import RoomTap

/// Cuts one track's recorded audio into segment files, `DIR/segments/<track>/<first room
/// sample, 12 digits>.wav`: 48 kHz mono 16-bit PCM WAV (a 44-byte header), each a complete,
/// playable file of the room's own samples. A segment ends at every multiple of the segment
/// length on the room timeline (so the segments of all tracks line up), where a frame is missing
/// (a gap: the next segment starts at the next frame's sample), and when the track ends. Each
/// file is written as `.tmp` and renamed when whole, then handed to `finished`.
///
/// Thread: the sink's consumer thread (a ``QueuedSink`` worker): never the room clock's.
final class SegmentWriter: FrameConsumer {
    let directory: String
    let segmentSamples: Int64
    private let finished: (String, Int64, Int64) -> Void  // path, first room sample, samples
    private var samples: [Int16] = []
    private var firstSample: Int64 = -1
    private var failure: String?

    init(directory: String, segmentSeconds: Int, finished: @escaping (String, Int64, Int64) -> Void) {
        self.directory = directory
        self.segmentSamples = Int64(segmentSeconds) * Int64(AudioFrame.sampleRate)
        self.finished = finished
        samples.reserveCapacity(Int(segmentSamples))
    }

    /// The name of the segment that starts at room sample `first`.
    static func fileName(firstSample first: Int64) -> String {
        let digits = String(first)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + ".wav"
    }

    func consume(_ frame: AudioFrame) throws {
        if firstSample >= 0, frame.roomSample != firstSample + Int64(samples.count) { try close() }  // a gap
        if firstSample < 0 { firstSample = frame.roomSample }
        samples.append(contentsOf: frame.samples.prefix(AudioFrame.samplesPerChannel))  // the queue made it mono
        let end = frame.roomSample + Int64(AudioFrame.samplesPerChannel)
        if end % segmentSamples == 0 { try close() }
    }

    func drained() throws {}

    func finish() throws { try close() }

    /// Writes the segment held so far (if any) and starts the next.
    private func close() throws {
        defer {
            samples.removeAll(keepingCapacity: true)
            firstSample = -1
        }
        guard firstSample >= 0, !samples.isEmpty else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + Self.fileName(firstSample: firstSample)
        var bytes = [UInt8]()
        let dataBytes = UInt32(samples.count * 2)
        bytes.reserveCapacity(44 + Int(dataBytes))
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
        samples.withUnsafeBytes { bytes += $0 }  // little-endian host (x86-64, arm64)
        try Data(bytes).write(to: URL(fileURLWithPath: path + ".tmp"))
        guard rename(path + ".tmp", path) == 0 else {
            throw RuntimeError(description: "cannot write segment \(path): \(String(cString: strerror(errno)))")
        }
        finished(path, firstSample, Int64(samples.count))
    }
}
