import Foundation
import RoomTapAll

/// `roomtap jobs --redis URL [--json] [ID]` and `roomtap cancel --redis URL ID`.
enum JobsCommand {
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let store = try FleetCLI.store(args, command: "jobs")
        guard args.positionals.count <= 1 else {
            throw UsageError(description: "give at most one job ID", command: "jobs")
        }
        var records: [JobRecord]
        if let id = args.positionals.first {
            guard let record = try FleetCLI.redis({ try store.job(id) }) else {
                throw RuntimeError(description: "no job '\(id)' in \(store.connection.url) (roomtap jobs lists them)")
            }
            records = [record]
        } else {
            records = try FleetCLI.redis({ try store.jobs() })
        }
        if args.flag("--json") {
            try console.output(JSONValue.array(records.map(\.json)).jsonText + "\n")
            return
        }
        if records.isEmpty {
            console.error("roomtap: no jobs in \(store.connection.url)\n")
            return
        }
        var rows = [["ID", "STATE", "WORKER", "EPOCH", "LISTEN", "TRACKS", "STARTED", "ENDED", "OUTPUT / ERROR"]]
        let formatter = ISO8601DateFormatter()
        for r in records {
            rows.append([
                r.id, r.displayState.rawValue, r.worker.isEmpty ? "-" : r.worker, String(r.epoch),
                r.listen.isEmpty ? "-" : r.listen, String(r.tracks), r.started.map(formatter.string(from:)) ?? "-",
                r.ended.map(formatter.string(from:)) ?? "-",
                !r.error.isEmpty
                    ? "error: " + r.error
                    : (r.outputDirectory.isEmpty ? "-" : r.outputDirectory)
                        + (r.gaps.isEmpty ? "" : " (\(r.gaps.count) gap(s))"),
            ])
        }
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        var text = ""
        for row in rows {
            text +=
                row.enumerated().map { c, cell in
                    c == row.count - 1 ? cell : cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
                }.joined(separator: "  ") + "\n"
        }
        try console.output(text)
    }

    static func cancel(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let store = try FleetCLI.store(args, command: "cancel")
        guard args.positionals.count == 1, let id = args.positionals.first else {
            throw UsageError(description: "give the job ID to cancel (roomtap jobs lists them)", command: "cancel")
        }
        guard let state = try FleetCLI.redis({ try store.cancel(id) }) else {
            throw RuntimeError(description: "no job '\(id)' in \(store.connection.url) (roomtap jobs lists them)")
        }
        switch state {
        case "cancelled": try console.output("\(id): cancelled\n")
        case "cancelling": try console.output("\(id): cancelling (its worker stops the room within a lease)\n")
        default:
            throw RuntimeError(
                description:
                    "job '\(id)' has ended already (\(state.replacingOccurrences(of: "ended:", with: ""))); nothing to cancel"
            )
        }
    }
}
