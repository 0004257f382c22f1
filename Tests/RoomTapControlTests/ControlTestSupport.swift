import Foundation
import RoomTapControl
import Synchronization

/// A fresh directory with a short path (`/tmp/rtc-XXXXXX`: socket paths are limited to 107 bytes),
/// removed with its contents when released.
final class ShortTemporaryDirectory: Sendable {
    let path: String

    init() {
        var template = Array("/tmp/rtc-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// The handler the tests serve with: a test double of the recorder's commands.
/// `ping` → {"pong":true}; `echo` → its parameters; `watch` subscribes; `big` {"bytes"} → a string
/// of that many bytes; `volume` {"track","volume"} knows one track, "alice"; anything else is
/// unknown.
final class TestHandler: ControlHandler {
    let handled = Atomic<Int>(0)

    func handle(_ request: ControlRequest) -> ControlResponse {
        handled.add(1, ordering: .relaxed)
        switch request.command {
        case "ping": return .ok(["pong": true])
        case "echo": return .ok(.object(request.parameters))
        case "watch": return .watch(["watching": true])
        case "big": return .ok(.string(String(repeating: "b", count: request.parameters["bytes"]?.intValue ?? 0)))
        case "volume":
            do throws(ControlFailure) {
                let track = try request.string("track")
                let volume = try request.volume()
                guard track == "alice" else { return .failure(.unknownTrack, "no track named \"\(track)\"") }
                return .ok(["track": .string(track), "volume": JSONValue(volume)])
            } catch {
                return .failure(error)
            }
        default: return .unknownCommand(request)
        }
    }
}

/// A plain blocking Unix socket, for speaking the protocol byte for byte.
final class RawConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init?(path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes all of `bytes` (blocking). False when the connection failed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// The next line (without its newline), or nil on end of stream or after `timeout` seconds.
    func readLine(timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { return nil }
            buffer += chunk[0..<n]
        }
    }

    /// The next line that is not an event (a reply), skipping events.
    func readReply(timeout: Double = 5) -> String? {
        while let line = readLine(timeout: timeout) {
            if !line.hasPrefix(#"{"event""#) { return line }
        }
        return nil
    }

    /// True when the server closed the connection within `timeout` seconds (pending lines are
    /// discarded).
    func closedByPeer(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            if recv(fd, &chunk, chunk.count, 0) <= 0 { return true }
        }
        return false
    }
}

/// Runs `body` on a new thread; `wait()` blocks until it has finished (false on timeout).
final class BackgroundWork: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread {
            body()
            done.signal()
        }.start()
    }

    func wait(timeout: Double = 20) -> Bool { done.wait(timeout: .now() + timeout) == .success }
}

/// The file mode bits (permissions and type) of `path`, not following a symbolic link.
func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode : nil
}

/// A Unix stream socket bound to `path` (not listening): its descriptor, or -1 when the bind
/// failed. Tests use it for the socket files a crashed recorder leaves, or a listener that never
/// answers.
func boundUnixSocket(at path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0 else {
        close(fd)
        return -1
    }
    return fd
}
