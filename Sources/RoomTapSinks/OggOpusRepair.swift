import COgg
import Glibc

/// Repairs an Ogg Opus file (RFC 7845) that a killed recorder or a full disk left
/// (``OggOpusFileEncoder``): libogg finds the pages (`ogg_sync_pageseek`: whole pages whose CRC
/// holds), the file is cut after the last whole page, and that page is marked end-of-stream (its
/// CRC set again by `ogg_page_checksum_set`). Its granule position, less OpusHead's pre-skip, is
/// the length a decoder returns (RFC 7845 §4), so `opusdec` plays every whole page and stops
/// cleanly. Pages in the middle are never touched; a file that already ends with a whole
/// end-of-stream page is left as it is (a second repair changes nothing).
///
/// Thread: any; blocks on the file system. Not for a file that is still being written.
public enum OggOpusRepair {
    /// What the repair did; samples are per channel at 48 kHz (Opus's decoding rate).
    public static func repair(path: String) throws(WAVError) -> WAVRepair.Report {
        let file = try PosixFile.open(path: path, forUpdate: true)
        defer { file.close() }
        let size = try file.size()
        var sync = ogg_sync_state()
        ogg_sync_init(&sync)
        defer { ogg_sync_clear(&sync) }

        /// A whole page: where it starts, its header length, and what it says.
        struct Page {
            var offset: Int64
            var headerLength: Int
            var length: Int
            var granule: Int64
            var isEndOfStream: Bool
        }
        var pages: [Page] = []
        var preSkip: Int64?
        var offset: Int64 = 0
        var readAt: Int64 = 0
        var page = ogg_page()
        scan: while true {
            let n = ogg_sync_pageseek(&sync, &page)
            if n > 0 {
                if pages.isEmpty {
                    // The first page holds OpusHead alone: "OpusHead", version, channels, pre-skip.
                    let body = UnsafeRawBufferPointer(start: page.body, count: page.body_len)
                    guard body.count >= 19, body.prefix(8).elementsEqual("OpusHead".utf8) else {
                        throw WAVError(path: path, message: "is not an Ogg Opus file (no OpusHead)", kind: .notAWAV)
                    }
                    preSkip = Int64(body[10]) | Int64(body[11]) << 8
                }
                pages.append(
                    Page(
                        offset: offset, headerLength: page.header_len, length: Int(n),
                        granule: ogg_page_granulepos(&page), isEndOfStream: ogg_page_eos(&page) != 0))
                offset += Int64(n)
                continue
            }
            if n < 0 {  // bytes that are no page (damage): skipped, kept in the file
                offset += Int64(-n)
                continue
            }
            guard readAt < size else { break scan }
            let chunk = try file.read(at: readAt, count: Int(min(65_536, size - readAt)))
            guard !chunk.isEmpty, let buffer = ogg_sync_buffer(&sync, chunk.count) else { break scan }
            chunk.withUnsafeBytes {
                UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
            }
            ogg_sync_wrote(&sync, chunk.count)
            readAt += Int64(chunk.count)
        }
        guard let preSkip, let last = pages.last else {
            throw WAVError(path: path, message: "is not an Ogg Opus file (no Ogg page)", kind: .notAWAV)
        }
        // The length: the last granule position a page states (-1: no packet ends on that page).
        let granule = pages.last(where: { $0.granule >= 0 })?.granule ?? 0
        let samples = max(0, granule - preSkip)
        let end = last.offset + Int64(last.length)
        guard end < size || !last.isEndOfStream else {
            return WAVRepair.Report(
                path: path, samplesBefore: samples, samplesStated: samples, samplesAfter: samples, bytesTrimmed: 0,
                changed: false)
        }
        if end < size { try file.truncate(to: end) }
        if !last.isEndOfStream {
            var bytes = try file.read(at: last.offset, count: last.length)
            bytes[5] |= 0x04  // header_type: end of stream
            // The CRC covers the whole page with its own field zeroed; libogg sets it.
            bytes.withUnsafeMutableBufferPointer { all in
                var marked = ogg_page()
                marked.header = all.baseAddress!
                marked.header_len = last.headerLength
                marked.body = all.baseAddress! + last.headerLength
                marked.body_len = last.length - last.headerLength
                ogg_page_checksum_set(&marked)
            }
            try file.write(Array(bytes[0..<last.headerLength]), at: last.offset)
        }
        return WAVRepair.Report(
            path: path, samplesBefore: samples, samplesStated: samples, samplesAfter: samples,
            bytesTrimmed: Int(size - end), changed: true)
    }
}
