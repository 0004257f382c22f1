public import Foundation
import Glibc
import RoomTapFleet
import RoomTapTestSupport

/// A real `redis-server` (Debian's, installed by `make deps`) on 127.0.0.1 and a reserved free
/// port, without persistence, in a scratch directory of its own; stopped by ``stop()`` or when the
/// object goes away. A test that needs one and cannot start it fails (the init throws).
///
/// Thread: any.
public final class RedisTestServer: @unchecked Sendable {
    public let port: UInt16
    public let directory: URL
    private let process: Process

    /// `redis://127.0.0.1:PORT`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        let path = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let path else {
            throw StartError(description: "redis-server is not installed: run make deps (Debian redis-server)")
        }
        directory = try TestScratch.directory("redis")
        port = try freeTCPPort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path,
            "--logfile", directory.appendingPathComponent("redis.log").path, "--daemonize", "no",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let up = waitUntil(timeout: .seconds(20), every: .milliseconds(20)) { [port] in Self.ping(port) }
        guard up else {
            process.terminate()
            let log = (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
            throw StartError(description: "redis-server did not answer on port \(port) within 20 s: \(log.suffix(400))")
        }
    }

    deinit { stop() }

    /// Stops the server (SIGKILL: nothing to save). Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Runs `redis-cli -p PORT args...` and returns its output (for tests that look inside).
    public func cli(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        p.arguments = ["-p", String(port)] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// True when a server on `port` answers PING with PONG (through the product's own client).
    static func ping(_ port: UInt16) -> Bool {
        guard let url = try? RedisURL("redis://127.0.0.1:\(port)") else { return false }
        return (try? RedisConnection(url, timeout: 1).command(["PING"]))?.text == "PONG"
    }
}
