import RoomTapContainer
import RoomTapCore
import RoomTapRTP

/// The fuzz target's exercise of the Sora recording readers (`roomtap-fuzz`, `make fuzz`): the
/// bytes as an archive JSON, a report, an RFC 3339 time and a file name, then as the JSONs of a
/// whole folder (every JSON, the report only, the archives only; media a short stream in memory),
/// whose tracks are played as the room clock would. It traps when an invariant fails: a file
/// before the recording's start, pieces of a track out of order or overlapping, a track ending
/// before its audio, audio outside a track's pieces, a silent frame holding samples.
///
/// Thread: pure, any thread.
package enum SoraFuzz {
    /// Audio rendered per track at most (5 s: the pieces in memory are 1.2 s long).
    public static let maxRenderedSamples: Int64 = 48_000 * 5

    /// A folder with every kind of file, two connections.
    static let names = [
        "report-R1.json", "archive-A.json", "archive-A.webm", "split-archive-A_0001.json", "split-archive-A_0001.webm",
        "split-archive-A_0003.json", "split-archive-A_0003.mp4", "split-archive-end-A.json", "archive-B.json",
        "archive-B.mp4",
    ]
    static let validArchive =
        Array(
            #"{"connection_id":"A","client_id":"alice","format":"webm","audio":true,"start_time_offset":1,"#.utf8)
        + Array(#""start_timestamp":"2025-01-01T00:00:01.250000Z","stop_time_offset":3}"#.utf8)
    static let validReport =
        Array(
            #"{"recording_id":"R1","archives":[{"connection_id":"A","metadata_filename":"archive-A.json","#.utf8)
        + Array(
            #""split_last_index":"0003"},{"connection_id":"B"}],"failed_archives":[{"filename":"archive-C.webm"}]}"#
                .utf8)

    /// A stream of 50 packets of 20 ms (Opus TOC 0xF8: CELT fullband, one 20 ms frame) with a gap.
    static let stream: RecordedRTPStream = {
        var bytes: [UInt8] = []
        var packets: [RecordedRTPStream.Packet] = []
        for n in 0..<50 {
            let start = bytes.count
            bytes += [0xF8, 0xFF, 0xFE, UInt8(n)]
            let timestamp = UInt32(n * 960 + (n >= 25 ? 9_600 : 0))
            packets.append(.init(sequence: UInt16(n), timestamp: timestamp, payload: start..<bytes.count))
        }
        return RecordedRTPStream(bytes: bytes, packets: packets, firstPacketMicroseconds: nil, preSkip: 312)
    }()

    package static func exercise(_ bytes: UnsafeRawBufferPointer, renderLimit: Int64 = maxRenderedSamples) {
        let array = Array(bytes)
        let archive = try? SoraArchiveMetadata.parse(bytes)
        let report = try? SoraRecordingReport.parse(bytes)
        if let archive {
            let placed = SoraPlacement.place(
                archive, origin: report?.startTimestamp?.microseconds ?? 1_735_689_600_000_000)
            check(placed.samples >= 0, "a file before the recording's start")
        }
        if let time = RFC3339Timestamp(String(decoding: array.prefix(64), as: UTF8.self)) {
            check((1...18).contains(time.fractionDigits) || time.fractionDigits == 0, "fraction digits")
        }
        if let name = SoraFileName(String(decoding: array.prefix(300), as: UTF8.self)) {
            check(!name.connectionID.contains("/"), "a connection id with a directory")
        }
        let container = ContainerRecording(
            format: "matroska,webm", tracks: [.init(title: nil, index: 0, stream: stream, startSamples: 7)],
            wallClockMicroseconds: nil, isDamaged: array.first.map { $0 & 1 == 1 } ?? false)
        let folder = SoraRecording.Folder(names: names)
        for variant in 0..<3 {
            let json = { (name: String) -> [UInt8]? in
                switch variant {
                case 0: array
                case 1: name.hasPrefix("report-") ? array : validArchive
                default: name.hasPrefix("report-") ? validReport : array
                }
            }
            let media = { (name: String) -> SoraRecording.MediaResult in
                name.hasSuffix(".mp4") && array.count % 3 == 0 ? .missing : .read(container)
            }
            guard let recording = try? SoraRecording.read(directory: "fuzz", folder: folder, json: json, media: media)
            else { continue }
            for connection in recording.connections { play(connection, limit: renderLimit) }
        }
    }

    /// Checks a connection's pieces and renders its track.
    static func play(_ connection: SoraRecording.Connection, limit: Int64) {
        var previousEnd: Int64 = 0
        for segment in connection.segments {
            check(segment.offset >= 0, "a piece before the recording's start")
            check(segment.offset >= previousEnd, "pieces out of order or overlapping")
            check(segment.end >= segment.offset, "a piece ending before it starts")
            previousEnd = segment.end
        }
        check(connection.endSamples >= previousEnd, "a track ending before its audio")
        guard
            let source = SegmentedRecordingSource(
                segments: connection.segments.map { ($0.stream, $0.offset, $0.until) }, end: connection.endSamples)
        else { return }
        let frame = Int64(AudioFrame.samplesPerChannel)
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: Int(frame))
        defer { buffer.deallocate() }
        var roomSample: Int64 = 0
        while roomSample < min(source.endRoomSample, limit) {
            let status = source.render(into: buffer, at: roomSample)
            let covered = connection.segments.contains { $0.offset < roomSample + frame && $0.end > roomSample }
            check(status == .silence || covered, "audio outside the track's pieces")
            if status == .silence { check(buffer.allSatisfy { $0 == 0 }, "a silent frame holds samples") }
            roomSample += frame
        }
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("invariant failed: \(what)") }
    }
}
