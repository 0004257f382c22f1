public import Foundation
import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One of the WebRTC test peers (`Tests/Interop/webrtc/*.py`, on aiortc) running under the
/// project's `.venv` Python: started by `init`, which waits (bounded) for the first line it
/// prints (`published <feed>`, `joined <id>`, `listening <port>`), and stopped by ``stop()``.
/// Everything it prints to stdout after that line and to stderr is kept for the test to read.
///
/// Thread: any; the output is collected on reader threads of its own.
public final class PythonPeer: @unchecked Sendable {
    /// The scripts this starts.
    public enum Script: String, Sendable {
        case janusPublisher = "janus_publisher.py"
        case janusSubscriber = "janus_subscriber_check.py"
        case whepServer = "whep_server.py"
        case whepClient = "whep_client_check.py"
        case soraStandin = "sora_standin.py"
        case soraPublisher = "sora_publisher.py"
    }

    /// Why the peer could not start, with what it printed.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The first line the peer printed (without its newline).
    public let firstLine: String
    private let process: Process
    private let input: FileHandle
    private let output = Locked((stdout: Data(), stderr: Data()))
    private let readers: [BackgroundReader]
    private let stopped = Locked(false)

    /// Starts `script` with `arguments`; waits at most `timeout` for its first stdout line.
    /// Throws with the script's stderr tail when it exits or stays silent.
    public init(_ script: Script, arguments: [String], timeout: Duration = .seconds(60)) throws {
        let python = WebRTCPeers.python
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw StartError(description: "no \(python.path): run make venv (it installs aiortc there)")
        }
        process = Process()
        process.executableURL = python
        process.arguments = [WebRTCPeers.scripts.appendingPathComponent(script.rawValue).path] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let stdinPipe = ChildProcesses.pipe()
        let stdoutPipe = ChildProcesses.pipe()
        let stderrPipe = ChildProcesses.pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        input = stdinPipe.fileHandleForWriting
        try ChildProcesses.run(process)
        try? stdinPipe.fileHandleForReading.close()
        try? stdoutPipe.fileHandleForWriting.close()
        try? stderrPipe.fileHandleForWriting.close()
        let output = output
        readers = [
            BackgroundReader(stdoutPipe.fileHandleForReading) { chunk in output.withLock { $0.stdout.append(chunk) } },
            BackgroundReader(stderrPipe.fileHandleForReading) { chunk in output.withLock { $0.stderr.append(chunk) } },
        ]
        var line: String?
        let process = process
        _ = waitUntil(timeout: timeout, every: .milliseconds(10)) {
            line = output.withLock { Self.firstLine(of: $0.stdout) }
            return line != nil || !process.isRunning
        }
        if line == nil { line = output.withLock { Self.firstLine(of: $0.stdout) } }
        guard let line else {
            let why =
                process.isRunning ? "printed nothing within \(timeout)" : "exited (status \(process.terminationStatus))"
            firstLine = ""
            stop()
            throw StartError(description: "\(script.rawValue) \(why): \(stderrTail())")
        }
        firstLine = line
    }

    deinit { stop() }

    /// Everything the peer printed to stdout so far (the first line included).
    public var stdout: String { output.withLock { String(decoding: $0.stdout, as: UTF8.self) } }

    /// Everything the peer printed to stderr so far.
    public var stderr: String { output.withLock { String(decoding: $0.stderr, as: UTF8.self) } }

    /// The last `lines` lines of stderr without the JSON logs of Janus messages (for a failure's message).
    public func stderrTail(_ lines: Int = 8) -> String {
        stderr.split(separator: "\n").filter { !$0.hasPrefix("janus > ") && !$0.hasPrefix("janus < ") }
            .suffix(lines).joined(separator: " | ")
    }

    /// Waits at most `timeout` for a stdout line starting with `prefix`; returns it, or nil.
    public func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(30)) -> String? {
        var found: String?
        _ = waitUntil(timeout: timeout, every: .milliseconds(10)) {
            found = stdout.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
            return found != nil
        }
        return found
    }

    /// Waits at most `timeout` for the peer to exit by itself; returns its status, or nil.
    public func waitForExit(timeout: Duration = .seconds(60)) -> Int32? {
        let process = process
        guard waitUntil(timeout: timeout, every: .milliseconds(10), { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        for reader in readers { reader.wait() }
        return process.terminationStatus
    }

    /// Closes its stdin and sends SIGTERM (the scripts then leave cleanly: unpublish, leave,
    /// destroy the session; close their PeerConnections); SIGKILL when it has not exited within
    /// 15 s. Returns its exit status. Idempotent.
    @discardableResult
    public func stop() -> Int32 {
        let first = stopped.withLock { wasStopped -> Bool in
            defer { wasStopped = true }
            return !wasStopped
        }
        if first {
            try? input.close()
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            if waitForExit(timeout: .seconds(15)) == nil {
                kill(process.processIdentifier, SIGKILL)
            }
        }
        process.waitUntilExit()
        for reader in readers { reader.wait() }
        return process.terminationStatus
    }

    private static func firstLine(of data: Data) -> String? {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        return String(decoding: data[data.startIndex..<newline], as: UTF8.self)
    }
}
