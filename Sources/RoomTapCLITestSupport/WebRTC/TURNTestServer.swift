public import Foundation
import Glibc
import RoomTapTestSupport

/// A real TURN server, Debian's coturn (`turnserver`, installed by `make deps`), on 127.0.0.1 and a
/// reserved free UDP port: UDP only (no TCP, TLS or DTLS listener), long-term credentials with one
/// static user, loopback peers allowed (everything in the tests is on 127.0.0.1), its pid file, user
/// database and log (verbose: every request processed) in a scratch directory of its own. Up once it
/// answers a STUN Binding request (RFC 8489 §6, https://www.rfc-editor.org/rfc/rfc8489). Stopped by ``stop()`` or when the object
/// goes away. A test that needs one and cannot start it fails (the init throws), never skips.
///
/// Thread: any.
public final class TURNTestServer: @unchecked Sendable {
    public let port: UInt16
    public let username = "roomtap"
    /// A fresh credential per server (tests check it never reaches a log or room.json).
    public let credential = "turn-secret-" + UUID().uuidString.prefix(8)
    public let directory: URL
    private let process: Process

    /// `turn:127.0.0.1:PORT?transport=udp`.
    public var url: String { "turn:127.0.0.1:\(port)?transport=udp" }

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        let path = ["/usr/bin/turnserver", "/usr/local/bin/turnserver"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let path else {
            throw StartError(description: "turnserver is not installed: run make deps (Debian coturn)")
        }
        directory = try TestScratch.directory("turn")
        port = try freeUDPPort()
        let log = directory.appendingPathComponent("turn.log")
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [
            "-n", "-v", "--listening-ip", "127.0.0.1", "--relay-ip", "127.0.0.1", "--listening-port", String(port),
            "--lt-cred-mech", "--user", "\(username):\(credential)", "--realm", "roomtap.test",
            "--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--no-tcp", "--simple-log",
            "--log-file", log.path, "--pidfile", directory.appendingPathComponent("turn.pid").path,
            "--userdb", directory.appendingPathComponent("turndb").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let up = waitUntil(timeout: .seconds(20), every: .milliseconds(50)) { [port, process] in
            process.isRunning && Self.answersBinding(port)
        }
        guard up else {
            stop()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw StartError(
                description: "turnserver did not answer on UDP port \(port) within 20 s: \(text.suffix(400))")
        }
    }

    deinit { stop() }

    /// Stops the server. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The server's log so far (allocations and permissions are logged there).
    public var log: String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasPrefix("turn") && $0.hasSuffix(".log") }.sorted()
            .compactMap { try? String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
            .joined()
    }

    /// True when a STUN Binding request to 127.0.0.1:`port` is answered within 200 ms.
    static func answersBinding(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // Binding request, no attributes, the magic cookie, a random transaction id.
        var request: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42]
        request += (0..<12).map { _ in UInt8.random(in: 0...255) }
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, request, request.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == request.count else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 200) == 1 else { return false }
        var reply = [UInt8](repeating: 0, count: 512)
        let count = recv(fd, &reply, reply.count, 0)
        // A Binding success response (0x0101) with our transaction id.
        return count >= 20 && reply[0] == 0x01 && reply[1] == 0x01 && Array(reply[8..<20]) == Array(request[8..<20])
    }
}
