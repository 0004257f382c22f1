import Foundation
import RoomTapAll

/// `roomtap list [--json]`: the recorders running for this user (the sockets of the per-user
/// runtime directory that answer), one line each: output directory, pid, tracks, uptime, socket.
/// Stale sockets of recorders killed with kill -9 are removed on the way. Nothing running: nothing
/// on stdout (`[]` with --json), a note on stderr, exit 0.
enum ListCommand {
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let json = args.flag("--json")
        let environment = context.environment
        let scan = RecorderDirectory.scan(environment: environment)
        for (socket, reason) in scan.unanswered {
            console.printWarning("\(socket) did not answer: \(reason)")
        }
        if json {
            console.print(JSONValue.array(scan.recorders.map(\.json)).jsonText)
        } else {
            for recorder in scan.recorders { console.print(line(recorder)) }
        }
        if scan.recorders.isEmpty {
            let directory = ControlSocketPath.defaultDirectory(environment: environment)
            console.error("roomtap: no recorder is running (none in \(directory))\n")
        }
    }

    /// `DIR  pid N  T track(s)  up H:MM:SS  SOCKET`, and `  starting` or `  stopping` then.
    static func line(_ recorder: RunningRecorder) -> String {
        let total = Int(recorder.uptime)
        let uptime = String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
        let tracks = recorder.tracks == 1 ? "1 track" : "\(recorder.tracks) tracks"
        return "\(recorder.directory)  pid \(recorder.pid)  \(tracks)  up \(uptime)  \(recorder.socket)"
            + (recorder.state == "recording" ? "" : "  \(recorder.state)")
    }
}
