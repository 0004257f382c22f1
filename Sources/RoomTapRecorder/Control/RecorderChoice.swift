import Foundation
import RoomTapAll

/// Which running recorder a command talks to: `--control PATH`, `--dir DIR` (the recorder whose
/// output directory is DIR), `$ROOMTAP_CONTROL`, else the only recorder in the per-user runtime
/// directory (docs/CLI.md, "Which recorder").
///
/// Thread: the command's; blocks while asking the recorders who they are (2 s each at most).
enum RecorderChoice {
    /// The socket to talk to. Exit 64 for --control with --dir; exit 1 when no recorder runs, when
    /// none records to DIR, or when several run and neither option says which.
    static func socketPath(
        control: String?, dir: String?, command: String, environment: [String: String]
    ) throws -> String {
        if let dir {
            guard control == nil else {
                throw UsageError(description: "give --control PATH or --dir DIR, not both", command: command)
            }
            return try recorder(recordingTo: dir, environment: environment).socket
        }
        if let configured = ControlSocketPath.configured(explicit: control, environment: environment) {
            return configured
        }
        let scan = RecorderDirectory.scan(environment: environment)
        let recorders = scan.recorders
        switch recorders.count {
        case 0: throw notAnswering(scan) ?? noRecorder(environment)
        case 1: return recorders[0].socket
        default:
            throw RuntimeError(
                description: "\(recorders.count) recorders are running: \(describe(recorders)); "
                    + "say which with --dir DIR or --control PATH (see roomtap list)")
        }
    }

    /// The recorder whose output directory is `dir` (the same directory: device and inode, not the
    /// spelling), among those in the runtime directory and the one at $ROOMTAP_CONTROL.
    static func recorder(recordingTo dir: String, environment: [String: String]) throws -> RunningRecorder {
        let scan = RecorderDirectory.scan(environment: environment)
        var recorders = scan.recorders
        if let configured = ControlSocketPath.configured(explicit: nil, environment: environment),
            !recorders.contains(where: { $0.socket == configured }),
            let named = try? RecorderDirectory.hello(at: configured)
        {
            recorders.append(named)
        }
        guard let wanted = identity(of: dir) else {
            throw RuntimeError(
                description: "no recorder is recording to \(dir) (no such directory); check the path, or see "
                    + "roomtap list")
        }
        if let match = recorders.first(where: { identity(of: $0.directory) == wanted }) { return match }
        if recorders.isEmpty { throw notAnswering(scan) ?? noRecorder(environment) }
        throw RuntimeError(
            description: "no recorder is recording to \(dir) (running: \(describe(recorders))); check the path, "
                + "or see roomtap list")
    }

    /// "no recorder is running ...", exit 1.
    static func noRecorder(_ environment: [String: String]) -> RuntimeError {
        RuntimeError(
            description:
                "no recorder is running (none in \(ControlSocketPath.defaultDirectory(environment: environment))"
                + "); start one with roomtap record, or give --control PATH")
    }

    /// A recorder whose socket accepts but does not answer (stopped with SIGSTOP, or stuck): it is
    /// not "no recorder", so say so, with its pid. Nil when every socket answered.
    static func notAnswering(_ scan: RecorderDirectory.Scan) -> RuntimeError? {
        guard let first = scan.unanswered.first else { return nil }
        let name = (first.socket as NSString).lastPathComponent
        return notAnswering(
            socket: first.socket, pid: ControlSocketPath.pid(inSocketName: name), reason: first.reason)
    }

    /// The one line for a recorder at `socket` that accepted but did not answer. `pending`: the
    /// command that was sent and sits in its socket, carried out if it resumes (nil: none sent).
    static func notAnswering(socket: String, pid: Int32?, reason: String, pending: String? = nil) -> RuntimeError {
        let who = pid.map { "the recorder pid \($0) (\(socket))" } ?? "the recorder at \(socket)"
        let resume = pid.map { " (kill -CONT \($0))" } ?? ""
        let queued = pending.map { "; \"\($0)\" was sent and is carried out if it resumes" } ?? ""
        return RuntimeError(
            description: "\(who) does not answer (\(reason))\(queued); it may be stopped (SIGSTOP, Ctrl-Z) or "
                + "stuck: resume it\(resume), or see roomtap list")
    }

    /// A request's failure as one line: a recorder that does not answer in time is said to be so,
    /// with its pid (the connection's peer), as when it is found by a scan, and that the request
    /// waits in its socket (a recorder stopped with SIGSTOP reads it when it resumes).
    static func failure(_ error: ControlClientError, of client: ControlClient) -> RuntimeError {
        guard case .timeout(let command) = error else { return RuntimeError(description: "\(error)") }
        return notAnswering(
            socket: client.path, pid: client.peerPID, reason: "no reply to \"\(command)\" in time",
            pending: ["hello", "ping", "status", "tracks", "watch"].contains(command) ? nil : command)
    }

    /// "DIR (pid N)", joined with commas.
    static func describe(_ recorders: [RunningRecorder]) -> String {
        recorders.map { "\($0.directory.isEmpty ? $0.socket : $0.directory) (pid \($0.pid))" }
            .joined(separator: ", ")
    }

    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    private static func identity(of path: String) -> Identity? {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
