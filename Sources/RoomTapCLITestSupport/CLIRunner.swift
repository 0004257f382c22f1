public import Foundation
import RoomTapSync
import RoomTapTestSupport

/// Runs the real `roomtap` executable built next to the tests and captures what it printed.
///
/// The binary is found beside the test bundle (`.build/<config>/roomtap`), or at `$ROOMTAP_BIN`.
public enum CLIRunner {
    /// What one run left behind.
    public struct Outcome: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// Ends the stderr of a run whose output pipes another process still held open 10 s after
        /// it exited (a descriptor leaked into that process).
        public static let outputStillOpen = "CLIRunner: output still open 10 s after the exit\n"
        /// The stderr lines, without the final empty one.
        public var stderrLines: [String] {
            stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        }
    }

    /// The roomtap executable under test.
    public static var executable: URL { executable(named: "roomtap") }

    /// An executable product of this package, built beside the tests (`$ROOMTAP_BIN` overrides
    /// the path of `roomtap`).
    public static func executable(named name: String) -> URL {
        if name == "roomtap", let path = ProcessInfo.processInfo.environment["ROOMTAP_BIN"] {
            return URL(fileURLWithPath: path)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !directory.path.isEmpty && directory.path != "/" {
            let candidate = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/\(name)")
    }

    /// Runs `roomtap arguments...` in `directory` and waits for it (at most `timeout` seconds,
    /// after which it is killed and the outcome has status -9).
    public static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], timeout: Double = 120,
        executable: URL = CLIRunner.executable
    ) throws -> Outcome {
        try start(arguments, in: directory, environment: environment, executable: executable).wait(timeout: timeout)
    }

    /// A `roomtap` (or other) process started by ``start(_:in:environment:executable:)``, still
    /// running: its pid, signals, and `wait` for its outcome.
    public final class Running: @unchecked Sendable {
        private let process: Process
        private let collected: Collected
        private let readers: DispatchGroup

        fileprivate init(process: Process, collected: Collected, readers: DispatchGroup) {
            self.process = process
            self.collected = collected
            self.readers = readers
        }

        /// The process id.
        public var pid: Int32 { process.processIdentifier }
        /// True until it exits.
        public var isRunning: Bool { process.isRunning }

        /// What it has printed on standard output so far (all of it once it has exited). Any thread.
        public var stdoutSoFar: String { collected.string(isOut: true) }
        /// What the program wrote to stderr so far.
        public var stderrSoFar: String { collected.string(isOut: false) }

        /// Sends `signal` (SIGINT, SIGTERM, ...).
        public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits for it to exit (killing it after `timeout` seconds: status -9) and returns what it
        /// printed. Its output is read to end-of-file; should another process still hold the pipe
        /// 10 s after the exit (a leaked descriptor: see ``ChildProcesses``), the outcome has what
        /// was read so far and its stderr ends with ``Outcome/outputStillOpen``.
        public func wait(timeout: Double = 120) -> Outcome {
            _ = waitUntil(timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(10)) { !process.isRunning }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let complete = readers.wait(timeout: .now() + 10) == .success
            return Outcome(
                status: process.terminationReason == .uncaughtSignal
                    ? -process.terminationStatus : process.terminationStatus,
                stdout: collected.string(isOut: true),
                stderr: collected.string(isOut: false) + (complete ? "" : Outcome.outputStillOpen))
        }
    }

    /// Starts `roomtap arguments...` (or `executable`) in `directory` and returns at once. Its
    /// standard input is `standardInput` (a pipe the test writes, made by
    /// ``ChildProcesses/pipe()``), else /dev/null. Its output pipes are close-on-exec and it is
    /// spawned by ``ChildProcesses/run(_:)``, so no other child can hold them open.
    public static func start(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        executable: URL = CLIRunner.executable, standardInput: Pipe? = nil
    ) throws -> Running {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        // Every recorder a test starts gets a control socket of its own unless the test names one,
        // so tests running side by side never find "another recorder" at the default path.
        env["ROOMTAP_CONTROL"] = uniqueControlPath()
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = ChildProcesses.pipe()
        let err = ChildProcesses.pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = standardInput ?? FileHandle.nullDevice
        try ChildProcesses.run(process)
        let collected = Collected()
        let group = DispatchGroup()
        for (pipe, isOut) in [(out, true), (err, false)] {
            group.enter()
            // A thread of its own, not a dispatch queue's: many children running side by side
            // must not exhaust a pool with readers blocked in read(2).
            RoomThread.start(isOut ? "roomtap.t.stdout" : "roomtap.t.stderr") {
                // Chunk by chunk, so a test can read what a running process printed so far.
                while true {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    collected.append(chunk, isOut: isOut)
                }
                group.leave()
            }
        }
        return Running(process: process, collected: collected, readers: group)
    }

    fileprivate final class Collected: @unchecked Sendable {
        private let output = Locked((out: Data(), err: Data()))
        func append(_ data: Data, isOut: Bool) {
            output.withLock { if isOut { $0.out.append(data) } else { $0.err.append(data) } }
        }
        func string(isOut: Bool) -> String {
            output.withLock { String(decoding: isOut ? $0.out : $0.err, as: UTF8.self) }
        }
    }
}

private let controlCounter = Locked(0)

/// A fresh control socket path in a directory of its own (short: Unix socket paths are limited).
public func uniqueControlPath() -> String {
    let n = controlCounter.withLock { c -> Int in
        c += 1
        return c
    }
    return "\(TestScratch.root)/c\(n)/control.sock"
}
