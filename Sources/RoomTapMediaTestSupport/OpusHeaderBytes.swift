/// Hand-written `OpusHead` and `OpusTags` packets (RFC 7845 §5), independent of the parser under
/// test, including invalid ones (bad version, zero channels, any mapping family).
public enum OpusHeaderBytes {
    /// An `OpusHead` packet. For `mappingFamily != 0` pass `streams`, `coupled` and `mapping` (the
    /// defaults are one stream, `channels - 1` coupled, identity mapping).
    public static func head(
        version: UInt8 = 1, channels: Int, preSkip: Int, inputSampleRate: UInt32 = 48_000, gainQ8: Int16 = 0,
        mappingFamily: UInt8 = 0, streams: Int? = nil, coupled: Int? = nil, mapping: [UInt8]? = nil
    ) -> [UInt8] {
        var b = Array("OpusHead".utf8)
        b.append(version)
        b.append(UInt8(truncatingIfNeeded: channels))
        b += le16(UInt16(truncatingIfNeeded: preSkip))
        b += le32(inputSampleRate)
        b += le16(UInt16(bitPattern: gainQ8))
        b.append(mappingFamily)
        if mappingFamily != 0 {
            b.append(UInt8(truncatingIfNeeded: streams ?? 1))
            b.append(UInt8(truncatingIfNeeded: coupled ?? max(0, channels - 1)))
            b += mapping ?? (0..<channels).map { UInt8(truncatingIfNeeded: $0) }
        }
        return b
    }

    /// An `OpusTags` packet.
    public static func tags(vendor: String = "roomtap tests", comments: [String] = []) -> [UInt8] {
        var b = Array("OpusTags".utf8)
        let v = Array(vendor.utf8)
        b += le32(UInt32(v.count)) + v
        b += le32(UInt32(comments.count))
        for c in comments {
            let u = Array(c.utf8)
            b += le32(UInt32(u.count)) + u
        }
        return b
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
}
