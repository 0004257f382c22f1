import RoomTapCore
import RoomTapRTP

/// A fuzzing entry point for the PBX codecs' depacketizers and decoders (for the libFuzzer target
/// in `Fuzz/` and a random-bytes test): arbitrary bytes become a stream of RTP payloads of one
/// codec, inserted into a jitter buffer and rendered as the room clock would.
///
/// Layout of the input: byte 0 picks the codec (G.711 µ/A, G.722, L16 at 8, 16, 44.1 and 48 kHz,
/// mono or stereo) and the track's channels; then each packet is `length`, `sequence step`
/// (signed), `timestamp step` (× 20 units, signed) and `length` payload bytes. The codec's texts
/// (``AudioCodec/named(_:)``) are read from the same bytes.
///
/// Invariants, trapping in any build: a silent frame holds only zeros; every frame renders.
///
/// Thread: any; one call at a time per input (it makes its own buffer).
package enum PBXCodecFuzz {
    static let codecs: [AudioCodec] = [
        .pcmu, .pcma, .g722, .l16(rate: 8_000), .l16(rate: 16_000), .l16(rate: 16_000, channels: 2),
        .l16(rate: 44_100), .l16(rate: 48_000, channels: 2),
    ]

    /// Runs the input through (see above); traps only when an invariant breaks.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        _ = AudioCodec.named(String(decoding: bytes.prefix(64), as: UTF8.self))
        guard let first = bytes.first else { return }
        let codec = codecs[Int(first & 7)]
        let channels = first & 8 == 0 ? 1 : 2
        _ = PCMPayload.timestampUnits(of: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), codec: codec)
        var nanos: UInt64 = 1_000_000
        guard
            let buffer = JitterBuffer(
                channels: channels, codec: codec, recordDelayMilliseconds: 100, livePlayout: true,
                arrivalToRoom: { Int64($0 * 48 / 1_000_000) })
        else { return }
        var sequence: UInt16 = 100
        var timestamp: UInt32 = 5_000
        var i = 1
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFrame.samplesPerChannel * channels)
        defer { frame.deallocate() }
        var room: Int64 = 0
        while i + 3 <= bytes.count {
            let length = min(Int(bytes[i]), bytes.count - i - 3)
            sequence &+= UInt16(bitPattern: Int16(Int8(bitPattern: bytes[i + 1])))
            timestamp &+= UInt32(bitPattern: Int32(Int8(bitPattern: bytes[i + 2])) * 20)
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(i + 3)..<(i + 3 + length)])
            _ = buffer.insert(sequence: sequence, timestamp: timestamp, payload: payload, arrival: nanos)
            nanos += 20_000_000
            i += 3 + length
            while room < Int64(nanos / 1_000_000) * 48 { render(buffer, frame, &room) }
        }
        for _ in 0..<30 { render(buffer, frame, &room) }
    }

    private static func render(
        _ buffer: JitterBuffer, _ frame: UnsafeMutableBufferPointer<Int16>, _ room: inout Int64
    ) {
        let status = buffer.render(into: frame, at: room)
        if status == .silence { check(frame.allSatisfy { $0 == 0 }, "a silent frame holds samples") }
        _ = buffer.renderLive(into: frame, at: room)
        room += Int64(AudioFrame.samplesPerChannel)
    }

    private static func check(_ condition: Bool, _ message: StaticString) {
        if !condition { fatalError("PBXCodecFuzz: \(message)") }
    }
}
