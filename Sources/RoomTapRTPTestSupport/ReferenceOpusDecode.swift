import COpus

/// The decode an exact recording of a stream must equal: one plain libopus decoder (48 kHz) given,
/// in order, every packet that arrived and, for each packet that did not, **one** PLC call of its
/// duration (`opus_decode(NULL, duration)`), or, when `fec` is on and the next packet arrived
/// carrying in-band FEC (SILK LBRR), that FEC (`decode_fec = 1`, RFC 6716 §2.1.7). A few lines of libopus,
/// so the tests compare roomtap with libopus itself.
///
/// Thread: any (a value's function; it creates and frees its own decoder).
public enum ReferenceOpusDecode {
    /// One packet of the stream as sent, and whether it arrived.
    public struct Packet: Sendable {
        public var payload: [UInt8]
        public var arrived: Bool
        public init(payload: [UInt8], arrived: Bool) {
            self.payload = payload
            self.arrived = arrived
        }
    }

    /// The stream's audio, `channels` interleaved; packet `i` starts at sample `i × duration`
    /// per channel, where `duration` is each packet's own length (packets laid end to end).
    public static func decode(_ packets: [Packet], channels: Int = 1, fec: Bool = false) -> [Int16] {
        var error: Int32 = 0
        let decoder = opus_decoder_create(48_000, Int32(channels), &error)!
        defer { opus_decoder_destroy(decoder) }
        var out: [Int16] = []
        var pcm = [Int16](repeating: 0, count: 5760 * channels)
        for (i, packet) in packets.enumerated() {
            let duration = packet.payload.withUnsafeBufferPointer {
                Int(opus_packet_get_nb_samples($0.baseAddress!, Int32($0.count), 48_000))
            }
            var n: Int32
            if packet.arrived {
                n = packet.payload.withUnsafeBufferPointer { src in
                    pcm.withUnsafeMutableBufferPointer {
                        opus_decode(decoder, src.baseAddress!, Int32(src.count), $0.baseAddress!, 5760, 0)
                    }
                }
            } else if fec, i + 1 < packets.count, packets[i + 1].arrived, RTPTestSender.hasFEC(packets[i + 1].payload) {
                n = packets[i + 1].payload.withUnsafeBufferPointer { src in
                    pcm.withUnsafeMutableBufferPointer {
                        opus_decode(decoder, src.baseAddress!, Int32(src.count), $0.baseAddress!, Int32(duration), 1)
                    }
                }
            } else {
                n = pcm.withUnsafeMutableBufferPointer {
                    opus_decode(decoder, nil, 0, $0.baseAddress!, Int32(duration), 0)
                }
            }
            precondition(n == duration, "libopus gave \(n) samples for a packet of \(duration)")
            out += pcm[0..<(Int(n) * channels)]
        }
        return out
    }
}
