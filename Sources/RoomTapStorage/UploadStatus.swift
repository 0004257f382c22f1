import Foundation

/// What of a recording directory is in object storage, from its ``UploadJournal`` and the files
/// on disk: what room.json's `upload` and `roomtap status DIR` show. `uploaded` are the files the
/// journal holds as verified; `failed` those whose last try failed (with the error line);
/// `pending` every other file that would be uploaded (``RecordingUploader/localFiles()``: a file
/// never tried, one a killed run left half-way). room.json itself is never listed: it describes
/// the others and goes up last.
///
/// A value; any thread.
public struct UploadStatus: Sendable, Equatable {
    public struct Failure: Sendable, Equatable {
        public let file: String
        public let error: String
    }

    /// `s3://BUCKET/PREFIX`, nil when nothing was ever uploaded (no journal).
    public var destination: String?
    public var uploaded: [String] = []
    public var pending: [String] = []
    public var failed: [Failure] = []

    /// Everything is up and verified.
    public var isComplete: Bool { pending.isEmpty && failed.isEmpty }

    /// The status of `localFiles` (relative paths) per `journal`.
    public init(journal: UploadJournal?, localFiles: [String]) {
        destination = journal?.destination
        var seen = Set<String>()
        for (file, entry) in (journal?.files ?? [:]).sorted(by: { $0.key < $1.key }) where file != "room.json" {
            seen.insert(file)
            switch entry.state {
            case .uploaded: uploaded.append(file)
            case .failed: failed.append(Failure(file: file, error: entry.error ?? "failed"))
            case .pending: pending.append(file)
            }
        }
        pending += localFiles.filter { $0 != "room.json" && !seen.contains($0) }
        pending.sort()
    }

    /// The status of `directory` as its journal and files say (the files as ``RecordingUploader``
    /// would pick them).
    public static func of(directory: String) -> UploadStatus {
        let uploader = RecordingUploader(
            client: S3Client(
                configuration: S3Configuration(credentials: S3Credentials(accessKeyID: "", secretAccessKey: ""))),
            directory: directory, destination: S3Location(bucket: "-", prefix: ""))
        return UploadStatus(
            journal: UploadJournal.read(directory: directory), localFiles: (try? uploader.localFiles()) ?? [])
    }
}
