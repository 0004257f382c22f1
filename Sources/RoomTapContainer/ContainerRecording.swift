internal import CAVFormat
import Foundation
public import RoomTapRTP

/// The Opus audio tracks of a WebM, Matroska (`.mka`, `.mkv`) or MP4 file, demuxed by FFmpeg's
/// libavformat (only demuxed: the packets are decoded by libopus, as every other input's), each as
/// a ``RecordedRTPStream`` to play through the jitter buffer (``RecordedStreamSource``).
///
/// What MediaRecorder in browsers, Jitsi's multitrack recorder (one `.mka`, a track per
/// participant), LiveKit's track egress and `janus-pp-rec` write. Each track is placed on the
/// file's own timeline by its packets' timestamps: its first played sample (after the Opus
/// pre-skip, Matroska's `CodecDelay`, MP4's edit list) at ``Track/startSamples``, gaps between
/// packets as silence, the end trimmed where the container says (Matroska's `DiscardPadding`).
/// A file whose first timestamps are wall-clock (``wallClockMicroseconds``: the `creation_time`,
/// `DateUTC` or `started_at` tag) can be lined up with others (`--align wallclock`).
///
/// Thread: a value type; reading uses libavformat on the calling thread (any thread, control side).
public struct ContainerRecording: Sendable {
    /// One Opus audio track.
    public struct Track: Sendable {
        /// The track's name in the file (its `title` tag), if any.
        public let title: String?
        /// The stream index in the file.
        public let index: Int
        /// Its packets.
        public let stream: RecordedRTPStream
        /// Where its first played sample lies on the file's timeline (48 kHz samples from the
        /// file's time 0; never negative: a file whose tracks start before 0 is moved so the
        /// earliest starts at 0).
        public let startSamples: Int64

        /// A track as read (tests and the fuzz harnesses make them from bytes).
        package init(title: String?, index: Int, stream: RecordedRTPStream, startSamples: Int64) {
            self.title = title
            self.index = index
            self.stream = stream
            self.startSamples = startSamples
        }
    }

    /// The container as libavformat names it (`matroska,webm`, `mov,mp4,m4a,3gp,3g2,mj2`).
    public let format: String
    /// The Opus audio tracks, in file order.
    public let tracks: [Track]
    /// The wall-clock time of the file's time 0, µs since the Unix epoch, when a tag says
    /// (`creation_time`, `DateUTC`, `started_at`, on the file or, failing that, its first track).
    public let wallClockMicroseconds: Int64?
    /// True when reading stopped at damage, or the packets end more than 100 ms before the length
    /// the header declares (a cut file): what came before is kept.
    public let isDamaged: Bool

    /// A recording as read (tests and the fuzz harnesses make them from bytes).
    package init(format: String, tracks: [Track], wallClockMicroseconds: Int64?, isDamaged: Bool) {
        self.format = format
        self.tracks = tracks
        self.wallClockMicroseconds = wallClockMicroseconds
        self.isDamaged = isDamaged
    }

