import Foundation
import RoomTapAll

extension RoomReport {
    /// room.json's `sora`: the Sora recording a `--sora-recording` room was made from, its ids, and
    /// for every connection and file where it was placed, by what and how precisely, and what was
    /// wrong (docs/RECORDINGS-IN.md).
    struct SoraSection: Codable {
        /// The folder as given (an `s3://` URL, or a path).
        var folder: String
        var report: String?
        var recordingID: String?
        var channelID: String?
        var sessionID: String?
        /// The recording's start (room time 0) on the wall clock, when the JSONs say, and from
        /// where: `report` (its start_timestamp) or `archives` (the earliest archive's
        /// start_timestamp less its start_time_offset).
        var startTimestamp: String?
        var startFrom: String?
        var problems: [String]?
        var connections: [Connection]

        struct Connection: Codable {
            /// The track (nil for a connection without audio).
            var track: String?
            var connectionID: String
            var clientID: String?
            var sessionID: String?
            var audio: Bool
            var problems: [String]?
            var files: [File]
        }

        struct File: Codable {
            var json: String
            var media: String
            /// `archive` or `split`.
            var role: String
            var splitIndex: Int?
            /// `start_timestamp`, `start_time_offset`, `start_time_offset+previous_split` or `none`.
            var placedBy: String?
            var precisionSeconds: Double?
            /// Room samples of its first played sample (its place plus the container's start), and
            /// the samples it plays; when its audio was read.
            var offsetSamples: Int64?
            var offsetSeconds: Double?
            var durationSamples: Int64?
            var used: Bool
            var cut: Bool?
            var problem: String?
            var note: String?
        }

        init(_ planned: RecordingPlan.SoraPlanned) {
            let recording = planned.recording
            folder = planned.given
            report = recording.reportName
            recordingID = recording.recordingID
            channelID = recording.channelID
            sessionID = recording.sessionID
            if let origin = recording.originMicroseconds {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime]
                let seconds = origin >= 0 ? origin / 1_000_000 : (origin - 999_999) / 1_000_000
                let whole = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
                startTimestamp = whole.dropLast() + String(format: ".%06lldZ", origin - seconds * 1_000_000)
                startFrom = recording.originFromReport ? "report" : "archives"
            }
            problems = recording.problems.isEmpty ? nil : recording.problems
            connections = recording.connections.map { connection in
                Connection(
                    track: planned.trackNames[connection.connectionID], connectionID: connection.connectionID,
                    clientID: connection.metadata?.clientID, sessionID: connection.metadata?.sessionID,
                    audio: connection.hasAudio, problems: connection.problems.isEmpty ? nil : connection.problems,
                    files: connection.files.map { file in
                        var index: Int?
                        if case .split(let n) = file.role { index = n }
                        return File(
                            json: file.json, media: file.media, role: index == nil ? "archive" : "split",
                            splitIndex: index, placedBy: file.placement?.method.rawValue,
                            precisionSeconds: file.placement?.precisionSeconds, offsetSamples: file.offsetSamples,
                            offsetSeconds: file.offsetSamples.map { Double($0) / 48_000 },
                            durationSamples: file.durationSamples, used: file.used, cut: file.isCut ? true : nil,
                            problem: file.problem, note: file.note ?? file.placement?.note)
                    })
            }
        }
    }
}

extension RoomReport.RecordingStatistics {
    /// The counters of every piece of a Sora track, summed.
    init(_ source: SegmentedRecordingSource) {
        let all = source.pieces.map(\.statistics)
        packets = all.reduce(0) { $0 + $1.packets }
        lost = all.reduce(0) { $0 + $1.lost }
        recoveredByFEC = all.reduce(0) { $0 + $1.recoveredByFEC }
        concealedMs = all.reduce(0) { $0 + $1.concealedSamples } / 48
        duplicates = all.reduce(0) { $0 + $1.duplicates }
        reordered = all.reduce(0) { $0 + $1.reordered }
        restarts = all.reduce(0) { $0 + $1.restarts }
        skipped = all.reduce(0) { $0 + $1.invalid + $1.overflow }
    }
}
