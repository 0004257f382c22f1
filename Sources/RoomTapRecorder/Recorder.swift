import Foundation
import RoomTapAll

/// The recorder as a library: what `roomtap record` does, in this process, without printing.
/// Three steps, the CLI's own:
/// 1. ``plan(arguments:context:)``: the command line parsed and the room planned (every input
///    inspected, every output checked against the inputs and the disk); nothing is created, but an
///    `s3://` input is downloaded to a private temporary directory (removed with the recorder);
/// 2. ``record()``: the room recorded (its directory made, the clock run to the end or a stop,
///    every file finalized, room.json written), its outcome returned;
/// 3. ``finish(_:)``: the uploads finished, the output directory released, the run's one failure
///    line (files that failed, an upload that did not finish) thrown.
///
/// ``run()`` takes steps 2 and 3 for a caller that only wants the outcome. Errors are typed at
/// this edge (``RecorderError``): a usage error or a failure, each one line, which the CLI prints
/// and turns into its exit status (64, 1). Warnings while the room runs go to the context's
/// console (its standard error); the context's environment is the only one read. Thread: the
/// caller's; `record` blocks it for the room's length (a signal or the control socket's `stop`
/// ends a live room). Not reusable: one room per recorder.
///
/// Public (the `RoomTap` library's recorder): ``plan(arguments:environment:)`` and ``run()``.
public final class Recorder {
    let options: RecordCommand.Options
    let plan: RecordingPlan
    private let remote: RemoteInputs?
    private var uploads: RecordUploadRun?

    /// Parses `arguments` (a `roomtap record` command line without `record`) and plans the room.
    /// `context`: the console warnings go to, the environment (API keys, `ROOMTAP_CONTROL`...),
    /// and whether a live room stops on SIGINT/SIGTERM (the process's own by default).
    package static func plan(
        arguments: [String], context: CommandContext = .standard
    ) throws(RecorderError) -> Recorder {
        guard let command = CommandTable.command(named: "record") else { preconditionFailure("no record command") }
        do {
            var options = try RecordCommand.parse(
                try Arguments.parse(arguments, for: command), environment: context.environment)
            try options.agent?.readInstructions()
            return try Recorder(options: options, context: context)
        } catch {
            throw RecorderError(error)
        }
    }

    /// Plans the room of `options` (inputs fetched when remote). The CLI's way in.
    init(options: RecordCommand.Options, context: CommandContext) throws {
        var options = options
        let remote = try RemoteInputs.fetch(&options, environment: context.environment)
        do { plan = try RecordingPlan.make(options, context: context) } catch {
            remote?.remove()
            throw remote?.translated(error) ?? error
        }
        self.remote = remote
        self.options = options
    }

    deinit { remote?.remove() }

    /// Parses `arguments` (a `roomtap record` command line without `record`) and plans the room,
    /// reading `environment` (API keys, `ROOMTAP_CONTROL`...) instead of the process's; warnings go
    /// to standard error and a live room stops on SIGINT/SIGTERM, as the CLI's does.
    public static func plan(
        arguments: [String], environment: [String: String]
    ) throws(RecorderError) -> Recorder {
        var context = CommandContext.standard
        context.environment = environment
        return try plan(arguments: arguments, context: context)
    }

    /// Records the room and finishes the run: the outcome, with the run's failure line when files
    /// failed (they are listed; the others are whole).
    public func run() throws(RecorderError) -> RecorderOutcome {
        let result: RoomRecording.Result
        do { result = try record() } catch { throw RecorderError(error) }
        var failure: String?
        do { try finish(result) } catch { failure = "\(error)" }
        return RecorderOutcome(result, failure: failure)
    }

    /// Step 2: records the room; on an error nothing the run created is left but what it says.
    func record() throws -> RoomRecording.Result {
        let uploads = try RecordUploadRun.make(
            options, outDirectory: plan.outDirectory, environment: plan.context.environment)
        self.uploads = uploads
        let recording = RoomRecording(plan: plan, liveUpload: uploads.liveUpload)
        let result: RoomRecording.Result
        do {
            result = try recording.run()
        } catch {
            recording.stopMetrics()
            recording.closeControl(finished: nil)
            recording.stopLivePage()
            plan.removeCreatedDirectories()
            throw error
        }
        recording.stopMetrics()
        recording.closeControl(
            finished: URL(fileURLWithPath: plan.roomJSONPath).standardizedFileURL.path, errors: result.errors)
        recording.stopLivePage()  // after closeControl: the page hears `stopped`
        return result
    }

    /// Step 3: the uploads finished, the directory released (room.json is final and the upload,
    /// if any, has read DIR); throws the run's one failure line.
    func finish(_ result: RoomRecording.Result) throws {
        let uploadFailure = uploads?.finish()
        plan.releaseDirectory()
        if let failure = uploadFailure { throw RuntimeError(description: failure) }
        // Files that failed (disk full): the run went on and room.json lists them; one line here.
        if let line = result.failureLine() { throw RuntimeError(description: line) }
    }
}

/// Why a ``Recorder`` could not plan or record a room: one line, as the CLI prints it.
public enum RecorderError: Error, CustomStringConvertible, Equatable {
    /// The command line is wrong (the CLI exits 64).
    case usage(String)
    /// The room could not be planned or recorded (the CLI exits 1).
    case failure(String)

    public var description: String {
        switch self {
        case .usage(let line), .failure(let line): line
        }
    }

    init(_ error: any Error) {
        self = (error as? UsageError).map { .usage($0.description) } ?? .failure("\(error)")
    }
}

/// What a recorded room left: its length, each track's file, room.json, and what went wrong.
public struct RecorderOutcome: Sendable {
    /// One track's file.
    public struct File: Sendable, Equatable {
        public let track: String
        public let path: String
        /// Samples per channel in the file (48 kHz unless `--rate`).
        public let samples: Int64
        /// 10 ms frames the file lost (a full queue, a failed writer).
        public let droppedFrames: Int
    }

    /// The room's length in samples at 48 kHz.
    public let roomSamples: Int64
    /// The tracks' files, in the summary's order.
    public let files: [File]
    /// The final room.json.
    public let roomJSONPath: String
    /// What the CLI prints as warnings after the summary.
    public let warnings: [String]
    /// The run's one failure line (files that failed, an upload that did not finish); nil when
    /// none did.
    public let failure: String?

    init(_ result: RoomRecording.Result, failure: String?) {
        roomSamples = result.roomSamples
        files = result.outcomes.map {
            File(track: $0.track.name, path: $0.path, samples: $0.samplesWritten, droppedFrames: $0.droppedFrames)
        }
        roomJSONPath = result.plan.roomJSONPath
        warnings = result.warnings
        self.failure = failure
    }
}
