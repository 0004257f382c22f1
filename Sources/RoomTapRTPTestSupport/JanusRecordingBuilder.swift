/// Writes Janus recordings (`.mjr`, `MJR00002`) as Janus's `record.c` lays them out: the format,
/// a JSON info header, then a `MEET` frame per RTP packet with the milliseconds since the first
/// and the packet's length. For tests of the `.mjr` reader: real layouts, any header, any damage.
///
/// Thread: a value type; any thread.
public struct JanusRecordingBuilder: Sendable {
    /// The JSON info header (`t`, `c`, `s`, `u`, ...), written as is.
    public var header: String
    /// The frames: written ms and the bytes of each (an RTP packet, or anything).
    public var frames: [(writtenMilliseconds: UInt32, bytes: [UInt8])] = []

    /// A recording with this JSON info header and no frames yet.
    public init(header: String) { self.header = header }

    /// The header of an Opus audio recording created at `u − 80 ms` whose first packet was written
    /// at `u` (µs since the Unix epoch).
    public static func opusHeader(u: Int64) -> String {
        "{\"t\": \"a\", \"c\": \"opus\", \"s\": \(u - 80_000), \"u\": \(u)}"
    }

    /// Appends packet `payload` as RTP (PT 111, with a one-byte header extension as Janus keeps
    /// the browser's) with `sequence` and `timestamp`, written at `ms`.
    public mutating func append(payload: [UInt8], sequence: UInt16, timestamp: UInt32, ms: UInt32) {
        var rtp = RTPPacketBuilder(
            payloadType: 111, sequenceNumber: sequence, timestamp: timestamp, ssrc: 0x92F5_02C5, payload: payload)
        rtp.extension = .oneByte([(id: 4, data: [0x30])])
        frames.append((ms, rtp.bytes()))
    }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        let json = Array(header.utf8)
        var out = Array("MJR00002".utf8) + RTPWire.be16(UInt16(truncatingIfNeeded: json.count)) + json
        for frame in frames {
            out += Array("MEET".utf8) + RTPWire.be32(frame.writtenMilliseconds)
            out += RTPWire.be16(UInt16(truncatingIfNeeded: frame.bytes.count)) + frame.bytes
        }
        return out
    }

    /// A recording of `packets` (Opus, sent every `duration` samples from sequence 1 and timestamp
    /// 0, as Janus rewrites them), each written at its timestamp's ms.
    public static func opus(_ packets: [[UInt8]], u: Int64, duration: Int = 960) -> JanusRecordingBuilder {
        var builder = JanusRecordingBuilder(header: opusHeader(u: u))
        for (i, payload) in packets.enumerated() {
            builder.append(
                payload: payload, sequence: UInt16(truncatingIfNeeded: i + 1),
                timestamp: UInt32(truncatingIfNeeded: i * duration), ms: UInt32(i * duration / 48))
        }
        return builder
    }
}
