import Foundation
import RoomTapStorage

/// `roomtap upload DIR s3://BUCKET/PREFIX`: a recording's files to object storage, verified,
/// idempotent (see ``RecordingUploader``), with `--delete-local` removing only verified files.
enum UploadCommand {
    static let options: [OptionSpec] = [
        OptionSpec(
            "--delete-local", .flag,
            help: "Remove each local file once its upload is verified (size and\n"
                + "SHA-256, and the final listing). Default: keep everything."),
        OptionSpec(
            "--webhook", .value, "URL",
            help: "POST upload.done / upload.failed to URL, signed with\n"
                + "HMAC-SHA256 of the body keyed by $ROOMTAP_WEBHOOK_SECRET\n"
                + "(header X-Roomtap-Signature: sha256=HEX)."),
        OptionSpec("--quiet", short: "q", .flag, help: "No line per file; only errors."),
    ]

    static let helpIntro = """
        OVERVIEW: Upload a recording's directory to S3 (or an S3-compatible store).

        USAGE: roomtap upload DIR s3://BUCKET/PREFIX [--delete-local] [--webhook URL]

        Every file of DIR (a finished, killed or repaired recording) goes to PREFIX/<its path in
        DIR>, room.json last. Each upload carries its MD5 (checked by the store) and SHA-256, and
        is read back (HEAD) before it counts; a final listing confirms every file with its size.
        Running it again uploads nothing that is already there and verified. Progress is kept in
        DIR/upload-journal.json (uploaded, pending, failed per file), so an interrupted upload
        resumes. Credentials and endpoint come from the environment: AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION,
        AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (an S3-compatible store, path-style). See
        docs/STORAGE.md.


        """

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let positionals = args.positionals
        guard positionals.count == 2 else {
            throw UsageError(
                description: positionals.count < 2
                    ? "give the recording's directory and where it goes: roomtap upload DIR s3://BUCKET/PREFIX"
                    : "unexpected argument '\(positionals[2])'; roomtap upload takes DIR and s3://BUCKET/PREFIX",
                command: "upload")
        }
        let directory = positionals[0]
        let destination: S3Location
        do { destination = try S3Location(parsing: positionals[1]) } catch {
            throw UsageError(description: error.description, command: "upload")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw RuntimeError(
                description: "\(directory) is not a directory; give a recording's directory (record --out DIR)")
        }
        let environment = context.environment
        let webhook = try webhookSender(args.value("--webhook"), command: "upload", environment: environment)
        defer { webhook?.close() }
        let configuration: S3Configuration
        do { configuration = try S3Configuration.fromEnvironment(environment) } catch {
            throw RuntimeError(description: error.description)
        }
        let quiet = args.flag("--quiet")
        let uploader = RecordingUploader(
            client: S3Client(configuration: configuration), directory: directory, destination: destination,
            options: .init(
                deleteLocal: args.flag("--delete-local"),
                beforeRoomJSON: { status in
                    UploadReport.write(UploadReport(status, destination: destination.description), directory: directory)
                }))
        /// room.json says what did not go up (it stays local).
        func reportIncomplete(_ error: String?) {
            UploadReport.write(
                UploadReport(UploadStatus.of(directory: directory), destination: destination.description, error: error),
                directory: directory)
        }
        let summary: RecordingUploader.Summary
        do {
            summary = try uploader.run(progress: { line in if !quiet { console.error("roomtap: \(line)\n") } })
        } catch {
            if !error.isFatal { reportIncomplete(error.description) }
            webhook?.post(
                event: "upload.failed",
                body: ["destination": .string(destination.description), "error": .string(error.description)])
            throw RuntimeError(description: error.description)
        }
        if let first = summary.failed.first {
            reportIncomplete(nil)
            webhook?.post(
                event: "upload.failed",
                body: [
                    "destination": .string(destination.description), "error": .string(first.error),
                    "failed": .number(Double(summary.failed.count)),
                ])
            let more =
                summary.failed.count > 1
                ? " (and \(summary.failed.count - 1) more: see \(directory)/\(UploadJournal.fileName))" : ""
            throw RuntimeError(description: "\(first.file): \(first.error)\(more)")
        }
        let counts = summary.journal.counts
        webhook?.post(
            event: "upload.done",
            body: [
                "destination": .string(destination.description), "files": .number(Double(counts.uploaded)),
                "uploadedNow": .number(Double(summary.uploaded.count)), "bytesSent": .number(Double(summary.bytesSent)),
            ])
        console.print(
            "uploaded \(summary.uploaded.count) file(s) (\(summary.bytesSent) bytes), \(summary.alreadyThere.count) already there"
                + (summary.deletedLocal.isEmpty ? "" : ", \(summary.deletedLocal.count) removed locally")
                + "; \(counts.uploaded) file(s) verified in \(destination)")
    }

    /// The sender for `--webhook URL` (secret from `environment`'s ROOMTAP_WEBHOOK_SECRET), nil
    /// without one.
    static func webhookSender(
        _ url: String?, command: String, environment: [String: String]
    ) throws(UsageError) -> WebhookSender? {
        guard let url else { return nil }
        if let problem = WebhookSender.problem(with: url) { throw UsageError(description: problem, command: command) }
        return WebhookSender(url: url, secret: environment["ROOMTAP_WEBHOOK_SECRET"])
    }
}
