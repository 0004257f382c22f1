import COgg

/// Builds Ogg pages from packets with libogg (RFC 3533), with control over granule positions and
/// page breaks: for Ogg Opus files made by ``OggOpusWriter``, hand-made headers, multiplexed and
/// chained files. (``OggStreamBuilder`` is the simpler one-packet-per-page form.)
///
/// Thread: a value; `pages` is pure.
public struct OggPageBuilder: Sendable {
    /// One packet to put into the stream.
    public struct Packet: Sendable {
        /// The packet's bytes.
        public var data: [UInt8]
        /// Granule position written on the page where the packet completes (-1: none).
        public var granule: Int64
        /// End the page after this packet (`ogg_stream_flush`); otherwise libogg decides.
        public var flushAfter: Bool
        /// Mark the page with the end-of-stream flag (last packet only).
        public var endOfStream: Bool

        /// Creates a packet.
        public init(_ data: [UInt8], granule: Int64 = 0, flushAfter: Bool = false, endOfStream: Bool = false) {
            self.data = data
            self.granule = granule
            self.flushAfter = flushAfter
            self.endOfStream = endOfStream
        }
    }

    /// Serial number of the logical stream.
    public var serial: Int32
    /// Body bytes after which libogg closes a page on its own (`ogg_stream_pageout_fill`); up to
    /// 65025 (255 segments of 255 bytes) makes the largest pages Ogg allows.
    public var pageFill: Int

    /// Creates a builder for one logical stream.
    public init(serial: Int32 = 0x5254_4150, pageFill: Int = 4096) {
        self.serial = serial
        self.pageFill = pageFill
    }

    /// The pages (header + body bytes each) holding `packets`, in order. The first packet opens
    /// the stream (BOS). Remaining packets are flushed at the end.
    public func pages(_ packets: [Packet]) -> [[UInt8]] {
        var stream = ogg_stream_state()
        ogg_stream_init(&stream, serial)
        defer { ogg_stream_clear(&stream) }
        var pages: [[UInt8]] = []
        var page = ogg_page()
        func take(flush: Bool) {
            let fill = Int32(pageFill)
            while (flush
                ? ogg_stream_flush_fill(&stream, &page, fill) : ogg_stream_pageout_fill(&stream, &page, fill)) != 0
            {
                var bytes = [UInt8](UnsafeBufferPointer(start: page.header, count: Int(page.header_len)))
                bytes += UnsafeBufferPointer(start: page.body, count: Int(page.body_len))
                pages.append(bytes)
            }
        }
        for (index, p) in packets.enumerated() {
            var data = p.data.isEmpty ? [0] : p.data  // libogg needs a valid pointer even for 0 bytes
            data.withUnsafeMutableBufferPointer { buffer in
                var packet = ogg_packet()
                packet.packet = buffer.baseAddress
                packet.bytes = p.data.count
                packet.b_o_s = index == 0 ? 1 : 0
                packet.e_o_s = p.endOfStream ? 1 : 0
                packet.granulepos = p.granule
                packet.packetno = Int64(index)
                _ = ogg_stream_packetin(&stream, &packet)
            }
            take(flush: p.flushAfter || p.endOfStream)
        }
        take(flush: true)
        return pages
    }

    /// The bytes of `pages(packets)`, concatenated.
    public func build(_ packets: [Packet]) -> [UInt8] { pages(packets).flatMap { $0 } }
}
