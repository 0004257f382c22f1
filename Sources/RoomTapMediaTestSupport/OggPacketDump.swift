import COgg
import Foundation

/// Every packet of the first logical stream of an Ogg file, read with libogg in one go: for tests
/// and benchmarks that need "the same packets" roomtap decodes. Not for hostile input (use the
/// ingest reader); pages that fail their CRC are skipped, as libogg does.
public struct OggPacketDump: Sendable {
    /// Packet bytes in order, headers included (for Ogg Opus: OpusHead, OpusTags, then audio).
    public let packets: [[UInt8]]
    /// Granule position of the last page.
    public let lastGranule: Int64

    /// Reads `path`; nil when it cannot be read or has no pages.
    public init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.init(bytes: [UInt8](data))
    }

    /// Parses bytes already in memory.
    public init?(bytes: [UInt8]) {
        var sync = ogg_sync_state()
        var stream = ogg_stream_state()
        var page = ogg_page()
        var packet = ogg_packet()
        ogg_sync_init(&sync)
        defer { ogg_sync_clear(&sync) }
        guard let buffer = ogg_sync_buffer(&sync, bytes.count) else { return nil }
        bytes.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress!, byteCount: bytes.count)
        }
        ogg_sync_wrote(&sync, bytes.count)
        var packets: [[UInt8]] = []
        var serial: Int32?
        var granule: Int64 = 0
        while true {
            let result = ogg_sync_pageout(&sync, &page)
            if result == 0 { break }
            if result < 0 { continue }
            if serial == nil {
                serial = ogg_page_serialno(&page)
                ogg_stream_init(&stream, serial!)
            }
            guard ogg_page_serialno(&page) == serial else { continue }
            ogg_stream_pagein(&stream, &page)
            if ogg_page_granulepos(&page) >= 0 { granule = ogg_page_granulepos(&page) }
            while ogg_stream_packetout(&stream, &packet) == 1 {
                packets.append(Array(UnsafeBufferPointer(start: packet.packet, count: packet.bytes)))
            }
        }
        guard serial != nil else { return nil }
        ogg_stream_clear(&stream)
        self.packets = packets
        self.lastGranule = granule
    }

    /// The audio packets of an Ogg Opus stream (the two header packets dropped).
    public var audioPackets: [[UInt8]] { Array(packets.dropFirst(2)) }

    /// Pre-skip from the OpusHead packet (RFC 7845 §5.1, bytes 10–11).
    public var preSkip: Int {
        guard let head = packets.first, head.count >= 19 else { return 0 }
        return Int(head[10]) | Int(head[11]) << 8
    }

    /// Output gain from the OpusHead packet, Q7.8 dB (bytes 16–17).
    public var outputGainQ8: Int {
        guard let head = packets.first, head.count >= 19 else { return 0 }
        return Int(Int16(bitPattern: UInt16(head[16]) | UInt16(head[17]) << 8))
    }
}
