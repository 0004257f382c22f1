public import Foundation
import Glibc

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

    /// True when a server on `port` answers PING with +PONG.
    static func ping(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return false }
        let ping = Array("PING\r\n".utf8)
        guard send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count else { return false }
        var reply = [UInt8](repeating: 0, count: 16)
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let n = recv(fd, &reply, reply.count, 0)
        return n >= 5 && reply[0..<5] == Array("+PONG".utf8)[...]
    }
}
