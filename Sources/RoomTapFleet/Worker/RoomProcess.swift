import CLinuxNet
import Foundation
import Glibc

/// One room's `roomtap record` child: started with its output to a log file, ended by a signal or
/// by itself. It dies with the worker's main thread (PR_SET_PDEATHSIG, SIGTERM: it finalises its
/// files), so a dead worker never leaves a room recording without a lease.
///
/// Thread: confined to the worker's main thread (the thread that started it must outlive it).
final class RoomProcess {
    let pid: pid_t
    let logPath: String
    private(set) var exitStatus: Int32?
    private var logOffset: UInt64 = 0
    private var pendingLine = ""
    private(set) var listenAddresses: [String] = []
    private(set) var lastError = ""

    /// Starts `executable arguments...`; throws a one-line reason.
    init(executable: String, arguments: [String], environment: [String: String], logPath: String) throws {
        let fd = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw FleetError("cannot create \(logPath): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let argv = [executable] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvp = envp.map { strdup($0) } + [nil]
        defer {
            for p in cArgv { free(p) }
            for p in cEnvp { free(p) }
        }
        let child = roomtap_spawn(executable, cArgv, cEnvp, fd, SIGTERM)
        guard child > 0 else { throw FleetError("cannot start \(executable): \(String(cString: strerror(errno)))") }
        pid = child
        self.logPath = logPath
    }

    /// Sends `signal` (nothing once it has exited).
    func signal(_ signal: Int32) {
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Reaps the child when it has exited: its exit status (128 + N when killed by signal N).
    @discardableResult
    func poll() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        guard r == pid else { return nil }
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        scanLog()
        return code
    }

    /// Reads what the child printed since the last scan: `roomtap: listening on HOST:PORT` lines and
    /// the last `roomtap: error:` line.
    func scanLog() {
        guard let handle = FileHandle(forReadingAtPath: logPath) else { return }
        defer { try? handle.close() }
        try? handle.seek(toOffset: logOffset)
        guard let data = try? handle.readToEnd(), !data.isEmpty else { return }
        logOffset += UInt64(data.count)
        let text = pendingLine + String(decoding: data, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        pendingLine = String(lines.removeLast())
        for line in lines {
            if line.hasPrefix("roomtap: listening on ") {
                listenAddresses.append(String(line.dropFirst("roomtap: listening on ".count)))
            } else if line.hasPrefix("roomtap: error: ") {
                lastError = String(line.dropFirst("roomtap: error: ".count))
            } else if line.hasPrefix("roomtap: "), lastError.isEmpty, line.contains("error") {
                lastError = String(line.dropFirst("roomtap: ".count))
            }
        }
    }
}

/// A fleet failure, one line for the user.
public struct FleetError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
