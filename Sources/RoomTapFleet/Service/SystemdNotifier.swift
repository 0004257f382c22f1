public import Foundation
import Glibc

/// sd_notify(3) without libsystemd: one datagram per message to the AF_UNIX socket named by
/// `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace). Nothing happens when the
/// variable is unset (not started by systemd). `READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=...`.
///
/// Thread: any (each message is one sendto on a socket opened at init).
package final class SystemdNotifier: Sendable {
    private let fd: Int32
    private let address: [UInt8]
    /// Half of `$WATCHDOG_USEC` (how often WATCHDOG=1 must go out), or nil without a watchdog.
    public let watchdogInterval: Double?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0 {
            watchdogInterval = usec / 2_000_000
        } else {
            watchdogInterval = nil
        }
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108,
            path.hasPrefix("/") || path.hasPrefix("@")
        else {
            fd = -1
            address = []
            return
        }
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        address = bytes
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// True when a notify socket was given.
    public var isActive: Bool { fd >= 0 }

    /// Sends `message` (e.g. "READY=1\nSTATUS=taking work"); false when it could not be sent.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard fd >= 0 else { return false }
        var sun = sockaddr_un()
        sun.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun.sun_path) { raw in
            for (i, b) in address.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &sun) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), address, length)
            }
        }
        return sent == bytes.count
    }
}
