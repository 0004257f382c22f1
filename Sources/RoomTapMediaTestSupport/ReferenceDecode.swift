import COpus

/// libopus's own decode of `packets`, the oracle for decode-exactness tests: one decoder at
/// 48 kHz with `channels` output channels and `gainQ8` applied, every packet decoded in order,
/// the first `preSkip` samples per channel dropped, cut to `totalSamples` per channel. Interleaved.
/// A packet that fails to decode stops the decode (the result is then shorter).
public func referenceDecode(
    packets: [[UInt8]], channels: Int, preSkip: Int, totalSamples: Int, gainQ8: Int = 0
) -> [Int16] {
    var error: Int32 = 0
    let decoder = opus_decoder_create(48_000, Int32(channels), &error)!
    defer { opus_decoder_destroy(decoder) }
    if gainQ8 != 0 { _ = roomtap_opus_decoder_set_gain(decoder, Int32(gainQ8)) }
    var out: [Int16] = []
    var pcm = [Int16](repeating: 0, count: 5760 * channels)
    for packet in packets {
        let n = packet.withUnsafeBufferPointer { p in
            pcm.withUnsafeMutableBufferPointer {
                opus_decode(decoder, p.baseAddress!, Int32(p.count), $0.baseAddress!, 5760, 0)
            }
        }
        guard n > 0 else { break }
        out += pcm[0..<Int(n) * channels]
    }
    let start = min(out.count, preSkip * channels)
    let end = min(out.count, (preSkip + totalSamples) * channels)
    return Array(out[start..<end])
}
