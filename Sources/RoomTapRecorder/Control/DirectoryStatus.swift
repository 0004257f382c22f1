import Foundation
import RoomTapAll
import RoomTapStorage

/// `roomtap status DIR`: the recording in DIR, running or finished. A recorder recording to DIR
/// answers as `roomtap status --dir DIR` does; a finished (or killed) one is described from its
/// room.json (state, length, tracks). Both then say what of it is in object storage: uploaded,
/// pending, failed, from DIR/upload-journal.json and the files on disk (``UploadStatus``), with
/// the destination and the last run's error from room.json's `upload`.
///
/// Thread: the command's. Reads only; changes nothing in DIR.
enum DirectoryStatus {
    static func run(directory: String, _ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw RuntimeError(
                description: "\(directory) is not a directory; give a recording's directory (record --out DIR)")
        }
        let json = args.flag("--json")
        let environment = context.environment
        var live: JSONValue?
        if let recorder = try? RecorderChoice.recorder(recordingTo: directory, environment: environment) {
            let client = try ControlVerbs.connect(recorder.socket)
            do { live = try client.request(.status) } catch { throw RecorderChoice.failure(error, of: client) }
        }
        // A recorder holds DIR (its lock) but no recorder answered for it: stopped (SIGSTOP) or stuck;
        // room.json's "recording" would read as a room that is going on.
        if live == nil, let pid = RecorderLock.holder(of: directory) {
            let who = pid > 0 ? "the recorder pid \(pid)" : "the recorder"
            throw RuntimeError(
                description: "\(who) recording into \(directory) does not answer; it may be stopped (SIGSTOP, "
                    + "Ctrl-Z) or stuck: resume it\(pid > 0 ? " (kill -CONT \(pid))" : ""), or see roomtap list")
        }
        let room = try RoomReport.read(from: directory + "/room.json")
        let upload = report(directory: directory, saved: room?.upload)
        guard live != nil || room != nil || upload != nil else {
            throw RuntimeError(
                description: "\(directory) holds no recording (no room.json, no \(UploadJournal.fileName)) and no "
                    + "recorder records to it; give a recording's directory (record --out DIR)")
        }
        if json {
            var object: [String: JSONValue] = ["directory": .string(directory)]
            if let live { object["recorder"] = live }
            if let room {
                object["state"] = .string(room.state ?? "complete")
                object["durationSeconds"] = .number(room.durationSeconds)
                object["tracks"] = .array(room.tracks.map { .string($0.file) })
            }
            object["upload"] = upload.map(uploadJSON) ?? .null
            console.print(JSONValue.object(object).jsonText)
            return
        }
        var lines: [String] = []
        if let live {
            lines.append(ControlVerbs.statusText(live).trimmingCharacters(in: .newlines))
        } else if let room {
            lines.append("directory   \(directory)")
            lines.append(
                "room        \(room.state ?? "complete"), "
                    + String(format: "%.2f s", room.durationSeconds) + ", \(room.tracks.count) track(s)")
        }
        // A recorder that uploads says so itself (its segments); the journal comes at its end.
        if live?["upload"] == nil || upload != nil { lines += uploadLines(upload) }
        console.print(lines.joined(separator: "\n"))
    }

    /// The upload of `directory`: the journal and files as they are now, with room.json's
    /// destination, error and live segment count; nil when nothing says an upload was ever made.
    static func report(directory: String, saved: UploadReport?) -> UploadReport? {
        let status = UploadStatus.of(directory: directory)
        guard let destination = status.destination ?? saved?.destination else { return nil }
        var report = UploadReport(status, destination: destination, error: saved?.error)
        report.segmentsUploaded = max(report.segmentsUploaded, saved?.segmentsUploaded ?? 0)
        if status.destination == nil, let saved {
            // No journal (the store was down from the start): room.json's own account.
            report.uploaded = saved.uploaded
            report.failed = saved.failed
        }
        return report
    }

    static func uploadLines(_ upload: UploadReport?) -> [String] {
        guard let upload else { return ["upload      none (roomtap upload DIR s3://BUCKET/PREFIX sends it)"] }
        var lines = [
            "upload      \(upload.destination): \(upload.state) (\(upload.uploaded.count) uploaded, "
                + "\(upload.segmentsUploaded) segment(s), \(upload.pending.count) pending, \(upload.failed.count) failed)"
        ]
        if let error = upload.error { lines.append("last error  \(error)") }
        lines += upload.uploaded.map { "uploaded    \($0)" }
        lines += upload.pending.map { "pending     \($0)" }
        lines += upload.failed.map { "failed      \($0.file): \($0.error)" }
        return lines
    }

    static func uploadJSON(_ upload: UploadReport) -> JSONValue {
        var object: [String: JSONValue] = [
            "destination": .string(upload.destination), "state": .string(upload.state),
            "uploaded": .array(upload.uploaded.map(JSONValue.string)),
            "segmentsUploaded": .number(Double(upload.segmentsUploaded)),
            "pending": .array(upload.pending.map(JSONValue.string)),
            "failed": .array(
                upload.failed.map { .object(["file": .string($0.file), "error": .string($0.error)]) }),
        ]
        if let error = upload.error { object["error"] = .string(error) }
        return .object(object)
    }
}
