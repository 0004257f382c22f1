import COgg

/// Builds Ogg streams from raw packets with libogg (for hostile-input tests: Ogg that is not Opus,
/// bad OpusHead fields, header-only files).
public enum OggStreamBuilder {
    /// One logical stream (serial `serial`), each packet flushed on a page of its own, the last
    /// marked end-of-stream; granule positions are `granules[i]` when given, else 0.
    public static func singleStream(packets: [[UInt8]], granules: [Int64]? = nil, serial: Int32 = 0x524f_4f4d)
        -> [UInt8]
    {
        var stream = ogg_stream_state()
        ogg_stream_init(&stream, serial)
        defer { ogg_stream_clear(&stream) }
        var bytes: [UInt8] = []
        var page = ogg_page()
        for (index, packet) in packets.enumerated() {
            var copy = packet
            copy.withUnsafeMutableBufferPointer { buffer in
                var op = ogg_packet()
                op.packet = buffer.baseAddress
                op.bytes = buffer.count
                op.b_o_s = index == 0 ? 1 : 0
                op.e_o_s = index == packets.count - 1 ? 1 : 0
                op.granulepos = granules?[index] ?? 0
                op.packetno = Int64(index)
                ogg_stream_packetin(&stream, &op)
            }
            while ogg_stream_flush(&stream, &page) != 0 {
                bytes += UnsafeBufferPointer(start: page.header, count: page.header_len)
                bytes += UnsafeBufferPointer(start: page.body, count: page.body_len)
            }
        }
        return bytes
    }
}
