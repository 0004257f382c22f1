import Foundation
import RoomTapAll
import RoomTapTestSupport
import Testing

/// Builds a folder in the shape Sora's recorder writes (hisui `docs/usage.md`, sora-archive-uploader
/// `finder.go`) from known audio: each file's media made by ffmpeg (libopus into WebM or MP4) from
/// a stretch of a source WAV, its JSON with the fields Sora's archive webhooks carry, and a
/// report. Times are given in samples from the recording's start (48 kHz), so a test knows to the
/// sample where each file's audio belongs.
struct SoraFolderBuilder {
    /// The recording's start on the wall clock (2026-12-01T10:00:00Z), µs since the epoch.
    static let origin: Int64 = 1_796_119_200_000_000

    let directory: URL
    let recordingID = "R7EXAMPLE0RECORDING00000000"
    var reportArchives: [[String: Any]] = []
    var failedArchives: [[String: Any]] = []

    init(_ directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The source audio of a sample speaker: its Ogg Opus decoded by ffmpeg, 48 kHz mono.
    static func source(_ speaker: String, in work: URL) throws -> (path: String, samples: [Int16]) {
        let wavPath = work.appendingPathComponent("\(speaker)-source.wav").path
        if !FileManager.default.fileExists(atPath: wavPath) {
            try ffmpeg(["-i", sample(speaker), "-ac", "1", "-ar", "48000", "-c:a", "pcm_s16le", wavPath])
        }
        return (wavPath, try WAVFile.readSamples(path: wavPath).samples)
    }

    /// RFC 3339 with microseconds for `micros` after ``origin``.
    static func timestamp(_ micros: Int64) -> String {
        let total = origin + micros
        let seconds = total / 1_000_000
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let whole = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
        return whole.dropLast() + String(format: ".%06lldZ", total - seconds * 1_000_000)
    }

    /// Encodes samples `range` of the source WAV at `sourcePath` into `name` (WebM or MP4 by its
    /// extension) with libopus.
    func encode(_ sourcePath: String, _ range: Range<Int>, to name: String) throws {
        try ffmpeg([
            "-i", sourcePath, "-af",
            "atrim=start_sample=\(range.lowerBound):end_sample=\(range.upperBound),"
                + "asetpts=PTS-STARTPTS", "-c:a", "libopus", "-b:a", "64k", "-ac", "1",
            directory.appendingPathComponent(name).path,
        ])
    }

    /// Writes `name` as JSON.
    func write(_ object: [String: Any], to name: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try data.write(to: directory.appendingPathComponent(name))
    }

    /// The archive JSON's fields for a file of `connection` from sample `start` for `length`
    /// samples; `timestamps: false` leaves the RFC 3339 fields out (whole seconds only).
    func archiveJSON(
        _ connection: String, client: String?, metadata: [String: Any]?, format: String, start: Int,
        length: Int, timestamps: Bool = true, media: String
    ) -> [String: Any] {
        var json: [String: Any] = [
            "recording_id": recordingID, "channel_id": "sora-room", "session_id": "SESSION0000000000000000000",
            "connection_id": connection, "format": format, "audio": true, "video": false,
            "audio_codec_type": "OPUS", "start_time_offset": start / 48_000,
            "stop_time_offset": (start + length) / 48_000, "filename": media,
            "created_at": Int(Self.origin / 1_000_000),
        ]
        if let client { json["client_id"] = client }
        if let metadata { json["metadata"] = metadata }
        if timestamps {
            json["start_timestamp"] = Self.timestamp(Int64(start) * 1000 / 48)
            json["stop_timestamp"] = Self.timestamp(Int64(start + length) * 1000 / 48)
        }
        return json
    }

    /// A connection's whole recording: `archive-<id>.json` and `.webm`/`.mp4` holding source
    /// samples `range`, starting `start` samples into the recording.
    @discardableResult
    mutating func single(
        _ connection: String, client: String? = nil, metadata: [String: Any]? = nil, format: String = "webm",
        source: String, _ range: Range<Int>, at start: Int, timestamps: Bool = true, writeMedia: Bool = true,
        listed: Bool = true
    ) throws -> String {
        let media = "archive-\(connection).\(format)"
        if writeMedia { try encode(source, range, to: media) }
        try write(
            archiveJSON(
                connection, client: client, metadata: metadata, format: format, start: start, length: range.count,
                timestamps: timestamps, media: media),
            to: "archive-\(connection).json")
        if listed {
            reportArchives.append([
                "connection_id": connection, "metadata_filename": "archive-\(connection).json", "filename": media,
            ])
        }
        return media
    }

    /// A connection's split recording: a piece per `(source range, start)`, then the split end.
    mutating func split(
        _ connection: String, client: String? = nil, format: String = "webm", source: String,
        pieces: [(range: Range<Int>, start: Int)], timestamps: Bool = true, listed: Bool = true
    ) throws {
        for (i, piece) in pieces.enumerated() {
            let base = "split-archive-\(connection)_\(String(format: "%04d", i + 1))"
            try encode(source, piece.range, to: "\(base).\(format)")
            var json = archiveJSON(
                connection, client: client, metadata: nil, format: format, start: piece.start,
                length: piece.range.count, timestamps: timestamps, media: "\(base).\(format)")
            json["split_index"] = String(format: "%04d", i + 1)
            try write(json, to: "\(base).json")
        }
        let first = pieces.first!
        let last = pieces.last!
        var end = archiveJSON(
            connection, client: client, metadata: nil, format: format, start: first.start,
            length: last.start + last.range.count - first.start, timestamps: timestamps, media: "")
        end["split_last_index"] = String(format: "%04d", pieces.count)
        end.removeValue(forKey: "filename")
        try write(end, to: "split-archive-end-\(connection).json")
        if listed {
            reportArchives.append(["connection_id": connection, "split_last_index": end["split_last_index"]!])
        }
    }

    /// `report-<recording_id>.json`; `startTimestamp` adds the report's own start (µs after
    /// ``origin``).
    func writeReport(splitOnly: Bool = false, startTimestamp: Int64? = nil) throws {
        var report: [String: Any] = [
            "recording_id": recordingID, "channel_id": "sora-room", "session_id": "SESSION0000000000000000000",
            "split_only": splitOnly, "archives": reportArchives, "failed_archives": failedArchives,
            "created_at": Int(Self.origin / 1_000_000),
        ]
        if let startTimestamp { report["start_timestamp"] = Self.timestamp(startTimestamp) }
        try write(report, to: "report-\(recordingID).json")
    }
}

/// How a track holds its source: the normalised correlation of `track[offset ..< offset + n]`
/// with `source[0 ..< n]`, and the lag (samples, within ±`search`) at which a loud 0.1 s of the
/// source correlates best with the track (0: exactly where it belongs).
func alignment(of source: ArraySlice<Int16>, in track: [Int16], at offset: Int, search: Int = 960) -> (
    correlation: Double, lag: Int
) {
    let n = min(source.count, track.count - offset)
    let base = source.startIndex
    func correlation(_ a: ArraySlice<Int16>, _ b: ArraySlice<Int16>) -> Double {
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for (x, y) in zip(a, b) {
            ab += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
    }
    let whole = correlation(source[base..<(base + n)], track[offset..<(offset + n)])
    // The loudest 0.1 s of the source (by energy, in 10 ms steps), away from the edges.
    let window = 4_800
    var best = (energy: -1.0, start: search)
    var start = search
    while start + window + search <= n {
        let energy = source[(base + start)..<(base + start + window)].reduce(0.0) { $0 + Double($1) * Double($1) }
        if energy > best.energy { best = (energy, start) }
        start += 480
    }
    var lag = (score: -2.0, lag: 0)
    let probe = source[(base + best.start)..<(base + best.start + window)]
    for l in -search...search {
        let from = offset + best.start + l
        guard from >= 0, from + window <= track.count else { continue }
        let score = correlation(probe, track[from..<(from + window)])
        if score > lag.score { lag = (score, l) }
    }
    return (whole, lag.lag)
}
