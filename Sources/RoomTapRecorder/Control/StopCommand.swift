import Foundation
import RoomTapAll

/// `roomtap stop [--control PATH | --dir DIR]`: asks a running recorder to stop exactly as Ctrl-C
/// does (a network room drains its record delay, every WAV header is finalised, room.json is
/// written) and waits until it has: the recorder announces `stopped` once room.json is written.
/// Exit 0 then; 1 when no recorder answers, when it ended without finishing its recording, when
/// files of the recording failed (a full disk: the `stopped` event lists them), or when it has not
/// finished within ``finishTimeout``. A recorder still starting is asked again for up
/// to ``startTimeout``.
enum StopCommand {
    /// How long `stop` waits for the recorder to finish its files.
    static let finishTimeout: Duration = .seconds(30)

    /// How long `stop` keeps asking a recorder that is still starting (its room not yet running).
    static let startTimeout = ControlVerbs.startingWait

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let explicit = args.value("--control")
        let dir = args.value("--dir")
        let path = try RecorderChoice.socketPath(
            control: explicit, dir: dir, command: "stop", environment: context.environment)
        let client = try ControlVerbs.connect(path)
        let reply = try askToStop(client)
        let pid = reply["pid"]?.intValue.map { " (pid \($0))" } ?? ""
        var stopped: JSONValue?
        do {
            try client.events(within: finishTimeout) { event in
                guard event["event"]?.stringValue == "stopped" else { return true }
                stopped = event
                return false
            }
        } catch .disconnected(_) {
            throw RuntimeError(
                description: "the recorder\(pid) ended without finishing its recording (see its own output); "
                    + "its WAV files can be fixed with roomtap repair")
        } catch .timeout(_) {
            throw RuntimeError(
                description: "the recorder\(pid) did not finish within \(finishTimeout.components.seconds) s; "
                    + "it may still be writing its files (see roomtap list) or be stuck")
        } catch {
            throw RuntimeError(description: "\(error)")
        }
        let directory = stopped?["dir"]?.stringValue ?? reply["dir"]?.stringValue ?? path
        let roomJSON = stopped?["room_json"]?.stringValue ?? "room.json"
        console.print("stopped the recorder of \(directory)\(pid); wrote \(roomJSON)")
        // The recording ended, but not whole: files cut short (a full disk) are a failure of the run.
        let errors = stopped?["errors"]?.arrayValue ?? []
        if let first = errors.first {
            let what = errors.compactMap { $0["file"]?.stringValue }.sorted()  // the order files failed in varies
            throw RuntimeError(
                description: "the recording of \(directory) ended with \(errors.count) failed file(s)"
                    + (what.isEmpty ? "" : " (\(what.joined(separator: ", ")))") + ": "
                    + (first["error"]?.stringValue ?? "?") + "; see errors in \(roomJSON)")
        }
    }

    /// Sends `stop`; a recorder still starting answers `starting`, and is asked again every 50 ms
    /// for up to ``startTimeout``.
    private static func askToStop(_ client: ControlClient) throws -> JSONValue {
        do { return try client.request(.stop, whileStarting: startTimeout) } catch {
            throw RecorderChoice.failure(error, of: client)
        }
    }
}
