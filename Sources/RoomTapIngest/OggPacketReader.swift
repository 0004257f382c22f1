import COgg

/// Reads the pages and packets of one logical stream of an Ogg file with libogg.
///
/// Ogg framing (RFC 3533, https://www.rfc-editor.org/rfc/rfc3533) is never parsed by hand here:
/// `ogg_sync_*` finds pages and checks their CRC, `ogg_stream_*` joins packets across pages and
/// reports holes. Bytes are pulled from a ``ByteSource`` in chunks of ``chunkSize`` only when libogg
/// needs more, so memory stays bounded however long the file is.
///
/// Multiplexed files (several logical streams): ``selectStream(where:)`` picks the first stream
/// whose BOS page starts with the wanted packet; pages of every other stream are skipped. Chained
/// files: the caller stops at the selected stream's EOS page; later links are never read.
///
/// Thread: confined to one thread. Reading does not allocate after `selectStream`: the sync buffer
/// and the stream's packet storage are grown to their worst case up front (libogg otherwise grows
/// them on the first large page); it may block in `read(2)` for one chunk.
package final class OggPacketReader {
    /// Bytes requested from the source per read (16 KiB: a few reads a minute of speech, and a
    /// small resident sync buffer per speaker).
    package static let chunkSize = 16 * 1024
    /// Most packets that can complete on one page (one lacing value each).
    package static let maxPacketsPerPage = 255
    /// The largest Ogg page: 27-byte header, 255 lacing values, 255 * 255 body bytes.
    package static let maxPageSize = 27 + 255 + 255 * 255

    private let source: any ByteSource
    private let sync: UnsafeMutablePointer<ogg_sync_state>
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private let page: UnsafeMutablePointer<ogg_page>
    private let packet: UnsafeMutablePointer<ogg_packet>
    private let packets: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>
    private var streamInitialized = false
    private var lastPageNumber: Int64 = -1
    private var syncLossesAtLastPage = 0

    /// True once the source returned its last byte (or failed).
    package private(set) var reachedEnd = false
    /// True if the source reported a read error (the data is treated as ending there).
    package private(set) var readFailed = false
    /// Times libogg lost sync and skipped bytes: a page that failed its CRC check, or bytes that are
    /// not a page. Consecutive bad pages count once.
    package private(set) var syncLosses = 0
    /// The serial number of the selected stream.
    package private(set) var serial: Int32 = 0

    // The current page of the selected stream (valid after `nextPage()` returned true).
    /// Packets that completed on the current page, in order. Valid until the next `nextPage()`.
    package private(set) var packetCount = 0
    /// Granule position of the current page (-1: no packet completes on it).
    package private(set) var granulePosition: Int64 = -1
    /// The current page has the end-of-stream flag.
    package private(set) var isEndOfStream = false
    /// libogg reported a hole before packets of the current page (a page of this stream is missing).
    package private(set) var hole = false
    /// Pages of this stream missing right before the current one, by page sequence number.
    package private(set) var missingPages: Int64 = 0
    /// Sync losses since the previous page of the selected stream.
    package private(set) var syncLossesBeforePage = 0

    /// Creates a reader; nothing is read until the first call.
    package init(source: any ByteSource) {
        self.source = source
        sync = .allocate(capacity: 1)
        stream = .allocate(capacity: 1)
        page = .allocate(capacity: 1)
        packet = .allocate(capacity: 1)
        packets = .allocate(capacity: Self.maxPacketsPerPage + 1)
        packets.initialize(repeating: UnsafeRawBufferPointer(start: nil, count: 0))
        ogg_sync_init(sync)
        page.initialize(to: ogg_page())
        packet.initialize(to: ogg_packet())
        // Size the sync buffer once for a chunk plus the largest partial page it may still hold,
        // so `ogg_sync_buffer` never reallocates while the file is read (on the clock's thread).
        _ = ogg_sync_buffer(sync, Self.chunkSize + Self.maxPageSize + 4096)
    }

    deinit {
        if streamInitialized { ogg_stream_clear(stream) }
        ogg_sync_clear(sync)
        sync.deallocate()
        stream.deallocate()
        page.deallocate()
        packet.deallocate()
        packets.deallocate()
    }

    /// Packet `i` (0..<packetCount) of the current page. Valid until the next `nextPage()`.
    @inline(__always)
    package func packet(_ i: Int) -> UnsafeRawBufferPointer { packets[i] }

    /// What is at the start of the data: reads until at least 4 bytes are buffered (or the end) and
    /// returns how many bytes there are (up to 4) and whether they are the capture pattern `OggS`.
    package func leadingBytes() -> (count: Int, isCapturePattern: Bool) {
        while buffered < 4 && fill() {}
        let count = min(4, buffered)
        guard count == 4, let data = sync.pointee.data else { return (count, false) }
        let p = data + Int(sync.pointee.returned)
        return (count, p[0] == 0x4F && p[1] == 0x67 && p[2] == 0x67 && p[3] == 0x53)
    }

    /// Bytes given to libogg and not yet returned as pages (at the end: a partial page or junk).
    package var buffered: Int { Int(sync.pointee.fill - sync.pointee.returned) }

    /// How stream selection ended.
    package enum Selection: Equatable {
        /// The stream was found; its BOS page is the current page.
        case selected
        /// A non-BOS page (or the end) came before any wanted BOS page.
        case notFound(sawPage: Bool)
        /// libogg lost sync (bad CRC) before the wanted BOS page was found.
        case damaged
    }

    /// Reads the BOS pages at the start of the file (RFC 3533 §4: all BOS pages of a multiplexed
    /// stream come first) and selects the first logical stream whose first packet satisfies
    /// `isWanted` (given the body of the BOS page, which starts with that packet).
    package func selectStream(where isWanted: (UnsafeRawBufferPointer) -> Bool) -> Selection {
        var sawPage = false
        while true {
            let result = nextRawPage()
            if result < 0 { return .damaged }
            if result == 0 { return .notFound(sawPage: sawPage) }
            sawPage = true
            guard ogg_page_bos(page) != 0 else { return .notFound(sawPage: true) }
            let body = UnsafeRawBufferPointer(start: page.pointee.body, count: Int(page.pointee.body_len))
            guard isWanted(body) else { continue }
            serial = ogg_page_serialno(page)
            ogg_stream_init(stream, serial)
            streamInitialized = true
            reserveStreamStorage()
            takeCurrentPage()
            return .selected
        }
    }

    /// Advances to the next page of the selected stream and collects the packets that complete on
    /// it. Returns false at the end of the data. Pages of other streams are skipped.
    package func nextPage() -> Bool {
        precondition(streamInitialized, "selectStream first")
        while true {
            let result = nextRawPage()
            if result == 0 { return false }
            if result < 0 { continue }
            guard ogg_page_serialno(page) == serial, ogg_page_bos(page) == 0 else { continue }
            if takeCurrentPage() { return true }
        }
    }

    /// Next page from the sync layer: 1 = a page is in `page`, -1 = sync lost (bytes skipped),
    /// 0 = the data has ended.
    private func nextRawPage() -> Int {
        while true {
            let r = ogg_sync_pageout(sync, page)
            if r > 0 { return 1 }
            if r < 0 {
                syncLosses += 1
                return -1
            }
            if !fill() { return 0 }
        }
    }

    /// Reads one chunk into libogg's buffer. False at the end of the data (or on a read error).
    private func fill() -> Bool {
        guard !reachedEnd else { return false }
        guard let buffer = ogg_sync_buffer(sync, Self.chunkSize) else {
            reachedEnd = true
            return false
        }
        let n = source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Self.chunkSize))
        guard n > 0 else {
            reachedEnd = true
            readFailed = n < 0
            return false
        }
        ogg_sync_wrote(sync, n)
        return true
    }

    /// Grows libogg's packet storage to hold the largest page now, not later on the clock's thread:
    /// submits a synthetic maximal page (one unfinished packet of 255 * 255 bytes) and resets the
    /// stream state, which keeps its storage (`ogg_stream_reset` frees nothing).
    private func reserveStreamStorage() {
        let headerSize = 27 + 255
        let bodySize = 255 * 255
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: headerSize + bodySize)
        defer { bytes.deallocate() }
        bytes.initialize(repeating: 0, count: headerSize + bodySize)
        for (i, b) in [UInt8]([0x4F, 0x67, 0x67, 0x53]).enumerated() { bytes[i] = b }
        for i in 6..<14 { bytes[i] = 0xFF }  // granule -1: no packet completes
        for i in 0..<4 { bytes[14 + i] = UInt8(truncatingIfNeeded: UInt32(bitPattern: serial) >> (8 * UInt32(i))) }
        bytes[26] = 255
        for i in 27..<headerSize { bytes[i] = 255 }
        var synthetic = ogg_page(
            header: bytes, header_len: headerSize, body: bytes + headerSize, body_len: bodySize)
        _ = ogg_stream_pagein(stream, &synthetic)
        ogg_stream_reset(stream)
    }

    /// Submits `page` to the stream and drains its packets. False if libogg refused the page.
    @discardableResult
    private func takeCurrentPage() -> Bool {
        let number = Int64(ogg_page_pageno(page))
        missingPages = lastPageNumber >= 0 && number > lastPageNumber + 1 ? number - lastPageNumber - 1 : 0
        syncLossesBeforePage = syncLosses - syncLossesAtLastPage
        guard ogg_stream_pagein(stream, page) == 0 else { return false }
        lastPageNumber = number
        syncLossesAtLastPage = syncLosses
        granulePosition = ogg_page_granulepos(page)
        isEndOfStream = ogg_page_eos(page) != 0
        hole = missingPages > 0
        packetCount = 0
        while true {
            let r = ogg_stream_packetout(stream, packet)
            if r == 0 { break }
            if r < 0 {
                hole = true
                continue
            }
            guard packetCount < Self.maxPacketsPerPage + 1 else { continue }
            packets[packetCount] = UnsafeRawBufferPointer(
                start: packet.pointee.packet, count: Int(packet.pointee.bytes))
            packetCount += 1
        }
        return true
    }
}
