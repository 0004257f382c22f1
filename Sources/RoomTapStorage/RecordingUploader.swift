import Foundation

/// Uploads a recording directory (finished, killed or repaired) to `s3://BUCKET/PREFIX`: every
/// regular file under it goes to `PREFIX/<its relative path>` (symbolic links, hidden files,
/// `*.part`/`*.tmp` and the journal itself stay local), `room.json` last, so a reader that sees
/// room.json in the bucket sees the audio it describes.
///
/// Idempotent: a file whose object is already there with the same size and SHA-256 (HEAD) is not
/// sent again; a second run over an uploaded directory uploads nothing. Progress is kept in
/// ``UploadJournal`` (`DIR/upload-journal.json`) after every file. At the end a listing of the
/// prefix confirms every file is there with its size; only then, with `deleteLocal`, are the
/// verified files removed from the disk (a file that failed, or is not in the listing, is kept).
///
/// A failure no other file can fix (a refused signature, an unknown key, no such bucket, access
/// denied) stops the run at once with that error; other failures are recorded per file and the
/// run goes on. Local files are never changed except by `deleteLocal`.
///
/// Thread: the caller's (blocking); one uploader per directory at a time.
public struct RecordingUploader: Sendable {
    public struct Options: Sendable {
        /// Remove each local file once its upload is verified by the final listing.
        public var deleteLocal = false
        /// Relative paths (or their first component, e.g. `segments`) not to upload.
        public var excluded: Set<String> = []
        /// Called on the caller's thread just before room.json goes up (last), with the status of
        /// every other file, so room.json can say what is uploaded (`record` and `roomtap upload`
        /// write its `upload`). Not called when the directory has no room.json or the run stopped.
        public var beforeRoomJSON: (@Sendable (UploadStatus) -> Void)?
        public init(
            deleteLocal: Bool = false, excluded: Set<String> = [],
            beforeRoomJSON: (@Sendable (UploadStatus) -> Void)? = nil
        ) {
            self.deleteLocal = deleteLocal
            self.excluded = excluded
            self.beforeRoomJSON = beforeRoomJSON
        }
    }

    /// What a run did.
    public struct Summary: Sendable {
        /// Files sent in this run.
        public var uploaded: [String] = []
        /// Files already there and verified (not sent again).
        public var alreadyThere: [String] = []
        /// Files that could not be uploaded, with the error line.
        public var failed: [(file: String, error: String)] = []
        /// Local files removed (deleteLocal).
        public var deletedLocal: [String] = []
        /// Bytes sent in this run.
        public var bytesSent: Int64 = 0
        /// The journal as written last.
        public var journal: UploadJournal
    }

    public let client: S3Client
    public let directory: String
    public let destination: S3Location
    public let options: Options

    public init(client: S3Client, directory: String, destination: S3Location, options: Options = Options()) {
        self.client = client
        self.directory = directory
        self.destination = destination
        self.options = options
    }

