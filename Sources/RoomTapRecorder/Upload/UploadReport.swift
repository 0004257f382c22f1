import Foundation
import RoomTapStorage

/// room.json's `upload`: where the recording goes and what of it is there (docs/STORAGE.md).
/// Written by `record --upload` and `roomtap upload` just before room.json itself goes up (so the
/// bucket's room.json says every other file is uploaded), and again locally when the upload
/// stopped (a store that is down: what is pending, what failed, the error). Deterministic (no
/// time in it): a second `roomtap upload` writes the same bytes and sends nothing.
struct UploadReport: Codable, Equatable {
    struct Failed: Codable, Equatable {
        var file: String
        var error: String
    }

    /// `s3://BUCKET/PREFIX`.
    var destination: String
    /// `complete`: every file (room.json aside, which goes up last) is uploaded and verified;
    /// `incomplete`: some are pending or failed (`roomtap upload DIR DESTINATION` resumes).
    var state: String
    /// The recording's files verified in the bucket (relative paths; segments are counted below).
    var uploaded: [String]
    /// Segment files verified in the bucket (`segments/<track>/...`), by the live upload or later.
    var segmentsUploaded: Int
    /// Files not uploaded yet (never tried, or left by a run that stopped).
    var pending: [String]
    /// Files whose last upload failed, with the error line.
    var failed: [Failed]
    /// Why the last run stopped before it went through the files (a store that is down).
    var error: String?

    init(_ status: UploadStatus, destination: String, segmentsUploadedLive: Int = 0, error: String? = nil) {
        self.destination = status.destination ?? destination
        let isSegment = { (file: String) in file.hasPrefix("segments/") }
        uploaded = status.uploaded.filter { !isSegment($0) }
        segmentsUploaded = status.uploaded.filter(isSegment).count + segmentsUploadedLive
        pending = status.pending
        failed = status.failed.map { Failed(file: $0.file, error: $0.error) }
        self.error = error
        state = status.isComplete && error == nil ? "complete" : "incomplete"
    }

    /// Puts `report` into `directory`'s room.json (rewritten atomically, the rest unchanged).
    /// Does nothing when there is no room.json or it is not a roomtap report (a recording killed
    /// before it wrote one); a write that fails is not an upload failure and is ignored.
    /// Segments counted earlier for the same destination (the live upload's) are kept: a later
    /// `roomtap upload` does not see the segments the recorder sent and removed.
    static func write(_ report: UploadReport, directory: String) {
        let path = directory + "/room.json"
        guard var room = try? RoomReport.read(from: path) else { return }
        var report = report
        if let earlier = room.upload, earlier.destination == report.destination {
            report.segmentsUploaded = max(report.segmentsUploaded, earlier.segmentsUploaded)
        }
        guard room.upload != report else { return }
        room.upload = report
        try? room.write(to: path, overwrite: true)
    }
}
