import Foundation
import RoomTapCore
import RoomTapIngest
import RoomTapTestSupport
import Testing

/// What rendering a source from room sample 0 until it finishes produced.
struct Rendering {
    /// Every rendered sample, interleaved, from room sample 0.
    var samples: [Int16] = []
    /// Status of each frame.
    var statuses: [FrameStatus] = []
    /// The index of the frame after which `isFinished` first became true (-1: never within bound).
    var finishedAfterFrame = -1
    /// `isFinished` before any frame was rendered.
    var finishedBeforeStart = false

    var frames: Int { statuses.count }
}

/// Renders `source` frame by frame, as the room clock does, until it is finished (plus `extra`
/// frames), at most `maxFrames`.
func renderAll(_ source: OggOpusFileSource, extra: Int = 0, maxFrames: Int = 100_000) -> Rendering {
    var r = Rendering()
    r.finishedBeforeStart = source.isFinished
    let n = AudioFrame.samplesPerChannel * source.channels
    var frame = [Int16](repeating: 0x5555, count: n)
    var after = 0
    for index in 0..<maxFrames {
        let status = frame.withUnsafeMutableBufferPointer {
            source.render(into: $0, at: Int64(index) * Int64(AudioFrame.samplesPerChannel))
        }
        r.samples += frame
        r.statuses.append(status)
        if source.isFinished {
            if r.finishedAfterFrame < 0 { r.finishedAfterFrame = index }
            after += 1
            if after > extra { break }
        }
    }
    return r
}

/// Files written to a fresh temporary directory, removed at deinit.
final class Scratch {
    let directory: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/roomtap-ingest-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Writes `bytes` to `name` in the directory and returns the path.
    func write(_ bytes: [UInt8], as name: String = "input.opus") throws -> String {
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// `Samples/room/<name>.opus` in this repository.
func sampleFile(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/room/\(name).opus").path
}

/// The first index where `a` and `b` differ (nil if equal up to the shorter length).
func firstDifference(_ a: ArraySlice<Int16>, _ b: ArraySlice<Int16>) -> Int? {
    for (i, (x, y)) in zip(a, b).enumerated() where x != y { return i }
    return nil
}

/// Signal-to-error ratio in dB of `test` against `reference`.
func snr(_ reference: ArraySlice<Int16>, _ test: ArraySlice<Int16>) -> Double {
    var signal = 0.0
    var error = 0.0
    for (r, t) in zip(reference, test) {
        signal += Double(r) * Double(r)
        error += (Double(r) - Double(t)) * (Double(r) - Double(t))
    }
    return error == 0 ? .infinity : 10 * log10(signal / error)
}

/// Decodes `bytes` through the in-memory path (the one the fuzzer uses) into one array.
func decodeInMemory(_ bytes: [UInt8], channels: Int = 1, limit: Int = 48_000 * 600) throws
    -> (samples: [Int16], decoder: OggOpusStreamDecoder)
{
    try bytes.withUnsafeBytes { raw in
        let decoder = try OggOpusStreamDecoder(source: MemoryByteSource(raw), path: "memory", channels: channels)
        var out: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 480 * channels)
        while out.count < limit * channels {
            let got = chunk.withUnsafeMutableBufferPointer { decoder.read(into: $0.baseAddress!, frames: 480).frames }
            if got == 0 { break }
            out += chunk[0..<got * channels]
        }
        return (out, decoder)
    }
}