    /// True when `bytes` (the first 12 or more of a file) start like a container this reads: EBML
    /// (Matroska, WebM: `1A 45 DF A3`) or an ISO BMFF `ftyp` box (MP4).
    public static func looksLikeContainer(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return true }
        return bytes.count >= 8 && bytes[4..<8].elementsEqual(Array("ftyp".utf8))
    }

    /// Reads every Opus audio track of the file at `path`. One-line errors: not a container
    /// libavformat can read, no Opus audio in it (naming what is there).
    public static func read(path: String) throws(RecordingError) -> ContainerRecording {
        roomtap_av_log_set_level(AV_LOG_QUIET)
        var formatContext: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = roomtap_avformat_open_input(&formatContext, path)
        guard opened >= 0, let context = formatContext else {
            throw RecordingError(
                path: path,
                message: "cannot read the file as WebM, Matroska or MP4 (\(Self.message(opened))); "
                    + "check the file")
        }
        defer { roomtap_avformat_close_input(&formatContext) }
        let format = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"

        var wanted: [Int: Collector] = [:]
        var others: [String] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index], let parameters = stream.pointee.codecpar else {
                continue
            }
            let type = parameters.pointee.codec_type
            guard type == AVMEDIA_TYPE_AUDIO else { continue }
            guard parameters.pointee.codec_id == AV_CODEC_ID_OPUS else {
                others.append(String(cString: roomtap_avcodec_get_name(parameters.pointee.codec_id)))
                continue
            }
            let timeBase = stream.pointee.time_base
            let duration = stream.pointee.duration
            wanted[index] = Collector(
                title: tag("title", in: stream.pointee.metadata), timeBase: timeBase,
                preSkip: Self.preSkip(parameters.pointee),
                declaredTicks: duration != roomtap_av_nopts_value() && duration > 0 ? duration : nil)
        }
        guard !wanted.isEmpty else {
            let kind = format.hasPrefix("matroska") ? "Matroska/WebM" : format.hasPrefix("mov") ? "MP4" : format
            let what =
                others.isEmpty
                ? "without audio" : "with audio in \(Set(others).sorted().joined(separator: ", ")) but no Opus track"
            throw RecordingError(
                path: path, message: "a \(kind) file \(what); roomtap records Opus (convert with ffmpeg -c:a libopus)")
        }

        var packet = roomtap_av_packet_alloc()
        defer { roomtap_av_packet_free(&packet) }
        guard let packet else { throw RecordingError(path: path, message: "out of memory") }
        var damaged = false
        while true {
            let status = roomtap_av_read_frame(context, packet)
            if status == roomtap_averror_eof() { break }
            guard status >= 0 else {
                damaged = true
                break
            }
            defer { roomtap_av_packet_unref(packet) }
            let index = Int(packet.pointee.stream_index)
            guard wanted[index] != nil, let data = packet.pointee.data, packet.pointee.size > 0 else { continue }
            var pts = packet.pointee.pts
            if pts == roomtap_av_nopts_value() { pts = packet.pointee.dts }
            guard pts != roomtap_av_nopts_value() else { continue }
            var discard = 0
            var sideSize: Int = 0
            if let side = roomtap_av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &sideSize), sideSize >= 8 {
                // Skip samples (4 bytes LE: at the start), discard padding (4 bytes LE: at the end).
                discard = Int(side[4]) | Int(side[5]) << 8 | Int(side[6]) << 16 | Int(side[7]) << 24
            }
            wanted[index]!.add(
                UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)), pts: pts, discardPadding: discard)
        }

        // A file that ends well before the length its header declares was cut (a killed recorder).
        let declared = context.pointee.duration
        if !damaged, declared != roomtap_av_nopts_value(), declared > 0 {
            let end = wanted.values.map(\.endSamples).max() ?? 0
            if end + 4_800 < roomtap_av_rescale(declared, 1, 1_000_000, 1, 48_000) { damaged = true }
        }
        let indices = wanted.keys.sorted()
        let starts = indices.map { wanted[$0]!.startSamples }
        let shift = min(0, starts.min() ?? 0)
        var wall = wallClock(in: context.pointee.metadata)
        if wall == nil, let first = indices.first {
            wall = wallClock(in: context.pointee.streams[first]!.pointee.metadata)
        }
        let tracks = indices.map { index in
            let collected = wanted[index]!
            return Track(
                title: collected.title, index: index, stream: collected.stream(),
                startSamples: collected.startSamples - shift)
        }
        return ContainerRecording(format: format, tracks: tracks, wallClockMicroseconds: wall, isDamaged: damaged)
    }

    /// The Opus pre-skip of a track: its `OpusHead` (RFC 7845 §5.1, bytes 10–11, little-endian) in
    /// the extradata, else libavformat's `initial_padding`.
    static func preSkip(_ parameters: AVCodecParameters) -> Int {
        if let extra = parameters.extradata, parameters.extradata_size >= 19,
            UnsafeBufferPointer(start: extra, count: 8).elementsEqual(Array("OpusHead".utf8))
        {
            return Int(extra[10]) | Int(extra[11]) << 8
        }
        return Int(max(0, parameters.initial_padding))
    }

    /// The packets of one track as they are read.
    struct Collector {
        let title: String?
        let timeBase: AVRational
        let preSkip: Int
        var bytes: [UInt8] = []
        var packets: [RecordedRTPStream.Packet] = []
        /// The first packet's timestamp (time base units).
        var firstPTS: Int64?
        /// Where the next packet would start if none is missing (samples after the first).
        var expectedNext: Int64?
        var lastDiscard = 0

        /// The track's length as the container declares it (MP4's edit list), in time base ticks.
        let declaredTicks: Int64?

        init(title: String?, timeBase: AVRational, preSkip: Int, declaredTicks: Int64?) {
            self.title = title
            self.timeBase = timeBase
            self.preSkip = preSkip
            self.declaredTicks = declaredTicks
        }

        /// Samples (48 kHz) of `ticks` in the track's time base (exact for 1/1000 and 1/48000).
        func samples(_ ticks: Int64) -> Int64 {
            roomtap_av_rescale(ticks, timeBase.num, timeBase.den, 1, 48_000)
        }

        /// Appends a packet with timestamp `pts`. Timestamps hold only to the time base (Matroska's
        /// 1 ms): a packet that starts within one tick of where the one before it ended is placed
        /// right there, as a decoder plays it (so 20 ms packets stored at 13.5 ms rounded to 14
        /// play end to end); a larger gap is a gap (silence), an overlap a restart.
        mutating func add(_ data: UnsafeBufferPointer<UInt8>, pts: Int64, discardPadding: Int) {
            let first = firstPTS ?? pts
            firstPTS = first
            let start = bytes.count
            bytes += data
            var position = samples(pts - first)
            if let expected = expectedNext, abs(position - expected) <= tick { position = expected }
            let duration = RecordedRTPStream.samples(inOpusPacket: UnsafeRawBufferPointer(data)) ?? 0
            expectedNext = position + Int64(duration)
            packets.append(
                .init(
                    sequence: UInt16(truncatingIfNeeded: packets.count),
                    timestamp: UInt32(truncatingIfNeeded: position), payload: start..<bytes.count))
            lastDiscard = discardPadding
        }

        /// Where the track's last packet ends on the file's timeline (samples), before any trim.
        var endSamples: Int64 {
            guard let firstPTS else { return 0 }
            return samples(firstPTS) + (expectedNext ?? 0)
        }

        /// Samples of one tick of the time base (0 when it is finer than a sample).
        var tick: Int64 { samples(1) }

        /// Where the first played sample lies on the file's timeline: the first packet's
        /// timestamp plus the pre-skip in the time base (rounded as demuxers round it, so a
        /// Matroska track's first block at 0 ms plays at 0).
        var startSamples: Int64 {
            guard let firstPTS else { return 0 }
            let skip = roomtap_av_rescale(Int64(preSkip), 1, 48_000, timeBase.num, timeBase.den)
            return samples(firstPTS + skip)
        }

        func stream() -> RecordedRTPStream {
            let whole = RecordedRTPStream(
                bytes: bytes, packets: packets, firstPacketMicroseconds: nil, preSkip: preSkip)
            // The end: cut by the last packet's discard padding (Matroska) or the declared length (MP4).
            var length = whole.durationSamples - Int64(lastDiscard)
            if let declaredTicks { length = min(length, samples(declaredTicks)) }
            guard length < whole.durationSamples else { return whole }
            return RecordedRTPStream(
                bytes: bytes, packets: packets, firstPacketMicroseconds: nil, preSkip: preSkip, length: length)
        }
    }

    /// The value of `key` (case-insensitive) in `dictionary`.
    static func tag(_ key: String, in dictionary: OpaquePointer?) -> String? {
        guard let dictionary, let entry = roomtap_av_dict_get(dictionary, key), let value = entry.pointee.value else {
            return nil
        }
        return String(cString: value)
    }

    /// The wall-clock time a tag gives (`creation_time`, `DateUTC`, `date_utc`, `started_at`:
    /// ISO 8601, or µs/ms/s since the epoch as a number), µs since the Unix epoch.
    static func wallClock(in dictionary: OpaquePointer?) -> Int64? {
        for key in ["started_at", "creation_time", "DateUTC", "date_utc"] {
            guard let text = tag(key, in: dictionary) else { continue }
            if let micros = parseTime(text) { return micros }
        }
        return nil
    }

    /// ISO 8601 (`2026-12-01T03:00:00.123456Z`) or a number of s, ms or µs since the epoch.
    static func parseTime(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Double(trimmed), number.isFinite, number > 0 {
            if number > 1e14 { return Int64(number) }  // µs
            if number > 1e11 { return Int64(number * 1_000) }  // ms
            return Int64(number * 1_000_000)  // s
        }
        var fraction: Int64 = 0
        var plain = trimmed
        if let dot = trimmed.firstIndex(of: "."),
            let end = trimmed[dot...].firstIndex(where: { !$0.isNumber && $0 != "." })
        {
            let digits = String(trimmed[trimmed.index(after: dot)..<end].prefix(6))
            fraction = (Int64(digits) ?? 0) * Int64(pow(10.0, Double(6 - digits.count)))
            plain = String(trimmed[..<dot] + trimmed[end...])
        }
        let formatter = ISO8601DateFormatter()
        guard let date = formatter.date(from: plain) else { return nil }
        return Int64(date.timeIntervalSince1970) * 1_000_000 + fraction
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        roomtap_av_strerror(code, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
