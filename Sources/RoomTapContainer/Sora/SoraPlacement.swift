import Foundation

/// Where a file of a Sora recording starts on the recording's timeline (48 kHz samples from the
/// recording's start), before the container's own timestamps place its packets.
///
/// Sora gives each file `start_time_offset`, whole seconds from the recording's start (all hisui
/// reads), and `start_timestamp`, its wall-clock start in RFC 3339 with a fraction. roomtap places
/// a file by its `start_timestamp` against the recording's start when both are known (to the
/// fraction's precision, microseconds as Sora writes it), else by `start_time_offset`:
/// - the recording's start (``origin(report:archives:)``) is the report's `start_timestamp` when it
///   has one; otherwise it is taken from the archive with the smallest `start_time_offset` that has
///   both fields (its `start_timestamp` minus its offset), so files placed by timestamps keep their
///   exact distances from each other and the whole is anchored to Sora's whole seconds;
/// - a timestamp more than ``maxDisagreementSeconds`` away from the file's own offset, or before
///   the recording's start, is not believed: the offset places the file, and the note says why.
///
/// Thread: pure, any thread.
public enum SoraPlacement {
    /// How a file was placed (room.json `sora.connections[].files[].placedBy`).
    public enum Method: String, Sendable, Equatable {
        /// `start_timestamp` against the recording's start: as precise as its fraction.
        case startTimestamp = "start_timestamp"
        /// `start_time_offset`: to the second.
        case startTimeOffset = "start_time_offset"
        /// A split piece placed by `start_time_offset` whose previous piece ends within that
        /// second: right after the previous piece, as a continuous recording plays.
        case afterPreviousSplit = "start_time_offset+previous_split"
        /// The JSON gives neither: at the recording's start (a warning says so).
        case none
    }

    /// A file's place.
    public struct Placed: Sendable, Equatable {
        /// Samples from the recording's start (never negative).
        public var samples: Int64
        public var method: Method
        /// The precision of what placed it, seconds (1 for whole seconds, 1e-6 for microseconds).
        public var precisionSeconds: Double
        /// Why a finer field was not used, when it was there but not believed.
        public var note: String?
    }

    /// A timestamp that disagrees with its file's whole-second offset by more than this is wrong.
    public static let maxDisagreementSeconds = 2.0

    /// The recording's start on the wall clock (µs since the epoch) and whether the report gave it;
    /// nil when no JSON has both a `start_timestamp` and a `start_time_offset` and the report none.
    public static func origin(
        report: SoraRecordingReport?, archives: [SoraArchiveMetadata]
    ) -> (microseconds: Int64, fromReport: Bool)? {
        if let start = report?.startTimestamp { return (start.microseconds, true) }
        let anchored = archives.compactMap { archive -> (offset: Double, timestamp: Int64)? in
            guard let offset = archive.startTimeOffset, let timestamp = archive.startTimestamp else { return nil }
            return (offset, timestamp.microseconds)
        }
        guard let anchor = anchored.min(by: { ($0.offset, $0.timestamp) < ($1.offset, $1.timestamp) }) else {
            return nil
        }
        return (anchor.timestamp - Int64((anchor.offset * 1_000_000).rounded()), false)
    }

    /// Where `archive`'s file starts, with `origin` the recording's start (µs since the epoch).
    public static func place(_ archive: SoraArchiveMetadata, origin: Int64?) -> Placed {
        let byOffset = archive.startTimeOffset.map {
            Placed(samples: Int64(($0 * 48_000).rounded()), method: .startTimeOffset, precisionSeconds: 1)
        }
        guard let origin, let timestamp = archive.startTimestamp else {
            return byOffset ?? Placed(samples: 0, method: .none, precisionSeconds: 1)
        }
        let (micros, overflow) = timestamp.microseconds.subtractingReportingOverflow(origin)
        let seconds = overflow ? .infinity : Double(micros) / 1_000_000
        let limit = SoraArchiveMetadata.maxOffsetSeconds
        var note: String?
        if seconds < 0 {
            note = "start_timestamp is before the recording's start"
        } else if seconds > limit {
            note = "start_timestamp is more than 48 hours after the recording's start"
        } else if let offset = archive.startTimeOffset, abs(seconds - offset) > maxDisagreementSeconds {
            note = String(
                format: "start_timestamp puts it at %.3f s, start_time_offset at %.0f s", seconds, offset)
        }
        if let note {
            var placed = byOffset ?? Placed(samples: 0, method: .none, precisionSeconds: 1)
            placed.note = note
            return placed
        }
        return Placed(
            samples: micros * 48 / 1000, method: .startTimestamp, precisionSeconds: timestamp.precisionSeconds)
    }

    /// Where `archive`'s file stops by its JSON (`stop_timestamp`, else `stop_time_offset`), in
    /// samples from the recording's start; nil when it says neither or says something impossible.
    public static func stop(_ archive: SoraArchiveMetadata, origin: Int64?) -> Int64? {
        let limit = Int64(SoraArchiveMetadata.maxOffsetSeconds) * 1_000_000
        if let origin, let timestamp = archive.stopTimestamp {
            let (micros, overflow) = timestamp.microseconds.subtractingReportingOverflow(origin)
            if !overflow, micros >= 0, micros <= limit { return micros * 48 / 1000 }
        }
        return archive.stopTimeOffset.map { Int64(($0 * 48_000).rounded()) }
    }
}
