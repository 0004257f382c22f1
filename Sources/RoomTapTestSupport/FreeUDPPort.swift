import Foundation
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#endif

/// Why no free port could be had.
public struct FreePortError: Error, CustomStringConvertible {
    public let description: String
}

/// A UDP port on 127.0.0.1 that nothing holds and nothing else will be given while this test
/// process lives: see `ReservedPorts`.
public func freeUDPPort() throws -> UInt16 {
    guard let port = ReservedPorts.shared.reserve(SOCK_DGRAM) else {
        throw FreePortError(description: "no free UDP port on 127.0.0.1 outside the kernel's ephemeral range")
    }
    return port
}

/// Ports handed to tests that must tell a program its port before the program binds it (a
/// recorder started from ffmpeg's SDP, socat, a `--listen` address).
///
/// A port the kernel gives out for port 0 is only free until the next socket anyone binds to port
/// 0: a test that closes it and then starts a recorder races every other socket on the machine for
/// it (CI saw "the port is already in use"). So the ports come from *outside* the kernel's
/// ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`; ``candidates(ephemeral:)``), which
/// the kernel never hands out on its own, and each one is checked free by binding it, then
/// claimed with an `flock` on a file in
/// `/tmp/roomtap-test-ports/` held until the process exits, so two `make test` runs side by side
/// never take the same one. A port is handed out once per process.
///
/// Thread: any; the claim is under a lock.
package final class ReservedPorts: Sendable {
    static let shared = ReservedPorts()

    private let state = Locked<(next: Int, handedOut: Set<UInt16>)>((0, []))
    /// Where ports are taken from; nil: the kernel's port 0 (see ``candidates(ephemeral:)``).
    private let range: Range<Int>?
    private let lockDirectory = "/tmp/roomtap-test-ports"

    private init() {
        let bounds =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) } }
        let ephemeral = bounds.flatMap { $0.count == 2 && $0[0] <= $0[1] ? $0[0]...$0[1] : nil } ?? 32768...60999
        range = Self.candidates(ephemeral: ephemeral)
        let start = range.map { (Int(getpid()) * 7919) % $0.count } ?? 0
        state.withLock { $0.next = start }
        mkdir(lockDirectory, 0o777)
        chmod(lockDirectory, 0o1777)
    }

    /// The ports to hand out given the kernel's ephemeral range: 20000 up to it (Debian's default
    /// gives 20000-32767), else the ports above it, else nil when neither side leaves 1000 ports
    /// (then a port comes from the kernel's port 0, as before: racy, but working).
    package static func candidates(ephemeral: ClosedRange<Int>) -> Range<Int>? {
        if ephemeral.lowerBound - 20_000 >= 1_000 { return 20_000..<ephemeral.lowerBound }
        if 65_536 - (ephemeral.upperBound + 1) >= 1_000 { return (ephemeral.upperBound + 1)..<65_536 }
        return nil
    }

    /// A port free for `kind` (SOCK_DGRAM or SOCK_STREAM), claimed for this process; nil when the
    /// whole range is taken.
    func reserve(_ kind: __socket_type) -> UInt16? {
        guard let range else { return kernelPort(kind) }
        return state.withLock { state in
            for _ in 0..<range.count {
                let port = UInt16(range.lowerBound + state.next)
                state.next = (state.next + 1) % range.count
                guard !state.handedOut.contains(port), isFree(port, kind), claim(port) else { continue }
                state.handedOut.insert(port)
                return port
            }
            return nil
        }
    }

    /// A port the kernel gives for port 0, read back and closed (no range to take one from).
    private func kernelPort(_ kind: __socket_type) -> UInt16? {
        let fd = socket(AF_INET, Int32(kind.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        return bound ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// Whether a socket of `kind` can bind 127.0.0.1:`port` now (SO_REUSEADDR for TCP, so a port
    /// in TIME_WAIT from an earlier run counts as free, as it does for the program told it).
    private func isFree(_ port: UInt16, _ kind: __socket_type) -> Bool {
        let fd = socket(AF_INET, Int32(kind.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if kind == SOCK_STREAM {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Takes the port's lock file for the rest of the process (its descriptor is never closed;
    /// the kernel drops the lock when the process exits, however it exits).
    private func claim(_ port: UInt16) -> Bool {
        let fd = open("\(lockDirectory)/\(port)", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard fd >= 0 else { return false }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        close(fd)
        return false
    }
}

/// A TCP port on 127.0.0.1 that nothing holds and nothing else will be given while this test
/// process lives (for servers that must be told their port: redis-server, weed): see `ReservedPorts`.
public func freeTCPPort() throws -> UInt16 {
    guard let port = ReservedPorts.shared.reserve(SOCK_STREAM) else {
        throw FreePortError(description: "no free TCP port on 127.0.0.1 outside the kernel's ephemeral range")
    }
    return port
}
