import Foundation
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#endif

/// Blocking IPv4 loopback TCP for the test servers. Any thread.
package enum TestTCP {
    /// Why a test server could not start.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// A listening socket on 127.0.0.1:`port` (0: a port the kernel picks; see ``boundPort(_:)``).
    package static func listen(port: UInt16) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "cannot listen on 127.0.0.1:\(port): errno \(code)")
        }
        return fd
    }

    /// A TCP port on 127.0.0.1 for a helper program that must be told its port (socat): one of
    /// `ReservedPorts`, which no other socket will be given while this process lives.
    package static func freePort() throws(Failure) -> UInt16 {
        guard let port = ReservedPorts.shared.reserve(SOCK_STREAM) else {
            throw Failure(description: "no free TCP port on 127.0.0.1 outside the kernel's ephemeral range")
        }
        return port
    }

    /// The port `fd` is bound to (read back with getsockname: a server given port 0 got it from
    /// the kernel, so tests running side by side never share one), or 0.
    package static func boundPort(_ fd: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return status == 0 ? UInt16(bigEndian: address.sin_port) : 0
    }

    /// A connected socket to 127.0.0.1:`port`, or -1.
    package static func connect(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    /// Accepts one connection; -1 once the listener was shut down.
    package static func accept(_ listener: Int32) -> Int32 {
        while true {
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // never inherited by a child a test starts
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            if errno != EINTR { return -1 }
        }
    }

    /// Writes all of `bytes`; false when the connection failed.
    @discardableResult
    package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Reads what is there (blocking); empty at the end of the stream or on an error.
    package static func receive(_ fd: Int32, max: Int = 64 << 10) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
            if n > 0 { return Array(buffer[..<n]) }
            if n < 0 && errno == EINTR { continue }
            return []
        }
    }

    /// The index of the first CR LF CR LF in `bytes`.
    /// Reads from `fd` until an HTTP head (through its blank line) has arrived: the head's text and
    /// the bytes that came after it. Nil (and `fd` closed) when the peer ends first or the head
    /// passes `limit` bytes.
    package static func readHead(_ fd: Int32, limit: Int) -> (head: String, rest: [UInt8])? {
        var buffer: [UInt8] = []
        while true {
            if let end = headEnd(buffer) {
                return (String(decoding: buffer[..<end], as: UTF8.self), Array(buffer[(end + 4)...]))
            }
            let chunk = receive(fd)
            if chunk.isEmpty || buffer.count > limit {
                close(fd)
                return nil
            }
            buffer += chunk
        }
    }

    package static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// An HTTP/1.1 request read whole (head, then `Content-Length` bytes of body); header names in
    /// lower case. Nil when the peer ends first (`fd` then closed by ``readHead(_:limit:)`` or left
    /// to the caller).
    package static func readRequest(_ fd: Int32, limit: Int = 64 << 10)
        -> (method: String, path: String, headers: [String: String], body: [UInt8])?
    {
        guard let (head, rest) = readHead(fd, limit: limit) else { return nil }
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ").map(String.init) ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = rest
        while body.count < length {
            let chunk = receive(fd)
            if chunk.isEmpty { return nil }
            body += chunk
        }
        return (
            requestLine.first ?? "", requestLine.count > 1 ? requestLine[1] : "", headers, Array(body.prefix(length))
        )
    }

    /// Starts a detached thread.
    package static func thread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        RoomThread.start(name, body)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A TCP port on 127.0.0.1 where nothing listens, held for the test: a socket bound to a port the
/// kernel picks and never listening, so connecting is refused and no other test can take the port
/// meanwhile. Closed on deinit.
public final class RefusingTCPPort: Sendable {
    /// The port.
    public let port: UInt16
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestTCP.Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            throw TestTCP.Failure(description: "bind: errno \(errno)")
        }
        self.fd = fd
        port = TestTCP.boundPort(fd)
    }

    deinit { close(fd) }
}