    /// Runs the upload. `progress` gets one line per file (`uploaded alice.wav (2.1 MB)`).
    /// Throws the first fatal ``S3Error`` (the journal is written first), or a local error when
    /// the directory cannot be read.
    public func run(progress: (String) -> Void = { _ in }) throws(S3Error) -> Summary {
        var journal = UploadJournal.read(directory: directory) ?? UploadJournal(destination: destination.description)
        if journal.destination != destination.description {
            journal = UploadJournal(destination: destination.description)  // a new destination: start over
        }
        var summary = Summary(journal: journal)
        let files = try localFiles()
        try client.checkBucket(destination.bucket)
        for file in files {
            let path = directory + "/" + file
            let key = destination.key(for: file)
            if file == "room.json", let hook = options.beforeRoomJSON {
                hook(UploadStatus(journal: journal, localFiles: files))
            }
            let digests: FileDigests
            do { digests = try FileDigests.of(path: path) } catch {
                journal.files[file] = .init(state: .failed, size: 0, sha256: "", error: error.description)
                summary.failed.append((file, error.description))
                try journal.write(directory: directory)
                continue
            }
            let sha = digests.sha256.hex
            do throws(S3Error) {
                if let object = try client.head(bucket: destination.bucket, key: key), object.size == digests.length,
                    object.sha256 == sha
                {
                    journal.files[file] = .init(state: .uploaded, size: digests.length, sha256: sha)
                    summary.alreadyThere.append(file)
                    continue
                }
                journal.files[file] = .init(state: .pending, size: digests.length, sha256: sha)
                try journal.write(directory: directory)
                let object = try client.upload(file: path, bucket: destination.bucket, key: key)
                guard object.size == digests.length, object.sha256 == nil || object.sha256 == sha else {
                    throw S3Error(.integrity, "\(key): the store holds other bytes than \(file)")
                }
                // The file may have grown while it went up (a live room): what was verified is the object.
                journal.files[file] = .init(state: .uploaded, size: object.size, sha256: object.sha256 ?? sha)
                summary.uploaded.append(file)
                summary.bytesSent += object.size
                progress("uploaded \(file) (\(Self.megabytes(object.size)))")
            } catch {
                journal.files[file] = .init(state: .failed, size: digests.length, sha256: sha, error: error.description)
                summary.failed.append((file, error.description))
                try journal.write(directory: directory)
                if error.isFatal {
                    summary.journal = journal
                    throw error
                }
                progress("failed \(file): \(error.description)")
                continue
            }
            try journal.write(directory: directory)
        }
        // The listing confirms every file the journal holds as uploaded (this run's and earlier ones').
        let listed = Dictionary(
            try client.list(
                bucket: destination.bucket, prefix: destination.prefix.isEmpty ? "" : destination.prefix + "/"
            )
            .map { ($0.key, $0.size) }, uniquingKeysWith: { a, _ in a })
        for (file, entry) in journal.files where entry.state == .uploaded {
            guard listed[destination.key(for: file)] == entry.size else {
                let error = "\(destination.key(for: file)) is not in the bucket's listing with \(entry.size) bytes"
                journal.files[file]?.state = .failed
                journal.files[file]?.error = error
                summary.failed.append((file, error))
                continue
            }
        }
        if options.deleteLocal {
            for file in files {
                guard let entry = journal.files[file], entry.state == .uploaded else { continue }
                // Only the bytes that were verified: a file changed since is kept.
                let path = directory + "/" + file
                guard let now = try? FileDigests.of(path: path), now.length == entry.size,
                    now.sha256.hex == entry.sha256
                else { continue }
                if unlink(path) == 0 {
                    journal.files[file]?.deletedLocal = true
                    summary.deletedLocal.append(file)
                }
            }
        }
        try journal.write(directory: directory)
        summary.journal = journal
        return summary
    }

    /// The files to upload, relative to the directory, room.json last.
    public func localFiles() throws(S3Error) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else {
            throw S3Error(.local, "cannot read the directory \(directory)")
        }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            let top = relative.split(separator: "/").first.map(String.init) ?? relative
            if name.hasPrefix(".") || options.excluded.contains(relative) || options.excluded.contains(top) {
                if (walker.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory { walker.skipDescendants() }
                continue
            }
            guard (walker.fileAttributes?[.type] as? FileAttributeType) == .typeRegular else { continue }
            if relative == UploadJournal.fileName || name.hasSuffix(".part") || name.hasSuffix(".tmp") { continue }
            files.append(relative)
        }
        guard FileManager.default.fileExists(atPath: directory) else {
            throw S3Error(.local, "\(directory) does not exist")
        }
        return files.sorted { a, b in
            let (ra, rb) = (a == "room.json", b == "room.json")
            return ra != rb ? rb : a < b
        }
    }

    static func megabytes(_ bytes: Int64) -> String {
        bytes >= 1_000_000
            ? String(format: "%.1f MB", Double(bytes) / 1e6) : String(format: "%.1f kB", Double(bytes) / 1e3)
    }
}
