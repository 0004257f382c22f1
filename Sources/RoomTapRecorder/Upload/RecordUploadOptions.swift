import Foundation
import RoomTapStorage

/// `record --upload s3://BUCKET/PREFIX` and its companions (see docs/STORAGE.md).
struct RecordUploadOptions {
    var destination: S3Location
    /// Seconds of audio per segment object (--segment-seconds, default 10).
    var segmentSeconds = 10
    /// Keep the segment objects after the whole-room files are up (--upload-keep-segments).
    var keepSegments = false
    /// Remove each local file once its upload is verified (--upload-delete-local).
    var deleteLocal = false
    /// Upload the segments only; the room's files stay local and the segment objects stay in the
    /// bucket (--upload-segments-only: what `roomtap worker` gives its rooms, it uploads the joined room).
    var segmentsOnly = false

    static let section = "UPLOAD OPTIONS (S3; see docs/STORAGE.md)"

    static let options: [OptionSpec] = [
        OptionSpec(
            "--upload", .value, "s3://BUCKET/PREFIX", section: section,
            help: "Upload while recording: every --segment-seconds each track's new\n"
                + "audio goes up as PREFIX/segments/<track>/<first room sample>.wav;\n"
                + "at the end the room's files go to PREFIX/<file>, verified, and the\n"
                + "segments are removed. Credentials from AWS_* (as roomtap upload)."),
        OptionSpec(
            "--segment-seconds", .value, "N", section: section,
            help: "Seconds of audio per segment, 1-3600 (default 10)."),
        OptionSpec("--upload-keep-segments", .flag, section: section, help: "Keep the segment objects at the end."),
        OptionSpec(
            "--upload-segments-only", .flag, section: section,
            help: "Upload the segments only: the room's files stay local and the\n"
                + "segments stay in the bucket (roomtap worker gives its live rooms\n"
                + "this, and uploads the whole room itself)."),
        OptionSpec(
            "--upload-delete-local", .flag, section: section,
            help: "Remove each local file once its upload is verified."),
        OptionSpec(
            "--webhook", .value, "URL", section: section,
            help: "POST recording.segment, recording.done, upload.done, upload.failed\n"
                + "to URL (X-Roomtap-Signature: sha256=HMAC of the body, keyed by\n"
                + "$ROOMTAP_WEBHOOK_SECRET)."),
    ]

    /// The options given, nil without --upload (the companions then are usage errors, but
    /// --webhook, which the fleet shares, is not).
    static func parse(_ args: ParsedArguments) throws(UsageError) -> RecordUploadOptions? {
        guard let text = args.value("--upload") else {
            for name in [
                "--segment-seconds", "--upload-keep-segments", "--upload-delete-local", "--upload-segments-only",
            ]
            where args.value(name) != nil || args.flag(name) {
                throw UsageError(description: "\(name) goes with --upload s3://BUCKET/PREFIX", command: "record")
            }
            return nil
        }
        let destination: S3Location
        do { destination = try S3Location(parsing: text) } catch {
            throw UsageError(description: "--upload: \(error.description)", command: "record")
        }
        var options = RecordUploadOptions(destination: destination)
        if let seconds = args.value("--segment-seconds") {
            guard let n = Int(seconds), (1...3600).contains(n) else {
                throw UsageError(
                    description: "--segment-seconds must be a whole number from 1 to 3600, not '\(seconds)'",
                    command: "record")
            }
            options.segmentSeconds = n
        }
        options.keepSegments = args.flag("--upload-keep-segments")
        options.deleteLocal = args.flag("--upload-delete-local")
        options.segmentsOnly = args.flag("--upload-segments-only")
        if options.segmentsOnly, options.deleteLocal || options.keepSegments {
            throw UsageError(
                description: "--upload-segments-only keeps the room's files and the segments; "
                    + "it goes without --upload-delete-local and --upload-keep-segments",
                command: "record")
        }
        return options
    }
}

/// What `record` runs for --upload and --webhook: made before the room starts (credentials
/// checked then: a recorder that cannot upload says so before recording), finished after it.
struct RecordUploadRun {
    let liveUpload: LiveUpload?
    let webhook: WebhookSender?

    /// `environment`: the S3 credentials and endpoint, the webhook's secret.
    static func make(
        _ options: RecordCommand.Options, outDirectory: String, environment: [String: String]
    ) throws -> RecordUploadRun {
        let webhook = try UploadCommand.webhookSender(options.webhook, command: "record", environment: environment)
        guard let upload = options.upload else { return RecordUploadRun(liveUpload: nil, webhook: webhook) }
        let configuration: S3Configuration
        do { configuration = try S3Configuration.fromEnvironment(environment) } catch {
            throw RuntimeError(description: "--upload: \(error.description)")
        }
        return RecordUploadRun(
            liveUpload: LiveUpload(
                options: upload, directory: outDirectory, configuration: configuration, webhook: webhook),
            webhook: webhook)
    }

    /// After the room: the final upload (with --upload), recording.done, the webhook drained
    /// (at most 10 s). The error line when the room did not go up whole.
    func finish() -> String? {
        var failure: String?
        if let liveUpload { failure = liveUpload.finish() } else { webhook?.post(event: "recording.done", body: [:]) }
        webhook?.close(timeout: 10)
        return failure
    }
}
