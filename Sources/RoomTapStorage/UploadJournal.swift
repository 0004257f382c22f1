import Foundation
import RoomTapFiles
public import RoomTapJSON

/// What has gone up from a recording directory: `DIR/upload-journal.json`, rewritten (to a
/// temporary file, then renamed) after every change, so a killed upload leaves a journal that
/// the next `roomtap upload` resumes from. It holds no secret: the destination and, per file
/// (its path relative to DIR), `state` (`pending`, `uploaded`, `failed`), `size`, `sha256`,
/// the `error` of a failure and `deletedLocal` once `--delete-local` removed it.
///
/// Thread: one uploader at a time (the caller's thread).
public struct UploadJournal: Sendable, Equatable {
    public static let fileName = "upload-journal.json"

    public enum State: String, Sendable {
        case pending, uploaded, failed
    }

    public struct Entry: Sendable, Equatable {
        public var state: State
        public var size: Int64
        public var sha256: String
        public var error: String?
        public var deletedLocal = false
    }

    public var destination: String
    public var files: [String: Entry] = [:]

    public init(destination: String) { self.destination = destination }

    /// The journal in `directory`, or nil when there is none (or it cannot be read: it is only a
    /// cache of what the store says, so the uploader then asks the store).
    public static func read(directory: String) -> UploadJournal? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + fileName),
            let value = try? JSONValue(parsing: String(decoding: data, as: UTF8.self)),
            let destination = value["destination"]?.stringValue
        else { return nil }
        var journal = UploadJournal(destination: destination)
        for (name, entry) in value["files"]?.objectValue ?? [:] {
            guard let state = entry["state"]?.stringValue.flatMap(State.init(rawValue:)),
                let size = entry["size"]?.doubleValue, let sha = entry["sha256"]?.stringValue
            else { continue }
            journal.files[name] = Entry(
                state: state, size: Int64(size), sha256: sha, error: entry["error"]?.stringValue,
                deletedLocal: entry["deletedLocal"]?.boolValue ?? false)
        }
        return journal
    }

    /// Counts by state.
    public var counts: (uploaded: Int, pending: Int, failed: Int) {
        var c = (uploaded: 0, pending: 0, failed: 0)
        for entry in files.values {
            switch entry.state {
            case .uploaded: c.uploaded += 1
            case .pending: c.pending += 1
            case .failed: c.failed += 1
            }
        }
        return c
    }

    /// The journal as JSON (files in name order).
    public var json: JSONValue {
        var files: [String: JSONValue] = [:]
        for (name, entry) in self.files {
            var object: [String: JSONValue] = [
                "state": .string(entry.state.rawValue), "size": .number(Double(entry.size)),
                "sha256": .string(entry.sha256),
            ]
            if let error = entry.error { object["error"] = .string(error) }
            if entry.deletedLocal { object["deletedLocal"] = .bool(true) }
            files[name] = .object(object)
        }
        let c = counts
        return .object([
            "destination": .string(destination), "files": .object(files),
            "uploaded": .number(Double(c.uploaded)), "pending": .number(Double(c.pending)),
            "failed": .number(Double(c.failed)),
        ])
    }

    /// Writes the journal into `directory` atomically (``OutputFile/writeAtomically(path:bytes:overwrite:)``:
    /// never half-written, the old journal kept on failure). The uploader's thread.
    public func write(directory: String) throws(S3Error) {
        let path = directory + "/" + Self.fileName
        do {
            try OutputFile.writeAtomically(path: path, bytes: Array((json.jsonText + "\n").utf8), overwrite: true)
        } catch {
            throw S3Error(.local, error.description)
        }
    }
}
