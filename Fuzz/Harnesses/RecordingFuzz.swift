import RoomTapCore
import RoomTapRTP

/// One entry point that runs the recording readers over arbitrary bytes, for the libFuzzer target
/// or a random-bytes test: the bytes as a whole `.mjr`, and as the frames of one (after a valid
/// `MJR00002` header, so the fuzzer reaches the frame reader without having to find a header),
/// and every stream that parses played by a ``RecordedStreamSource`` as the room clock would.
///
/// Invariants checked (a trap when one fails): payload ranges inside the bytes, packets placed
/// in the span the stream announces, a frame is silent outside the stream's span and silent
/// frames hold zeros, the source finishes on the frame its length says.
///
/// Thread: pure, any thread.
package enum RecordingFuzz {
    /// Audio rendered per stream at most (60 s), so a stream claiming hours stays fast.
    public static let maxRenderedSamples: Int64 = 48_000 * 60
    /// A valid header for the frames case.
    static let header: [UInt8] = {
        let json = Array("{\"t\":\"a\",\"c\":\"opus\",\"s\":1796070494380245,\"u\":1796070494461418}".utf8)
        return Array("MJR00002".utf8) + [UInt8(json.count >> 8), UInt8(json.count & 0xFF)] + json
    }()

    /// Runs the readers over `bytes`, rendering at most `renderLimit` samples of each stream;
    /// traps only when an invariant fails.
    package static func exercise(_ bytes: UnsafeRawBufferPointer, renderLimit: Int64 = maxRenderedSamples) {
        let array = Array(bytes)
        if let recording = try? JanusRecording.parse(array, path: "fuzz") {
            play(recording.stream, selector: 0, limit: renderLimit)
        }
        if let recording = try? JanusRecording.parse(header + array, path: "fuzz") {
            play(recording.stream, selector: array.first ?? 0, limit: renderLimit)
        }
    }

    /// Checks `stream` and renders it (channels and offset from `selector`).
    static func play(_ stream: RecordedRTPStream, selector: UInt8, limit: Int64) {
        for packet in stream.packets {
            check(packet.payload.lowerBound >= 0 && packet.payload.upperBound <= stream.bytes.count, "payload range")
            check(
                packet.place + Int64(packet.duration) <= stream.durationSamples + Int64(stream.preSkip),
                "packet beyond the announced length")
        }
        check(stream.durationSamples >= 0, "negative length")
        let channels = selector & 1 == 0 ? 1 : 2
        let offset = Int64(selector >> 1) * 97
        guard let source = RecordedStreamSource(stream: stream, offset: offset, channels: channels) else { return }
        let frame = Int64(AudioFrame.samplesPerChannel)
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: Int(frame) * channels)
        defer { buffer.deallocate() }
        let end = source.endRoomSample
        let last = min(end, offset + limit)
        var roomSample: Int64 = 0
        while roomSample < last {
            let status = source.render(into: buffer, at: roomSample)
            let inSpan = roomSample + frame > offset && roomSample < end
            check(status == .silence || inSpan, "audio outside the stream's span")
            if status == .silence { check(buffer.allSatisfy { $0 == 0 }, "a silent frame holds samples") }
            roomSample += frame
            check(source.isFinished == (roomSample >= end), "isFinished on the wrong frame")
        }
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("invariant failed: \(what)") }
    }
}
